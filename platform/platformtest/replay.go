package platformtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Rendered is a hook call as the handlers see it, rendered for comparison: the memnode
// event and what of the canonical Input is recorded (prompt, tool call, answer). Calls that
// record nothing (a prompt continuation, a bookkeeping tool) render as "".
func Rendered(event string, in platform.Input) string {
	switch {
	case in.Continuation, in.Bookkeeping:
		return ""
	case event == platform.EventSessionInit:
		return event + " " + in.Prompt
	case event == platform.EventObservation:
		return fmt.Sprintf("%s %s %s -> %s", event, in.ToolName, canonicalJSON(in.ToolInput), canonicalJSON(withoutDuration(in.ToolResponse)))
	case event == platform.EventSummarize:
		msg := ""
		if in.LastAssistantMessage != nil {
			msg = *in.LastAssistantMessage
		}
		return event + " " + strings.TrimSpace(msg)
	}
	return event
}

// withoutDuration drops a failure's duration_ms: no record keeps it, and the agents'
// session files do not say it.
func withoutDuration(raw json.RawMessage) json.RawMessage {
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil || f["duration_ms"] == nil {
		return raw
	}
	delete(f, "duration_ms")
	b, _ := json.Marshal(f)
	return b
}

// canonicalJSON re-encodes a JSON value with sorted keys, so that two encodings of one
// value compare equal.
func canonicalJSON(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// RenderReplay normalizes replayed calls through ad and renders them (empty ones left out).
func RenderReplay(tb testing.TB, ad platform.Adapter, calls []platform.Recorded) []string {
	tb.Helper()
	var out []string
	for _, c := range calls {
		in, err := ad.Normalize(c.Event, c.Payload)
		if err != nil {
			tb.Fatalf("the adapter refuses a replayed %s: %v\n%s", c.Event, err, c.Payload)
		}
		if r := Rendered(c.Event, in); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// SameCalls fails tb when the live and the replayed renderings differ. The tool calls of a
// turn may come in another order (Codex's Stop hook records a failed call at the turn's
// end): the records of a turn are the same whatever the order.
func SameCalls(tb testing.TB, live, replayed []string) {
	tb.Helper()
	live, replayed = sortedTurns(live), sortedTurns(replayed)
	if strings.Join(live, "\n") != strings.Join(replayed, "\n") {
		tb.Errorf("the replay differs from the live hook calls:\nlive:\n%s\n\nreplay:\n%s", strings.Join(live, "\n"), strings.Join(replayed, "\n"))
	}
}

// sortedTurns sorts each run of consecutive observations.
func sortedTurns(calls []string) []string {
	out := slices.Clone(calls)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && strings.HasPrefix(out[j], platform.EventObservation+" ") {
			j++
		}
		slices.Sort(out[i:j])
		i = max(j, i+1)
	}
	return out
}

// Reader reads one session file's bytes as the agent's History does.
type Reader func([]byte) (platform.Replayed, error)

// fixtureTranscripts are the session files every agent's fixtures hold.
var fixtureTranscripts = []string{"transcript-1.jsonl", "transcript-2.jsonl"}

// ReplayMatchesLive checks each captured session file in dir: read gives the hook calls
// live (transcript → the captured calls of that session, rendered) says the agent made, as
// ad normalizes them, with the session's working folder cwd and no bad line; the same IDs
// on a second read; a torn last line is one bad line and changes nothing else.
func ReplayMatchesLive(t *testing.T, ad platform.Adapter, dir, cwd string, read Reader, live func(transcript string) []string) {
	t.Helper()
	for _, transcript := range fixtureTranscripts {
		b, err := os.ReadFile(filepath.Join(dir, transcript))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := read(b)
		if err != nil {
			t.Fatal(err)
		}
		if rep.BadLines != 0 || rep.Cwd != cwd {
			t.Errorf("%s: %d bad lines, cwd %q", transcript, rep.BadLines, rep.Cwd)
		}
		want := live(transcript)
		if len(want) < 4 {
			t.Fatalf("%s: only %d live calls", transcript, len(want))
		}
		SameCalls(t, want, RenderReplay(t, ad, rep.Calls))
		again, _ := read(b)
		for i := range rep.Calls {
			if rep.Calls[i].ID != again.Calls[i].ID {
				t.Errorf("IDs differ between two reads: %s %s", rep.Calls[i].ID, again.Calls[i].ID)
			}
		}
		torn, err := read(append(slices.Clone(b), `{"id": "x", "ty`+"\n"...))
		if err != nil || torn.BadLines != 1 || len(torn.Calls) != len(rep.Calls) {
			t.Errorf("%s with a torn last line: %d bad lines, %d calls (want 1, %d), %v", transcript, torn.BadLines, len(torn.Calls), len(rep.Calls), err)
		}
	}
}

// FuzzReplay fuzzes read (a parser of untrusted files), seeded with the captured session
// files in dir: every call it returns is a JSON payload with an ID that ad normalizes.
func FuzzReplay(f *testing.F, ad platform.Adapter, dir string, read Reader) {
	for _, tr := range fixtureTranscripts {
		if b, err := os.ReadFile(filepath.Join(dir, tr)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := read(b)
		if err != nil {
			return
		}
		for _, r := range rep.Calls {
			if !json.Valid(r.Payload) || r.ID == "" {
				t.Fatalf("bad record %+v", r)
			}
			if _, err := ad.Normalize(r.Event, r.Payload); err != nil {
				t.Fatalf("the adapter refuses a replayed %s: %v\n%s", r.Event, err, r.Payload)
			}
		}
	})
}

// LiveRendered renders the captured hook calls (dir/session.jsonl) of the session whose
// file is transcript as the hooks specs installs see them: the calls that record something.
func LiveRendered(t *testing.T, ad platform.Adapter, dir, transcript string, specs []install.HookSpec) []string {
	t.Helper()
	recorded := map[string]bool{platform.EventContext: true, platform.EventSessionInit: true,
		platform.EventObservation: true, platform.EventSummarize: true, platform.EventSessionEnd: true}
	var out []string
	for _, c := range Session(t, dir) {
		var p struct {
			Transcript string `json:"transcript_path"`
		}
		if json.Unmarshal(c.Payload, &p) != nil || p.Transcript != transcript {
			continue
		}
		for _, spec := range specs {
			if spec.Event != c.Event || !recorded[spec.Sub] {
				continue
			}
			in, err := ad.Normalize(spec.Sub, c.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if r := Rendered(spec.Sub, in); r != "" {
				out = append(out, r)
			}
		}
	}
	return out
}
