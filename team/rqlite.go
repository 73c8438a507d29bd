package team

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Errors a member sees, each a clear line. rqlite answers 401 both for a wrong password and
// for a missing permission; the client tells them apart by asking a second endpoint.
var (
	ErrUnauthorized = errors.New("the team cluster refused the user or password (401)")
	ErrForbidden    = errors.New("the team cluster user lacks a permission (403)")
	ErrUnreachable  = errors.New("the team cluster is unreachable")
	ErrUntrusted    = errors.New("the team cluster's HTTPS certificate is not signed by a CA this device trusts: give the team's CA with `memnode team join … --ca-cert FILE`")
	ErrSchemaNewer  = errors.New("the team cluster's schema is newer than this memnode: upgrade memnode")
	ErrNotJoined    = errors.New("this device has not joined a team: run `memnode team join URL --user NAME`")
	ErrLocalOnly    = errors.New("the project is in local_only_projects and can never be shared")
)

// Read consistency levels (rqlite's ?level=). See DESIGN.md, "Consistency".
const (
	levelWeak   = "weak"   // served by the leader from its SQLite file: every committed write, cheap
	levelStrong = "strong" // through the Raft log: for the schema check at join
)

// rq is rqlite's HTTP API, used directly (DESIGN.md says why not gorqlite): several node URLs,
// the one that answered last first, the next on a connection error or a node without leader.
type rq struct {
	urls       []string
	user, pass string
	hc         *http.Client

	mu   sync.Mutex
	good int       // index of the URL that answered last
	ok   bool      // the last request got an answer from some node
	last time.Time // when a node last answered (zero: never, since this process started)
}

// lastContact is when a node last answered.
func (c *rq) lastContact() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// unreachable is the one line status and search give when no node answered in time.
func (c *rq) unreachable(err error) error {
	last := "never since the node started"
	if t := c.lastContact(); !t.IsZero() {
		last = t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return fmt.Errorf("%w: cluster unreachable (last contact %s): %w", ErrUnreachable, last, err)
}

// answered reports whether the last request reached a node that answered.
func (c *rq) answered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ok
}

