// Package client is the one typed HTTP client of the local node's API (the data dir's Unix
// socket, or 127.0.0.1 after the node's proof; bearer token from <data dir>/token), used by
// the CLI, the hook binary and the MCP server. It imports only the standard library and
// leaf packages (a test asserts it), so the lean hook binary links it without cgo.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/localnet"
)

// Sentinel errors.
var (
	// ErrNodeDown means the node is not running or not reachable.
	ErrNodeDown = errors.New("memnode node is not running (start it with 'memnode start')")
	// ErrNoToken means the data dir has no token file: the node never ran there.
	ErrNoToken = errors.New("no token in the data dir (start the node with 'memnode start')")
	// ErrRejected is a 4xx answer: the request must be fixed. The message is the node's.
	ErrRejected = errors.New("rejected")
	// ErrNotFound is a 404 answer.
	ErrNotFound = errors.New("not found")
)

// StatusError is an answer of the node that is not 2xx. errors.Is matches it against
// ErrNotFound (404), ErrNodeDown (503: starting) and ErrRejected (other 4xx).
type StatusError struct {
	Code    int
	Message string // the node's {"error": …}, or the status text
}

func (e *StatusError) Error() string {
	switch err := e.Unwrap(); {
	case e.Code == http.StatusServiceUnavailable:
		return fmt.Sprintf("%v: node is starting (%s)", err, e.Message)
	case err != nil && strings.HasPrefix(e.Message, err.Error()+":"):
		return e.Message // the node's message already says it ("not found: no observation …")
	case err != nil:
		return fmt.Sprintf("%v: %s", err, e.Message)
	}
	return "node error: " + e.Message
}

func (e *StatusError) Unwrap() error {
	switch {
	case e.Code == http.StatusNotFound:
		return ErrNotFound
	case e.Code == http.StatusServiceUnavailable:
		return ErrNodeDown
	case e.Code/100 == 4:
		return ErrRejected
	}
	return nil
}

// Config configures a Client.
type Config struct {
	// BaseURL of the node (localnet.Dialer.BaseURL).
	BaseURL string
	// Token is the bearer token. When empty it is read from DataDir at every request, so a
	// client made before the node first ran (the hook's case) works once the node has
	// written its token.
	Token   string
	DataDir string
	// UserAgent, when set, is sent with every request.
	UserAgent string
	// HTTPClient carries the requests (its transport is localnet.Dialer.Transport in
	// production); nil means one with a 5 minute timeout over the default transport.
	HTTPClient *http.Client
}

// Client talks to one node. Safe for concurrent use.
type Client struct {
	cfg Config
	hc  *http.Client
}

// New returns a client for baseURL with a fixed bearer token.
func New(baseURL, token string) *Client { return NewWithConfig(Config{BaseURL: baseURL, Token: token}) }

// NewWithConfig returns a client for cfg.
func NewWithConfig(cfg Config) *Client {
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Minute}
	}
	return &Client{cfg: cfg, hc: hc}
}

// FromDataDir returns a client for the node of dataDir over its Unix socket (port names
// the node's TCP address, the Host of every request).
func FromDataDir(dataDir string, port int) (*Client, error) {
	return FromDialer(localnet.NewDialer(dataDir, port, false))
}

// FromDialer returns a client for the node d reaches (localnet: the socket, or TCP only
// after the listener proved it holds the token), with the data dir's token.
func FromDialer(d localnet.Dialer) (*Client, error) {
	tok, err := readToken(d.DataDir)
	if err != nil {
		return nil, err
	}
	return NewWithConfig(Config{BaseURL: d.BaseURL(), Token: tok, HTTPClient: &http.Client{Timeout: 5 * time.Minute, Transport: d.Transport()}}), nil
}

// readToken is localnet.ReadToken with a missing or empty token as ErrNoToken.
func readToken(dataDir string) (string, error) {
	if dataDir == "" {
		return "", ErrNoToken
	}
	tok, err := localnet.ReadToken(dataDir)
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNoToken
	}
	return tok, err
}

func (c *Client) token() (string, error) {
	if c.cfg.Token != "" {
		return c.cfg.Token, nil
	}
	return readToken(c.cfg.DataDir)
}

