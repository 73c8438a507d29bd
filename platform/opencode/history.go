package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/memnode/memnode/platform"
)

// history: OpenCode keeps its sessions in SQLite ($XDG_DATA_HOME/opencode/opencode.db,
// default ~/.local/share/opencode), read through its own CLI — `opencode db` lists them
// (sessionQuery), `opencode export <id>` prints each — so memnode links no SQLite here and
// depends on two columns of OpenCode's schema only. A folder of `opencode export <id> > <id>.json` files is
// read as it is. A project's AGENTS.md holds its memory.
var history = platform.History{
	Dir: func(home string, getenv func(string) string) string {
		if x := getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
			return filepath.Join(x, "opencode")
		}
		return filepath.Join(home, ".local", "share", "opencode")
	},
	// An exported session is <session id>.json (ses_…, as export writes them): the data
	// folder's other JSON files (auth.json) are not sessions.
	IsSession: func(rel string) bool {
		return !strings.Contains(rel, "/") && strings.HasPrefix(rel, "ses_") && strings.HasSuffix(rel, ".json")
	},
	Replay: func(path string) (platform.Replayed, error) {
		return platform.ReplayFile(path, Replay)
	},
	ProjectMemory: func(root, _ string) []string { return []string{filepath.Join(root, "AGENTS.md")} },
	Export:        export,
}

// database is OpenCode's database file in its data folder.
const database = "opencode.db"

// listed is a row of the session listing (sessionQuery).
type listed struct {
	ID      string `json:"id"`
	Updated int64  `json:"time_updated"`
}

// sessionQuery lists OpenCode's sessions through `opencode db --format json`: `opencode
// session list` lists only the sessions of the project of its working folder (1.18.33).
// A sub-agent's session (parent_id set) is left out, as in the other agents' imports.
const sessionQuery = "SELECT id, time_updated FROM session WHERE parent_id IS NULL ORDER BY time_created"

// export writes each session of OpenCode's data folder dir updated at or after since into
// out as <id>.json, through the opencode command on PATH run with XDG_DATA_HOME set to
// dir's parent and without plugins (--pure: memnode's own plugin stays quiet).
func export(ctx context.Context, dir, out string, since int64) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, database)); err != nil {
		return false, nil
	}
	if filepath.Base(dir) != "opencode" {
		return true, fmt.Errorf("%s holds an OpenCode database but is not named opencode: give OpenCode's data folder ($XDG_DATA_HOME/opencode) or a folder of 'opencode export <id> > <id>.json' files", dir)
	}
	bin, err := exec.LookPath("opencode")
	if err != nil {
		return true, fmt.Errorf("OpenCode keeps its sessions in %s, which memnode reads through the opencode command: put opencode on PATH, or give a folder of 'opencode export <id> > <id>.json' files", filepath.Join(dir, database))
	}
	run := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Dir(dir), "OPENCODE_DISABLE_AUTOUPDATE=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			msg := strings.TrimSpace(stderr.String())
			if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
				msg = msg[i+1:]
			}
			return nil, fmt.Errorf("opencode %s: %w %s", args[0], err, msg)
		}
		return b, nil
	}
	b, err := run("db", "--format", "json", "--pure", sessionQuery)
	if err != nil {
		return true, err
	}
	var sessions []listed
	if len(bytes.TrimSpace(b)) > 0 { // no sessions: nothing printed
		if err := json.Unmarshal(b, &sessions); err != nil {
			return true, fmt.Errorf("read the list of OpenCode's sessions: %w", err)
		}
	}
	for _, s := range sessions {
		if s.ID == "" || strings.ContainsAny(s.ID, `/\`) || (since > 0 && s.Updated < since) {
			continue
		}
		b, err := run("export", "--pure", s.ID)
		if err != nil {
			return true, err
		}
		if err := os.WriteFile(filepath.Join(out, s.ID+".json"), b, 0o600); err != nil {
			return true, fmt.Errorf("keep the export of %s: %w", s.ID, err)
		}
	}
	return true, nil
}
