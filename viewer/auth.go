package viewer

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strconv"
	"sync"
	"time"
)

// Defaults of Config.
const (
	// DefaultCodeTTL is how long a login code from `memnode viewer` stays valid.
	DefaultCodeTTL = 2 * time.Minute
	// DefaultSessionTTL is how long a browser session lasts without use.
	DefaultSessionTTL = 7 * 24 * time.Hour
	// maxCodes bounds the codes waiting to be used (each `memnode viewer` makes one).
	maxCodes = 64
	// maxSessions bounds live sessions; the least recently used goes first.
	maxSessions = 64
)

// CSRFHeader is the request header that must repeat the session's CSRF token on every
// state-changing browser request.
const CSRFHeader = "X-CSRF-Token"

// Errors of Redeem.
var (
	// ErrBadCode means the code is unknown, already used or expired: the user runs
	// `memnode viewer` again.
	ErrBadCode = errors.New("viewer: login code unknown, used or expired (run memnode viewer again)")
)

// Config configures Auth.
type Config struct {
	CodeTTL    time.Duration
	SessionTTL time.Duration
	// Now is the clock (tests inject one).
	Now func() time.Time
}

// Auth holds the login codes and the browser sessions of one node, in memory only: a
// restart of the node logs every browser out. Its methods are safe for concurrent use.
type Auth struct {
	cfg      Config
	mu       sync.Mutex
	codes    map[string]time.Time // code → expiry
	sessions map[string]*session  // session ID → session
}

type session struct {
	csrf     string
	lastUsed time.Time
}

// NewAuth returns an Auth with no codes and no sessions.
func NewAuth(cfg Config) *Auth {
	if cfg.CodeTTL <= 0 {
		cfg.CodeTTL = DefaultCodeTTL
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Auth{cfg: cfg, codes: map[string]time.Time{}, sessions: map[string]*session{}}
}

// NewCode mints a single-use login code and returns it with its expiry.
func (a *Auth) NewCode() (string, time.Time) {
	code := random()
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.cfg.Now()
	a.expireLocked(now)
	for len(a.codes) >= maxCodes {
		a.dropOldestCodeLocked()
	}
	exp := now.Add(a.cfg.CodeTTL)
	a.codes[code] = exp
	return code, exp
}

// Redeem exchanges a code for a new session: it returns the session ID (the cookie's
// value) and the session's CSRF token. The code is gone afterwards, whether or not it was
// still valid.
func (a *Auth) Redeem(code string) (sessionID, csrf string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.cfg.Now()
	exp, ok := a.codes[code]
	delete(a.codes, code)
	if !ok || !now.Before(exp) {
		return "", "", ErrBadCode
	}
	a.expireLocked(now)
	for len(a.sessions) >= maxSessions {
		a.dropLeastUsedLocked()
	}
	sessionID, csrf = random(), random()
	a.sessions[sessionID] = &session{csrf: csrf, lastUsed: now}
	return sessionID, csrf, nil
}

// Check reports whether sessionID is a live session and, when mutating is true, whether
// csrf is its CSRF token. A valid check extends the session.
func (a *Auth) Check(sessionID, csrf string, mutating bool) bool {
	if sessionID == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.cfg.Now()
	s, ok := a.sessions[sessionID]
	if !ok || now.Sub(s.lastUsed) >= a.cfg.SessionTTL {
		delete(a.sessions, sessionID)
		return false
	}
	if mutating && subtle.ConstantTimeCompare([]byte(csrf), []byte(s.csrf)) != 1 {
		return false
	}
	s.lastUsed = now
	return true
}

// CSRF returns the CSRF token of a live session ("" when there is none).
func (a *Auth) CSRF(sessionID string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[sessionID]; ok {
		return s.csrf
	}
	return ""
}

// Logout ends a session.
func (a *Auth) Logout(sessionID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, sessionID)
}

// SessionCookie is the name of the session cookie of the node on port. Cookies are scoped
// by host, not port, so two nodes on one machine (two users, or tests) must not share a
// name.
func SessionCookie(port int) string { return "memnode_session_" + strconv.Itoa(port) }

// CSRFCookie is the name of the (script-readable) cookie holding the CSRF token.
func CSRFCookie(port int) string { return "memnode_csrf_" + strconv.Itoa(port) }

func (a *Auth) expireLocked(now time.Time) {
	for c, exp := range a.codes {
		if !now.Before(exp) {
			delete(a.codes, c)
		}
	}
	for id, s := range a.sessions {
		if now.Sub(s.lastUsed) >= a.cfg.SessionTTL {
			delete(a.sessions, id)
		}
	}
}

func (a *Auth) dropOldestCodeLocked() {
	var oldest string
	var at time.Time
	for c, exp := range a.codes {
		if oldest == "" || exp.Before(at) {
			oldest, at = c, exp
		}
	}
	delete(a.codes, oldest)
}

func (a *Auth) dropLeastUsedLocked() {
	var oldest string
	var at time.Time
	for id, s := range a.sessions {
		if oldest == "" || s.lastUsed.Before(at) {
			oldest, at = id, s.lastUsed
		}
	}
	delete(a.sessions, oldest)
}

// random returns 256 bits from crypto/rand, URL-safe.
func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather than return short)
	return base64.RawURLEncoding.EncodeToString(b)
}