// healthRoute is the one route that needs no token.
const healthRoute = "/health"

func (c *Client) do(ctx context.Context, method, route string, q url.Values, body io.Reader, ctype string) (*http.Response, error) {
	var tok string
	if route != healthRoute {
		var err error
		if tok, err = c.token(); err != nil {
			return nil, err
		}
	}
	u := c.cfg.BaseURL + route
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Both wrapped: callers test ErrNodeDown, the hook also the dial error (refused).
		return nil, fmt.Errorf("%w: %w", ErrNodeDown, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	var e apitype.Error
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&e)
	if e.Error == "" {
		e.Error = resp.Status
	}
	return nil, &StatusError{Code: resp.StatusCode, Message: e.Error}
}

// Raw sends body (nil: none; else JSON) to route (path and query) and returns the answer's
// body, at most limit bytes, for answers that are text or that the caller decodes itself.
func (c *Client) Raw(ctx context.Context, method, route string, body []byte, limit int64) ([]byte, error) {
	var rd io.Reader
	ctype := ""
	if body != nil {
		rd, ctype = bytes.NewReader(body), "application/json"
	}
	resp, err := c.do(ctx, method, route, nil, rd, ctype)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", route, err)
	}
	return b, nil
}

func (c *Client) getJSON(ctx context.Context, route string, q url.Values, out any) error {
	resp, err := c.do(ctx, http.MethodGet, route, q, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode %s: %w", route, err)
	}
	return nil
}

func (c *Client) postJSON(ctx context.Context, route string, in, out any) error {
	return c.Call(ctx, http.MethodPost, route, in, out)
}

// Call sends in (nil: no body) as JSON to route and decodes the answer into out (nil:
// the answer is discarded), for routes the typed methods do not cover.
func (c *Client) Call(ctx context.Context, method, route string, in, out any) error {
	var body io.Reader
	ctype := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s: %w", route, err)
		}
		body, ctype = bytes.NewReader(b), "application/json"
	}
	resp, err := c.do(ctx, method, route, nil, body, ctype)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode %s: %w", route, err)
	}
	return nil
}

// Search runs a query.
func (c *Client) Search(ctx context.Context, q apitype.SearchQuery) (apitype.Results, error) {
	var res apitype.Results
	return res, c.getJSON(ctx, "/api/search", q.Values(), &res)
}

// Timeline returns the records around an anchor.
func (c *Client) Timeline(ctx context.Context, q apitype.TimelineQuery) (apitype.Timeline, error) {
	v := url.Values{}
	for k, s := range map[string]string{"anchor": q.Anchor, "query": q.Query, "project": q.Project, "device": q.Device, "platform": q.Platform,
		"type": q.Type, "obs_type": strings.Join(q.ObsTypes, ",")} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Before != 0 {
		v.Set("before", strconv.Itoa(q.Before))
	}
	if q.After != 0 {
		v.Set("after", strconv.Itoa(q.After))
	}
	var tl apitype.Timeline
	return tl, c.getJSON(ctx, "/api/timeline", v, &tl)
}

// Get returns full records by ID.
func (c *Client) Get(ctx context.Context, ids []string) (apitype.Records, error) {
	var recs apitype.Records
	return recs, c.postJSON(ctx, "/api/records/batch", apitype.IDs{IDs: ids}, &recs)
}

// Forget tombstones records and purges their content on every device.
func (c *Client) Forget(ctx context.Context, ids []string) (apitype.ForgetResult, error) {
	var res apitype.ForgetResult
	return res, c.postJSON(ctx, "/api/forget", apitype.IDs{IDs: ids}, &res)
}

// Correct records what is true about a wrong or outdated observation (POST /api/correct).
func (c *Client) Correct(ctx context.Context, corr apitype.Correction) (apitype.SupersedeResult, error) {
	var res apitype.SupersedeResult
	return res, c.postJSON(ctx, "/api/correct", corr, &res)
}

// Supersede marks an observation as replaced by another (POST /api/supersede).
func (c *Client) Supersede(ctx context.Context, req apitype.Supersede) (apitype.SupersedeResult, error) {
	var res apitype.SupersedeResult
	return res, c.postJSON(ctx, "/api/supersede", req, &res)
}

