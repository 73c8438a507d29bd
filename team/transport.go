package team

import (
	"errors"
	"fmt"
	"net"
	"net/url"
)

// ErrInsecure refuses a team cluster reached by plain http:// beyond this machine: the
// team password and every shared record would cross the network unencrypted.
var ErrInsecure = errors.New("plain http:// beyond this machine sends the team password and shared memory unencrypted: " +
	"use https:// (rqlited -http-cert/-http-key; README, \"Team memory over TLS\"), or --insecure on a network you trust")

// CheckTransport returns ErrInsecure (naming the URL) for an http:// URL whose host is not
// loopback, unless insecure.
func CheckTransport(urls []string, insecure bool) error {
	if insecure {
		return nil
	}
	for _, u := range urls {
		p, err := url.Parse(u)
		if err != nil || p.Scheme != "http" {
			continue
		}
		if h := p.Hostname(); h == "localhost" {
			continue
		} else if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			continue
		}
		return fmt.Errorf("%s: %w", p.Host, ErrInsecure)
	}
	return nil
}
