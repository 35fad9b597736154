package query

import "testing"

// TestShortCredentials: the sources table says what to set, and whether it is optional.
func TestShortCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"":                                      "none",
		"RUNPOD_API_KEY (optional; more stock)": "RUNPOD_API_KEY (optional)",
		"AZURE_CLIENT_ID and AZURE_SECRET (a service principal)": "AZURE_CLIENT_ID and AZURE_SECRET",
	} {
		if got := ShortCredentials(in); got != want {
			t.Errorf("ShortCredentials(%q) = %q, want %q", in, got, want)
		}
	}
}
