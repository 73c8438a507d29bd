package viewer

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/memnode/memnode/internal/atomicfile"
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
	// Path, when set, is the file that keeps the sessions across restarts of the node (a
	// restart from the viewer's settings page keeps the person logged in). It holds
	// SHA-256 hashes of the session IDs and CSRF tokens only: reading it gives no session.
	Path string
}

// Auth holds the login codes (in memory only) and the browser sessions of one node (kept in
// Config.Path across restarts, when set). Its methods are safe for concurrent use.
type Auth struct {
	cfg      Config
	mu       sync.Mutex
	codes    map[string]time.Time // code → expiry
	sessions map[string]*session  // hash of the session ID → session
	saved    time.Time            // when the sessions were last written to Path
}

type session struct {
	csrf     string // hash of the CSRF token
	lastUsed time.Time
}

// saveEvery bounds how often a session's use alone rewrites Path (a new or ended session
// writes at once).
const saveEvery = time.Minute

// hash is the form a session ID or CSRF token is kept in: the secret itself is only in
// the browser.
func hash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
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
	a := &Auth{cfg: cfg, codes: map[string]time.Time{}, sessions: map[string]*session{}}
	a.load()
	return a
}

// savedSession is one session as Path keeps it.
type savedSession struct {
	ID       string    `json:"id"`   // SHA-256 of the session ID
	CSRF     string    `json:"csrf"` // SHA-256 of the CSRF token
	LastUsed time.Time `json:"last_used"`
}

// load reads the sessions a previous run of the node kept; a missing or unreadable file
// is no session (the person logs in again).
func (a *Auth) load() {
	if a.cfg.Path == "" {
		return
	}
	b, err := os.ReadFile(a.cfg.Path)
	if err != nil {
		return
	}
	var saved []savedSession
	if json.Unmarshal(b, &saved) != nil {
		return
	}
	now := a.cfg.Now()
	for _, s := range saved {
		if len(s.ID) == 64 && len(s.CSRF) == 64 && now.Sub(s.LastUsed) < a.cfg.SessionTTL && len(a.sessions) < maxSessions {
			a.sessions[s.ID] = &session{csrf: s.CSRF, lastUsed: s.LastUsed}
		}
	}
}

// saveLocked writes the sessions to Path (0600, atomically). A failure costs the sessions
// at the next restart only; it is returned for the caller to log.
func (a *Auth) saveLocked() error {
	if a.cfg.Path == "" {
		return nil
	}
	a.saved = a.cfg.Now()
	out := make([]savedSession, 0, len(a.sessions))
	for id, s := range a.sessions {
		out = append(out, savedSession{ID: id, CSRF: s.csrf, LastUsed: s.lastUsed})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("save viewer sessions: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(a.cfg.Path), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("save viewer sessions: %w", err)
	}
	if err := atomicfile.Write(a.cfg.Path, b, 0o600); err != nil {
		return fmt.Errorf("save viewer sessions: %w", err)
	}
	return nil
}

// Save writes the sessions to Config.Path now (the node calls it when it stops, so the
// last use of each session is kept).
func (a *Auth) Save() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.saveLocked()
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
	a.sessions[hash(sessionID)] = &session{csrf: hash(csrf), lastUsed: now}
	_ = a.saveLocked() // kept in memory regardless: only a restart would forget it
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
	key := hash(sessionID)
	s, ok := a.sessions[key]
	if !ok || now.Sub(s.lastUsed) >= a.cfg.SessionTTL {
		delete(a.sessions, key)
		return false
	}
	if mutating && subtle.ConstantTimeCompare([]byte(hash(csrf)), []byte(s.csrf)) != 1 {
		return false
	}
	s.lastUsed = now
	if now.Sub(a.saved) >= saveEvery {
		_ = a.saveLocked()
	}
	return true
}

// Logout ends a session.
func (a *Auth) Logout(sessionID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.sessions, hash(sessionID))
	_ = a.saveLocked()
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
