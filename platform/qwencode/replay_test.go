package qwencode

import (
	"bytes"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/platformtest"
)

func liveRendered(t *testing.T, transcript string) []string {
	return platformtest.LiveRendered(t, Adapter{}, fixtureDir(), transcript, HookSpecs())
}

// TestReplayMatchesLiveHooks: each captured session file of Qwen Code, replayed, gives the
// hook calls Qwen Code made for that session (captured in session.jsonl), as the adapter
// normalizes them.
func TestReplayMatchesLiveHooks(t *testing.T) {
	platformtest.ReplayMatchesLive(t, Adapter{}, fixtureDir(), "/home/dev/demo-app", replayBytes, func(transcript string) []string {
		// qwen -p fires no SessionEnd (the capture's runs); an interactive session does, and
		// an imported session is over.
		return append(liveRendered(t, transcript), platform.EventSessionEnd)
	})
}

func replayBytes(b []byte) (platform.Replayed, error) { return Replay(bytes.NewReader(b)) }

func FuzzReplay(f *testing.F) { platformtest.FuzzReplay(f, Adapter{}, fixtureDir(), replayBytes) }
