package opencode

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/platformtest"
)

// fixtureExport is a captured session (transcript-N.json: the session row and its
// messages as OpenCode stores them) in the shape `opencode export` prints: {info,
// messages} with the session's id and directory in info.
func fixtureExport(t testing.TB, n int) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(), "transcript-"+string(rune('0'+n))+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		Session  json.RawMessage `json:"session"`
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(map[string]json.RawMessage{"info": stored.Session, "messages": stored.Messages})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// liveCalls renders the plugin's calls of the captured session n (1 or 2: the sessions of
// session.jsonl in order, split at session.created) as the adapter normalizes them, the
// summaries left out (the capture's plugin read no answer).
func liveCalls(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	session, contexts := 0, 0
	for _, c := range platformtest.Session(t, fixtureDir()) {
		if c.Event == "event" && strings.Contains(string(c.Payload), `"type": "session.created"`) {
			session, contexts = session+1, 0
		}
		if session != n {
			continue
		}
		event, payload := platformtest.OpenCodePluginEvent(t, c)
		if event == "" || event == platform.EventSummarize || event == platform.EventFileContext {
			continue
		}
		if event == platform.EventContext {
			if contexts++; contexts > 1 {
				continue // the plugin asks once per session
			}
		}
		in, err := Adapter{}.Normalize(event, payload)
		if err != nil {
			t.Fatal(err)
		}
		if r := platformtest.Rendered(event, in); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// TestReplayMatchesLiveHooks: each captured session, exported and replayed, gives the calls
// memnode's plugin made for it live (session.jsonl), as the adapter normalizes them — the
// private prompt, the failed read (a bus event live), the bash exit codes — and one
// summary per turn with the turn's last answer; a second replay gives the same IDs.
func TestReplayMatchesLiveHooks(t *testing.T) {
	answers := map[int]string{1: `Fixed the typo in greet(): it now returns "Hello, <name>", and python3 test_app.py passes.`}
	for n := 1; n <= 2; n++ {
		b := fixtureExport(t, n)
		rep, err := Replay(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Cwd != "/home/dev/demo-app" {
			t.Errorf("session %d: cwd %q", n, rep.Cwd)
		}
		var calls []platform.Recorded
		var summaries []platform.Input
		for _, c := range rep.Calls {
			if c.Event != platform.EventSummarize {
				calls = append(calls, c)
				continue
			}
			in, err := Adapter{}.Normalize(c.Event, c.Payload)
			if err != nil || in.LastAssistantMessage == nil {
				t.Fatalf("summary %s: %v %+v", c.Payload, err, in)
			}
			summaries = append(summaries, in)
		}
		live := liveCalls(t, n)
		if len(live) < 3 {
			t.Fatalf("session %d: only %d live calls", n, len(live))
		}
		platformtest.SameCalls(t, live, platformtest.RenderReplay(t, Adapter{}, calls))
		if len(summaries) != 1 || summaries[0].HookEventName != "session.idle" {
			t.Fatalf("session %d: %d summaries %+v", n, len(summaries), summaries)
		}
		if want, ok := answers[n]; ok && *summaries[0].LastAssistantMessage != want {
			t.Errorf("session %d's answer: %q", n, *summaries[0].LastAssistantMessage)
		}
		if n == 1 && !strings.Contains(rep.Calls[1].TurnPrompt, "<private>") || strings.HasPrefix(rep.Calls[1].TurnPrompt, `"`) {
			t.Errorf("session %d's turn prompt %q: want the unquoted prompt", n, rep.Calls[1].TurnPrompt)
		}
		again, _ := Replay(bytes.NewReader(b))
		for i := range rep.Calls {
			if rep.Calls[i].ID != again.Calls[i].ID {
				t.Errorf("IDs differ between two reads: %s %s", rep.Calls[i].ID, again.Calls[i].ID)
			}
		}
	}
}

// TestReplayDropsFileContext: the file context the plugin appended to a read's output
// (stored with it) is not part of the replayed observation; other text is kept.
func TestReplayDropsFileContext(t *testing.T) {
	tail := "\n\nmemnode: app.py has 2 prior observation(s); for details call memnode_get_observations([IDs]) with IDs from this list.\n### Nov 28\nabc 9:14a fixed"
	for _, c := range []struct{ tool, in, want string }{
		{"read", "<content>x</content>" + tail, "<content>x</content>"},
		{"read", "<content>\n\nmemnode: a note in the file</content>", "<content>\n\nmemnode: a note in the file</content>"},
		{"bash", "out" + tail, "out" + tail},
	} {
		raw, _ := json.Marshal(c.in)
		var got string
		if err := json.Unmarshal(withoutFileContext(c.tool, raw), &got); err != nil || got != c.want {
			t.Errorf("%s %q: %q %v", c.tool, c.in, got, err)
		}
	}
}

// TestReplayRefusesOtherFiles: a file that is not an export is an error; an export of no
// session replays to nothing.
func TestReplayRefusesOtherFiles(t *testing.T) {
	for _, in := range []string{"", "not json", `[1,2]`, `{"info": {"id": 5}}`} {
		if _, err := Replay(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	if rep, err := Replay(strings.NewReader(`{"info": {}, "messages": []}`)); err != nil || len(rep.Calls) != 0 {
		t.Errorf("an empty export: %d calls, %v", len(rep.Calls), err)
	}
}

// FuzzReplay fuzzes the export reader (a parser of untrusted files), seeded with the
// captured sessions: every call it returns is a JSON payload with an ID that the adapter
// normalizes.
func FuzzReplay(f *testing.F) {
	for n := 1; n <= 2; n++ {
		f.Add(fixtureExport(f, n))
	}
	f.Add([]byte(`{"info":{"id":"ses_1","directory":"/p"},"messages":[{"info":{"id":"m","role":"user"},"parts":[{"type":"text","text":"\"hi\""}]},{"info":{"id":"a","role":"assistant"},"parts":[{"type":"tool","tool":"bash","callID":"c","state":{"status":"error","input":null,"error":"x"}}]}]}`))
	platformtest.FuzzReplay(f, Adapter{}, fixtureDir(), func(b []byte) (platform.Replayed, error) { return Replay(bytes.NewReader(b)) })
}
