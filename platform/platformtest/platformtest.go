// Package platformtest holds what the tests of the platforms and of the hook share: the
// recorded hook sessions in testdata/fixtures/<platform>, and the config files an installer
// test writes and reads back.
package platformtest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Call is one recorded hook call: the memnode event and the agent's stdin payload.
type Call struct {
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
}

// Session reads dir/session.jsonl (one Call a line).
func Session(tb testing.TB, dir string) []Call {
	tb.Helper()
	f, err := os.Open(filepath.Join(dir, "session.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var calls []Call
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var c Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("%s: %v", f.Name(), err)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return calls
}
