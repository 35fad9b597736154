package cli

import "strings"

// shortCredentials keeps what to set, e.g. "RUNPOD_API_KEY (optional)".
func shortCredentials(c string) string {
	if c == "" {
		return "none"
	}
	head, _, _ := strings.Cut(c, "(")
	head = strings.TrimSpace(head)
	if strings.Contains(strings.ToLower(c), "optional") {
		head += " (optional)"
	}
	return head
}
