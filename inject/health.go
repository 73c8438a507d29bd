package inject

import (
	"fmt"
	"strings"
	"time"
)

// Health is what keeps memory from working fully, as the node found it; Notice words it for
// the session-start context and the user's line. The node gathers the facts, this package
// says them, so the sentences live beside the context they appear in.
type Health struct {
	Corrupt     bool   // the database is corrupt
	FullDisk    string // the data dir whose disk is full; "" when it is not
	Disabled    []DisabledProvider
	DeadLetters int    // events set aside
	Sync        string // sync's status line when it is in error or removed; "" otherwise
	// Location renders the time a provider is disabled until (nil: local time).
	Location *time.Location
}

// DisabledProvider is an AI provider the compressor does not call until Until.
type DisabledProvider struct {
	Name      string
	Until     time.Time
	LastError string
	AgentCLI  bool // an agent CLI (claude -p, codex exec…): its login, its limit or its install
}

// Notice says in one line what keeps memory from working fully, "" when all is well: a
// corrupt database, a full disk, a provider disabled (after a 401, a quota answer…), events
// that could not be stored, sync in error.
func (h Health) Notice() string {
	var parts []string
	if h.Corrupt {
		parts = append(parts, "the database is corrupt, nothing new is stored ('memnode stop', then 'memnode repair')")
	}
	if h.FullDisk != "" {
		parts = append(parts, "the disk of "+h.FullDisk+" is full: new events are refused")
	}
	loc := h.Location
	if loc == nil {
		loc = time.Local
	}
	for _, p := range h.Disabled {
		why := ""
		if p.LastError != "" {
			why = " after: " + Truncate(p.LastError, 160)
		}
		fix := fmt.Sprintf("'memnode keys set %s' if the key is wrong", p.Name)
		if p.AgentCLI {
			fix = "'memnode doctor' says why"
		}
		parts = append(parts, fmt.Sprintf("AI provider %s is disabled until %s%s; memory is compressed offline meanwhile (%s)",
			p.Name, p.Until.In(loc).Format("15:04"), why, fix))
	}
	if h.DeadLetters > 0 {
		parts = append(parts, fmt.Sprintf("%s could not be stored and were set aside ('memnode status')", countOf(h.DeadLetters, "event", "events")))
	}
	if h.Sync != "" {
		parts = append(parts, "sync: "+h.Sync)
	}
	return strings.Join(parts, "; ")
}

// UserMessage is the line shown to the user at session start: how much memory the project
// has, where the viewer is, and the health notice when there is one.
func UserMessage(memories, sessions int, health string) string {
	line := "memnode: no memory of this project yet, recording from now on"
	if memories > 0 || sessions > 0 {
		line = fmt.Sprintf("memnode: %s from %s", countOf(memories, "memory", "memories"), countOf(sessions, "session", "sessions"))
	}
	line += " · viewer: memnode viewer"
	if health != "" {
		line += " · ⚠ " + health
	}
	return line
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