func newRQ(urls []string, user, pass string, timeout time.Duration) *rq {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &rq{urls: urls, user: user, pass: pass, hc: &http.Client{Timeout: timeout,
		// rqlite nodes forward writes to the leader themselves; a redirect (only sent when asked
		// with ?redirect) would turn a POST into a GET in net/http, so it is never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// preferLeader makes the node at apiAddr (the leader, as /nodes names it: "host:port" or a
// URL) the first one asked: it serves weak reads and takes writes without forwarding them,
// and a node cut off from the others (an isolated former leader) is no longer the first
// a request waits for.
func (c *rq) preferLeader(apiAddr string) {
	host := apiAddr
	if u, err := url.Parse(apiAddr); err == nil && u.Host != "" {
		host = u.Host
	}
	for i, u := range c.urls {
		if hostOf(u) == host {
			c.mu.Lock()
			c.good = i
			c.mu.Unlock()
			return
		}
	}
}

// trust makes the client accept HTTPS certificates signed by the CA in caPEM besides the
// system's roots (nothing to do for an empty caPEM).
func (c *rq) trust(caPEM []byte) error {
	if len(bytes.TrimSpace(caPEM)) == 0 {
		return nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(caPEM) {
		return errors.New("the CA certificate is not PEM (-----BEGIN CERTIFICATE-----)")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	c.hc.Transport = tr
	return nil
}

// stmt is one parameterised statement: rqlite's ["SQL", args…] form.
type stmt []any

func st(sql string, args ...any) stmt { return append(stmt{sql}, args...) }

type execResult struct {
	LastInsertID int64  `json:"last_insert_id"`
	RowsAffected int64  `json:"rows_affected"`
	Error        string `json:"error"`
}

// queryResult is one statement's rows; a value is a json.Number, a string or nil.
type queryResult struct {
	Columns []string `json:"columns"`
	Values  [][]any  `json:"values"`
	Error   string   `json:"error"`
}

// scalar is the integer in the first column of the first row: the answer of a COUNT or MAX
// query. A cluster that answers with no row is an error, never a zero taken on trust.
func (r queryResult) scalar() (int64, error) {
	if len(r.Values) == 0 || len(r.Values[0]) == 0 {
		return 0, errors.New("team cluster: a one-value query answered with no value")
	}
	return int64Of(r.Values[0][0])
}

// execute runs stmts as one atomic batch (?transaction: all or none) on the leader.
func (c *rq) execute(ctx context.Context, stmts []stmt) ([]execResult, error) {
	var out struct {
		Results []execResult `json:"results"`
		Error   string       `json:"error"`
	}
	if err := c.post(ctx, "/db/execute?transaction", stmts, &out); err != nil {
		return nil, err
	}
	if out.Error != "" {
		return nil, fmt.Errorf("team cluster: %s", out.Error)
	}
	for _, r := range out.Results {
		if r.Error != "" {
			return nil, fmt.Errorf("team cluster: %s", r.Error)
		}
	}
	return out.Results, nil
}

// query runs read statements at level. Numbers decode as json.Number, never float64, so a
// 64-bit value (an HLC stamp, a position) keeps every digit.
func (c *rq) query(ctx context.Context, level string, stmts []stmt) ([]queryResult, error) {
	var out struct {
		Results []queryResult `json:"results"`
		Error   string        `json:"error"`
	}
	if err := c.post(ctx, "/db/query?level="+level, stmts, &out); err != nil {
		return nil, err
	}
	if out.Error != "" {
		return nil, fmt.Errorf("team cluster: %s", out.Error)
	}
	for _, r := range out.Results {
		if r.Error != "" {
			return nil, fmt.Errorf("team cluster: %s", r.Error)
		}
	}
	if len(out.Results) != len(stmts) { // callers index the results by statement
		return nil, fmt.Errorf("team cluster: %d results for %d statements", len(out.Results), len(stmts))
	}
	return out.Results, nil
}

func (c *rq) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("team request: %w", err)
	}
	return c.do(ctx, http.MethodPost, path, b, func(r io.Reader) error {
		d := json.NewDecoder(r)
		d.UseNumber()
		if err := d.Decode(out); err != nil {
			return fmt.Errorf("team cluster answer: %w", err)
		}
		return nil
	})
}

// get fetches a JSON document (status, nodes) from the node that answers.
func (c *rq) get(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, nil, func(r io.Reader) error {
		d := json.NewDecoder(r)
		d.UseNumber()
		return d.Decode(out)
	})
}

// do sends the request to the URL that answered last, then to the others in turn. A node that
// is down, or has no leader (503), passes the request on; an answer is final.
func (c *rq) do(ctx context.Context, method, path string, body []byte, read func(io.Reader) error) error {
	c.mu.Lock()
	start := c.good
	c.mu.Unlock()
	var last error
	for i := range c.urls {
		k := (start + i) % len(c.urls)
		code, err := c.once(ctx, c.urls[k], method, path, body, read)
		if err == nil || (code != 0 && code < 500) {
			c.mu.Lock()
			c.ok, c.last = true, time.Now()
			if err == nil {
				c.good = k
			}
			c.mu.Unlock()
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrUnreachable, ctx.Err())
		}
		last = err
		if code == http.StatusUnauthorized {
			return c.classify401(ctx, c.urls[k], path)
		}
		if code != 0 && code != http.StatusServiceUnavailable && code < 500 {
			return err
		}
	}
	c.mu.Lock()
	c.ok = false
	c.mu.Unlock()
	return last
}

func (c *rq) once(ctx context.Context, base, method, path string, body []byte, read func(io.Reader) error) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, fmt.Errorf("team request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(c.user, c.pass)
	resp, err := c.hc.Do(req)
	var unknownCA x509.UnknownAuthorityError
	var badCert *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &badCert) {
		return 0, fmt.Errorf("%w (%s: %s)", ErrUntrusted, hostOf(base), redactURL(err))
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %s", ErrUnreachable, redactURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode >= 500 {
			return resp.StatusCode, fmt.Errorf("%w: %s answered %d %s", ErrUnreachable, hostOf(base), resp.StatusCode, strings.TrimSpace(string(msg)))
		}
		return resp.StatusCode, fmt.Errorf("team cluster %s answered %d %s", hostOf(base), resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return resp.StatusCode, read(io.LimitReader(resp.Body, 64<<20))
}

// classify401 tells a wrong password from a missing permission: rqlite answers 401 for both,
// but a user whose password is right passes on some endpoint it is allowed (query or status).
func (c *rq) classify401(ctx context.Context, base, path string) error {
	probes := []struct{ method, path string }{{http.MethodGet, "/status"}, {http.MethodPost, "/db/query"}}
	for _, p := range probes {
		if strings.HasPrefix(path, p.path) {
			continue
		}
		var body []byte
		if p.method == http.MethodPost {
			body = []byte(`["SELECT 1"]`)
		}
		if code, err := c.once(ctx, base, p.method, p.path, body, func(io.Reader) error { return nil }); err == nil && code == http.StatusOK {
			return fmt.Errorf("%w: user %q may not use %s", ErrForbidden, c.user, endpointOf(path))
		}
	}
	return fmt.Errorf("%w: user %q", ErrUnauthorized, c.user)
}

func endpointOf(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return path
}

func hostOf(base string) string {
	if u, err := url.Parse(base); err == nil {
		return u.Host
	}
	return base
}

// redactURL keeps a transport error's cause without the URL's user info.
func redactURL(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Sprintf("%s %s: %v", ue.Op, hostOf(ue.URL), ue.Err)
	}
	return err.Error()
}
