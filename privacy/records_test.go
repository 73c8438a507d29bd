package privacy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memnode/memnode/memory"
)

// TestCleanRecordsEveryField plants a marker in every string field of every record kind:
// none may survive, whichever field it was in.
func TestCleanRecordsEveryField(t *testing.T) {
	const m = "<private>MARKER-rec</private>"
	secret := "ghp_" + fake(36)
	sess := memory.Session{ID: "s" + m, Project: "p" + m, Platform: m, Status: "active" + m, Origin: m}
	prompt := memory.Prompt{ID: m, SessionID: m, Project: m, Text: "t " + m + " " + secret, Origin: m}
	obs := memory.Observation{ID: m, SessionID: m, Project: m, Type: m, Title: m, Subtitle: m, Narrative: m + secret,
		Facts: []string{m, "kept"}, Concepts: []string{m}, FilesRead: []string{"/a" + m}, FilesModified: []string{m},
		ToolName: m, Model: m, ContentHash: "stale", Origin: m}
	sum := memory.Summary{ID: m, SessionID: m, Project: m, Request: m, Investigated: m, Learned: m, Completed: m,
		NextSteps: m, Notes: m, Model: m, Origin: m}
	dev := memory.Device{Origin: m, Name: m}
	CleanSession(&sess)
	CleanPrompt(&prompt)
	CleanObservation(&obs)
	CleanSummary(&sum)
	CleanDevice(&dev)
	for _, v := range []any{sess, prompt, obs, sum, dev} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "MARKER") || strings.Contains(string(b), secret) {
			t.Errorf("marker survived: %s", b)
		}
	}
	if obs.ContentHash != "" {
		t.Errorf("content hash %q kept after the content changed", obs.ContentHash)
	}
	if len(obs.Facts) != 1 || obs.Facts[0] != "kept" || obs.Concepts != nil || obs.FilesRead[0] != "/a" {
		t.Errorf("lists: facts %q concepts %q files %q", obs.Facts, obs.Concepts, obs.FilesRead)
	}
	clean := memory.Observation{ID: "o1", SessionID: "s", Title: "t", ContentHash: "h"}
	CleanObservation(&clean)
	if clean.ContentHash != "h" {
		t.Errorf("content hash of an unchanged observation dropped")
	}
}
