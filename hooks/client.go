package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/localnet"
)

// Errors of node calls.
var (
	// ErrUnreachable means the node did not answer usefully (down, timed out, 5xx, 401):
	// events are spooled and the failure counter moves.
	ErrUnreachable = errors.New("node unreachable")
	// ErrRejected means the node answered with a client error: it is up, the call was bad.
	ErrRejected = errors.New("node rejected the request")
	errNoToken  = errors.New("no token file")
)

// maxReplyBytes caps what the hook reads from the node.
const maxReplyBytes = 4 << 20

// call makes one request to the node. Refused connections and a missing token file start
// the node (once per hook, when cfg.Start is set) and retry once.
func (h *hook) call(ctx context.Context, method, route string, body []byte) ([]byte, error) {
	for {
		reply, err := h.callOnce(ctx, method, route, body)
		if err == nil {
			h.reached = true
			return reply, nil
		}
		if errors.Is(err, ErrRejected) {
			h.reached = true
			return nil, err
		}
		// A refused connection or a missing socket: nothing listens (ErrNotOurNode is not
		// startable: something else holds the port; the event is spooled).
		startable := errors.Is(err, errNoToken) || localnet.Refused(err)
		if startable && !h.startTried && h.cfg.Start != nil && ctx.Err() == nil {
			h.startTried = true
			if serr := h.cfg.Start(ctx); serr != nil {
				h.logf("start node: %v", serr)
			} else {
				continue
			}
		}
		h.missed = true
		return nil, fmt.Errorf("%w: %s %s: %w", ErrUnreachable, method, route, err)
	}
}

func (h *hook) callOnce(ctx context.Context, method, route string, body []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	token, err := readToken(h.cfg.DataDir)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.cfg.BaseURL+route, rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("User-Agent", "memnode-hook/"+h.cfg.Version)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return nil, err // *url.Error wraps the dial error, so ECONNREFUSED stays visible
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return nil, fmt.Errorf("read reply: %w", err)
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return reply, nil
	case resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		// 401 means our token is stale; the spool is replayed by the node itself, so the
		// event is still not lost.
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	default:
		return nil, fmt.Errorf("%w: status %d", ErrRejected, resp.StatusCode)
	}
}

// readToken returns the bearer token. Its content is never printed or logged.
func readToken(dataDir string) (string, error) {
	if dataDir == "" {
		return "", errNoToken
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "token"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", errNoToken
	}
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", errNoToken
	}
	return tok, nil
}

// send posts one event; when the node is out of reach the event goes to the spool instead.
func (h *hook) send(ctx context.Context, ev apitype.Event) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	_, err = h.call(ctx, http.MethodPost, "/api/events", body)
	if err == nil || !errors.Is(err, ErrUnreachable) {
		return err
	}
	if h.cfg.DataDir == "" {
		return err
	}
	if serr := AppendSpool(h.cfg.DataDir, ev); serr != nil {
		return fmt.Errorf("%w (and spooling failed: %w)", err, serr)
	}
	return nil
}
