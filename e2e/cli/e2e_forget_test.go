package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
)

// TestForgetLeavesNoFileWithTheText: a prompt goes through the real hooks into a real
// node, its turn is processed (observation, summary), then `memnode forget` of the prompt
// and `memnode stop`: the prompt's text is in no file of the data dir — memnode.db, the
// queue database, their WAL/SHM, logs — after the stop and after a restart.
func TestForgetLeavesNoFileWithTheText(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.Start()
	proj := filepath.Join(t.TempDir(), "forget-proj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	const word = "echidnaforgetmarker"
	sid := "forget-session-1"
	payloads := []struct{ event, body string }{
		{"session-init", fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%s,"hook_event_name":"UserPromptSubmit","prompt":"please %s the parser and explain %s"}`,
			sid, e2ekit.JsonString(proj), word, word)},
		{"observation", fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%s,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"go test ./parser/","description":"run the parser tests"},"tool_response":{"stdout":"ok  parser 0.2s\n","stderr":""}}`,
			sid, e2ekit.JsonString(proj))},
		{"summarize", fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%s,"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"The parser tests pass."}`,
			sid, e2ekit.JsonString(proj))},
	}
	for _, p := range payloads {
		if r := in.Run([]byte(p.body), "hook", "claude-code", p.event); r.Code != 0 {
			t.Fatalf("hook %s: exit %d %s", p.event, r.Code, r.Stderr)
		}
	}
	db := in.Db()
	testkit.WaitFor(t, "the turn to be processed", 30*time.Second, func() bool {
		return in.Queued() == 0 && in.Count(db, "SELECT COUNT(*) FROM prompts WHERE instr(text, ?) > 0", word) == 1 &&
			in.Count(db, "SELECT COUNT(*) FROM observations WHERE session_id = ?", sid) >= 1
	})
	var id string
	if err := db.QueryRow("SELECT id FROM prompts WHERE instr(text, ?) > 0", word).Scan(&id); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if out := in.MustRun(nil, "forget", id); !strings.Contains(out, "forgot 1 of 1") {
		t.Fatalf("forget: %s", out)
	}
	in.MustRun(nil, "stop")
	check := func(when string) {
		t.Helper()
		files := 0
		err := filepath.WalkDir(in.DataDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			if bytes.Contains(b, []byte(word)) {
				rel, _ := filepath.Rel(in.DataDir, path)
				t.Errorf("%s: %s still holds the forgotten prompt's text", when, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if files < 2 {
			t.Fatalf("%s: only %d files in the data dir: the walk saw nothing", when, files)
		}
	}
	check("after stop")
	in.Start()
	in.MustRun(nil, "stop")
	check("after restart")
}
