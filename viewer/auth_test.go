package viewer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestCodeWorksOnceAndExpires(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	a := NewAuth(Config{Now: c.now})
	code, exp := a.NewCode()
	if !exp.Equal(c.now().Add(DefaultCodeTTL)) {
		t.Fatalf("expiry %v", exp)
	}
	id, csrf, err := a.Redeem(code)
	if err != nil || id == "" || csrf == "" || id == csrf {
		t.Fatalf("redeem: %q %q %v", id, csrf, err)
	}
	if _, _, err := a.Redeem(code); !errors.Is(err, ErrBadCode) {
		t.Fatalf("second redeem: %v, want ErrBadCode", err)
	}
	late, _ := a.NewCode()
	c.add(DefaultCodeTTL)
	if _, _, err := a.Redeem(late); !errors.Is(err, ErrBadCode) {
		t.Fatalf("expired code: %v, want ErrBadCode", err)
	}
	if _, _, err := a.Redeem(""); !errors.Is(err, ErrBadCode) {
		t.Fatalf("empty code: %v", err)
	}
}

func TestSessionNeedsItsOwnCSRFTokenToChangeState(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	a := NewAuth(Config{Now: c.now, SessionTTL: time.Hour})
	code, _ := a.NewCode()
	id, csrf, _ := a.Redeem(code)
	code2, _ := a.NewCode()
	_, csrf2, _ := a.Redeem(code2)
	for _, tc := range []struct {
		id, csrf string
		mutating bool
		want     bool
	}{
		{id, "", false, true},
		{id, csrf, true, true},
		{id, "", true, false},
		{id, csrf2, true, false},
		{id, id, true, false},
		{"nope", csrf, true, false},
		{"", "", false, false},
	} {
		if got := a.Check(tc.id, tc.csrf, tc.mutating); got != tc.want {
			t.Errorf("Check(%q, %q, %v) = %v", tc.id, tc.csrf, tc.mutating, got)
		}
	}
	// Use keeps a session alive; an hour of idleness ends it.
	c.add(59 * time.Minute)
	if !a.Check(id, "", false) {
		t.Fatal("session ended while in use")
	}
	c.add(time.Hour)
	if a.Check(id, "", false) || a.Check(id, csrf, true) {
		t.Fatal("idle session still valid")
	}
}

func TestBoundedCodesAndSessions(t *testing.T) {
	a := NewAuth(Config{})
	first, _ := a.NewCode()
	for range maxCodes {
		a.NewCode()
	}
	if _, _, err := a.Redeem(first); !errors.Is(err, ErrBadCode) {
		t.Fatalf("oldest code kept past the bound: %v", err)
	}
	for range maxSessions + 5 {
		code, _ := a.NewCode()
		if _, _, err := a.Redeem(code); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(a.sessions); n != maxSessions {
		t.Fatalf("%d sessions, want %d", n, maxSessions)
	}
}

func TestCookieNamesDifferByPort(t *testing.T) {
	if SessionCookie(38800) == SessionCookie(38801) || CSRFCookie(38800) == SessionCookie(38800) {
		t.Fatal("two nodes on one host would share a cookie")
	}
}

// TestSessionsOutliveARestart: with a Path, a new Auth (the node after a restart) knows the
// sessions of the old one, with their CSRF tokens; the file is 0600 and holds neither a
// session ID nor a CSRF token; a logout and an expiry end a session there too.
func TestSessionsOutliveARestart(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	path := filepath.Join(t.TempDir(), "state", "viewer-sessions.json")
	a := NewAuth(Config{Now: c.now, SessionTTL: time.Hour, Path: path})
	code, _ := a.NewCode()
	id, csrf, _ := a.Redeem(code)
	code2, _ := a.NewCode()
	id2, _, _ := a.Redeem(code2)
	unused, _ := a.NewCode()

	b := NewAuth(Config{Now: c.now, SessionTTL: time.Hour, Path: path})
	if !b.Check(id, "", false) || !b.Check(id, csrf, true) || b.Check(id, "wrong", true) {
		t.Fatal("the session or its CSRF token did not survive the restart")
	}
	if _, _, err := b.Redeem(unused); err == nil {
		t.Fatal("a login code survived the restart")
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("sessions file: %v %v", fi, err)
	}
	raw, _ := os.ReadFile(path)
	for _, secret := range []string{id, csrf, id2} {
		if strings.Contains(string(raw), secret) {
			t.Fatal("the sessions file holds a secret the browser holds")
		}
	}
	b.Logout(id)
	c.add(2 * time.Hour) // id2 expires
	d := NewAuth(Config{Now: c.now, SessionTTL: time.Hour, Path: path})
	if d.Check(id, "", false) || d.Check(id2, "", false) {
		t.Fatal("a logged-out or expired session came back")
	}
	// A broken file is no session, never a failure.
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if e := NewAuth(Config{Now: c.now, Path: path}); e.Check(id2, "", false) {
		t.Fatal("a session from a broken file")
	}
}
