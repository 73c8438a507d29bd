package geminicli

import (
	"bytes"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/platformtest"
)

func liveRendered(t *testing.T, transcript string) []string {
	return platformtest.LiveRendered(t, Adapter{}, fixtureDir(), transcript, HookSpecs())
}

// TestReplayMatchesLiveHooks: each captured session file of Gemini CLI, replayed, gives the
// hook calls Gemini CLI made for that session (captured in session.jsonl), as the adapter
// normalizes them.
func TestReplayMatchesLiveHooks(t *testing.T) {
	platformtest.ReplayMatchesLive(t, Adapter{}, fixtureDir(), "/home/dev/demo-app", replayBytes, func(tr string) []string { return liveRendered(t, tr) })
}

func replayBytes(b []byte) (platform.Replayed, error) {
	return Replay(bytes.NewReader(b), "/home/dev/demo-app")
}

func FuzzReplay(f *testing.F) { platformtest.FuzzReplay(f, Adapter{}, fixtureDir(), replayBytes) }
