package inject_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/inject"
)

// TestHealthNoticeAndUserMessage: the words the node's facts become, in their order, and the
// user's line around them.
func TestHealthNoticeAndUserMessage(t *testing.T) {
	if n := (inject.Health{}).Notice(); n != "" {
		t.Fatalf("all well, yet %q", n)
	}
	until := time.Date(2026, 12, 3, 14, 5, 0, 0, time.UTC)
	h := inject.Health{Corrupt: true, FullDisk: "/d", DeadLetters: 1, Sync: "error: port in use", Location: time.UTC,
		Disabled: []inject.DisabledProvider{{Name: "anthropic", Until: until, LastError: "401"}, {Name: "codex", Until: until, AgentCLI: true}}}
	want := "the database is corrupt, nothing new is stored ('memnode stop', then 'memnode repair'); " +
		"the disk of /d is full: new events are refused; " +
		"AI provider anthropic is disabled until 14:05 after: 401; memory is compressed offline meanwhile ('memnode keys set anthropic' if the key is wrong); " +
		"AI provider codex is disabled until 14:05; memory is compressed offline meanwhile ('memnode doctor' says why); " +
		"1 event could not be stored and were set aside ('memnode status'); sync: error: port in use"
	if got := h.Notice(); got != want {
		t.Fatalf("notice\n got %q\nwant %q", got, want)
	}
	if got := inject.UserMessage(0, 0, ""); got != "memnode: no memory of this project yet, recording from now on · viewer: memnode viewer" {
		t.Fatalf("empty project: %q", got)
	}
	if got := inject.UserMessage(1, 3, "sync: x"); !strings.HasPrefix(got, "memnode: 1 memory from 3 sessions · viewer") || !strings.HasSuffix(got, " · ⚠ sync: x") {
		t.Fatalf("user line: %q", got)
	}
}
