package team

import (
	"errors"
	"testing"
)

// TestCheckTransport: plain http is refused beyond loopback unless insecure; https and
// loopback pass.
func TestCheckTransport(t *testing.T) {
	for _, c := range []struct {
		urls     []string
		insecure bool
		refused  bool
	}{
		{[]string{"http://127.0.0.1:4001", "http://[::1]:4003", "http://localhost:4005"}, false, false},
		{[]string{"https://10.0.0.5:4001"}, false, false},
		{[]string{"https://10.0.0.5:4001", "http://10.0.0.6:4001"}, false, true},
		{[]string{"http://rqlite.lan:4001"}, false, true},
		{[]string{"http://127.0.0.1.evil.example:4001"}, false, true},
		{[]string{"http://10.0.0.6:4001"}, true, false},
	} {
		err := CheckTransport(c.urls, c.insecure)
		if errors.Is(err, ErrInsecure) != c.refused {
			t.Errorf("%v insecure=%v: %v, want refused %v", c.urls, c.insecure, err, c.refused)
		}
	}
}
