package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// trustTimeout bounds one run of `codex app-server` for the trust step.
const trustTimeout = 60 * time.Second

// trustHooks marks memnode's hooks in hooksFile as trusted in the user's config, the way
// Codex's /hooks review does: `codex app-server` (JSON-RPC over stdio) lists the hooks
// for cwd with their current hashes, and config/batchWrite stores them under hooks.state.
// Codex computes the hashes; memnode never does. It returns how many hooks it trusted.
func trustHooks(codex, home, cwd, hooksFile string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), trustTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, "app-server")
	cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"))
	cmd.Dir = cwd
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, fmt.Errorf("start codex app-server: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, fmt.Errorf("start codex app-server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start codex app-server: %w", err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	rpc := &jsonRPC{w: stdin, r: bufio.NewReaderSize(stdout, 1<<20)}
	if _, err := rpc.call(1, "initialize", map[string]any{"clientInfo": map[string]string{"name": "memnode", "version": "1"}}); err != nil {
		return 0, err
	}
	if err := rpc.notify("initialized"); err != nil {
		return 0, err
	}
	res, err := rpc.call(2, "hooks/list", map[string]any{"cwds": []string{cwd}})
	if err != nil {
		return 0, err
	}
	var list struct {
		Data []struct {
			Hooks []struct {
				Key         string `json:"key"`
				Command     string `json:"command"`
				SourcePath  string `json:"sourcePath"`
				CurrentHash string `json:"currentHash"`
				TrustStatus string `json:"trustStatus"`
			} `json:"hooks"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return 0, fmt.Errorf("decode codex hooks/list: %w", err)
	}
	state := map[string]any{}
	for _, d := range list.Data {
		for _, h := range d.Hooks {
			if filepath.Clean(h.SourcePath) != filepath.Clean(hooksFile) || !ours(h.Command) || h.TrustStatus == "trusted" || h.CurrentHash == "" {
				continue
			}
			state[h.Key] = map[string]string{"trusted_hash": h.CurrentHash}
		}
	}
	if len(state) == 0 {
		return 0, nil
	}
	_, err = rpc.call(3, "config/batchWrite", map[string]any{
		"edits":            []any{map[string]any{"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}},
		"filePath":         nil,
		"expectedVersion":  nil,
		"reloadUserConfig": true,
	})
	if err != nil {
		return 0, err
	}
	return len(state), nil
}

// ours reports whether a hook command is one of memnode's for Codex.
func ours(command string) bool { return strings.Contains(command, " hook "+Name+" ") }

// jsonRPC is a line-delimited JSON-RPC 2.0 client (codex app-server's stdio framing).
type jsonRPC struct {
	w io.Writer
	r *bufio.Reader
}

func (c *jsonRPC) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode codex app-server request: %w", err)
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write to codex app-server: %w", err)
	}
	return nil
}

func (c *jsonRPC) notify(method string) error {
	return c.send(map[string]any{"jsonrpc": "2.0", "method": method})
}

// errAppServer is an error answer of codex app-server.
var errAppServer = errors.New("codex app-server refused")

// call sends a request and reads messages until the answer to id (notifications between
// are passed over).
func (c *jsonRPC) call(id int, method string, params any) (json.RawMessage, error) {
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("read codex app-server's answer to %s: %w", method, err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != id {
			continue
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("%w %s: %s", errAppServer, method, msg.Error.Message)
		}
		return msg.Result, nil
	}
}
