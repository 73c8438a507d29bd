package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/internal/localnet"
)

// Errors of node calls.
var (
	// ErrUnreachable means the node did not answer usefully (down, timed out, 5xx, 401):
	// events are spooled and the failure counter moves.
	ErrUnreachable = errors.New("node unreachable")
	// ErrRejected means the node answered with a client error: it is up, the call was bad.
	ErrRejected = errors.New("node rejected the request")
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
		startable := errors.Is(err, client.ErrNoToken) || localnet.Refused(err)
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
	reply, err := h.api.Raw(ctx, method, route, body, maxReplyBytes)
	var se *client.StatusError
	switch {
	case err == nil:
		return reply, nil
	case errors.As(err, &se) && (se.Code == http.StatusUnauthorized || se.Code == http.StatusTooManyRequests || se.Code >= 500):
		// 401 means our token is stale; the spool is replayed by the node itself, so the
		// event is still not lost.
		return nil, fmt.Errorf("status %d", se.Code)
	case se != nil:
		return nil, fmt.Errorf("%w: status %d", ErrRejected, se.Code)
	}
	return nil, err // wraps the dial error, so a refused connection stays visible
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
		// Nothing kept the event: this hook fails loud at once (settleFailures).
		h.lost = serr
		return fmt.Errorf("%w (and spooling failed: %w)", err, serr)
	}
	return nil
}
