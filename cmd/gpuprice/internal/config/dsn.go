package config

import "net/url"

func withPassword(dsn, pw string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	user := "default"
	if u.User != nil && u.User.Username() != "" {
		user = u.User.Username()
	}
	u.User = url.UserPassword(user, pw)
	return u.String()
}