// Pin pins or unpins an observation (POST /api/pin).
func (c *Client) Pin(ctx context.Context, req apitype.Pin) (apitype.PinResult, error) {
	var res apitype.PinResult
	return res, c.postJSON(ctx, "/api/pin", req, &res)
}

// SaveNote stores a note.
func (c *Client) SaveNote(ctx context.Context, n apitype.Note) (apitype.SaveResult, error) {
	var res apitype.SaveResult
	return res, c.postJSON(ctx, "/api/memories", n, &res)
}

// ErrTruncated means an export stream ended before its trailer.
var ErrTruncated = errors.New("export stream ended early")

// Export copies the node's export (JSONL) to w and returns the number of records. The
// node ends a complete stream with a trailer line, which is checked and not copied.
func (c *Client) Export(ctx context.Context, project string, w io.Writer) (int, error) {
	v := url.Values{}
	if project != "" {
		v.Set("project", project)
	}
	resp, err := c.do(ctx, http.MethodGet, "/api/export", v, nil, "")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 1<<16)
	bw := bufio.NewWriterSize(w, 1<<16)
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var end apitype.ExportEnd
			if bytes.HasPrefix(line, []byte(`{"kind":"end"`)) && json.Unmarshal(line, &end) == nil && end.Kind == "end" {
				if end.Count != n {
					return n, fmt.Errorf("%w: %d of %d records", ErrTruncated, n, end.Count)
				}
				return n, bw.Flush()
			}
			if _, werr := bw.Write(line); werr != nil {
				return n, fmt.Errorf("write export: %w", werr)
			}
			n++
		}
		if errors.Is(err, io.EOF) {
			return n, fmt.Errorf("%w after %d records", ErrTruncated, n)
		}
		if err != nil {
			return n, fmt.Errorf("read export: %w", err)
		}
	}
}

// Import sends one batch of records in the export format (JSONL, see importer.Writer) and
// returns what the node added.
func (c *Client) Import(ctx context.Context, batch io.Reader) (apitype.ImportResult, error) {
	resp, err := c.do(ctx, http.MethodPost, "/api/import", nil, batch, "application/x-ndjson")
	if err != nil {
		return apitype.ImportResult{}, err
	}
	defer resp.Body.Close()
	var res apitype.ImportResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return res, fmt.Errorf("decode import reply: %w", err)
	}
	return res, nil
}

// Health asks whether the node is up (no token needed).
func (c *Client) Health(ctx context.Context) (apitype.Health, error) {
	var h apitype.Health
	return h, c.getJSON(ctx, healthRoute, nil, &h)
}

// ProvenHealth is Health from a node that proves it holds the token of the client's
// DataDir: a fresh challenge goes with the request, and an answer without the right proof
// (a squatter on the port, a stale listener) is localnet.ErrNotOurNode, its body never read.
func (c *Client) ProvenHealth(ctx context.Context) (apitype.Health, error) {
	var h apitype.Health
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.BaseURL+healthRoute, nil)
	if err != nil {
		return h, fmt.Errorf("build request: %w", err)
	}
	challenge := localnet.NewChallenge()
	req.Header.Set(localnet.ChallengeHeader, challenge)
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return h, ctx.Err()
		}
		return h, fmt.Errorf("%w: %w", ErrNodeDown, err)
	}
	defer resp.Body.Close()
	if !localnet.CheckProof(c.cfg.DataDir, challenge, resp.Header.Get(localnet.ProofHeader)) {
		return h, localnet.ErrNotOurNode
	}
	if resp.StatusCode != http.StatusOK {
		return h, &StatusError{Code: resp.StatusCode, Message: resp.Status}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&h); err != nil || h.Status != "ok" {
		return h, fmt.Errorf("health: unexpected answer (%v)", err)
	}
	return h, nil
}

// Status returns the node's state (GET /api/status).
func (c *Client) Status(ctx context.Context) (apitype.Status, error) {
	var st apitype.Status
	return st, c.getJSON(ctx, "/api/status", nil, &st)
}
