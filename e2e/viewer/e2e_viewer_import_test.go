package viewer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"
)

// TestViewerImportsPastSessions: on a new install whose HOME holds past Claude Code and
// Codex sessions, the viewer's empty feed offers each agent's sessions (GET
// /api/viewer/firstrun); the Claude Code button imports them in the node (POST
// /api/viewer/import) while a status line shows the progress and then what was imported;
// the session's records appear in the feed, the Codex offer stays untouched, and no
// private or secret byte reaches the data dir — in a real Chromium against `memnode run`.
func TestViewerImportsPastSessions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("browser test skipped in -short")
	}
	home := t.TempDir() // the agents' files: apart from the data dir, whose bytes are checked
	in := e2ekit.NewInstance(t)
	in.Extra = append(in.Extra, "HOME="+home, "CODEX_HOME=")
	proj := e2ekit.GitDir(t, "demo-app")
	start := time.Date(2026, 11, 28, 9, 14, 0, 0, time.UTC)
	ccFile := filepath.Join(home, ".claude", "projects", "-home-dev-demo-app", "5f0c9a3e-1b2d-4c7e-9f10-aa11bb22cc33.jsonl")
	os.MkdirAll(filepath.Dir(ccFile), 0o700)
	for _, s := range e2ekit.GenClaudeSession("5f0c9a3e-1b2d-4c7e-9f10-aa11bb22cc33", proj, start) {
		e2ekit.AppendJSONL(t, ccFile, s.Lines)
	}
	codexFile := filepath.Join(home, ".codex", "sessions", "2026", "11", "28", "rollout-2026-11-28T09-14-00-019ac0de.jsonl")
	os.MkdirAll(filepath.Dir(codexFile), 0o700)
	for _, s := range e2ekit.GenCodexSession("019ac0de-6d6a-7042-a931-bbc0db2b3795", proj, codexFile, start) {
		e2ekit.AppendJSONL(t, codexFile, s.Lines)
	}
	runNode(t, in)
	b := e2ekit.NewBrowser(t)
	e2ekit.LoginViewer(t, b, in, 0)

	b.WaitJS("the import offers", `document.querySelectorAll('#first-run .history-offer').length === 2`, 15*time.Second)
	offer := e2ekit.Eval[string](b, `document.querySelector('.history-offer[data-platform="claude-code"]').textContent`)
	if !strings.Contains(offer, "Claude Code has 1 past sessions") || !strings.Contains(offer, "Import 1 Claude Code sessions") ||
		!strings.Contains(offer, "memnode import --from-claude-code") {
		t.Errorf("the Claude Code offer says %q", offer)
	}
	if codex := e2ekit.Eval[string](b, `document.querySelector('.history-offer[data-platform="codex"]').textContent`); !strings.Contains(codex, "Codex CLI has 1 past sessions") {
		t.Errorf("the Codex offer says %q", codex)
	}
	b.Shot("first-run-import-offers")

	b.WaitJS("the import to start", `(document.querySelector('.history-offer[data-platform="claude-code"] .import-button').click(), true)`, 5*time.Second)
	defer func() {
		if t.Failed() {
			t.Logf("status line: %q", e2ekit.Eval[string](b, `document.getElementById('import-progress')?.textContent || 'none'`))
		}
	}()
	b.WaitJS("the import's summary", `document.getElementById('import-progress')?.textContent.includes('imported 1 Claude Code sessions')`, 60*time.Second)
	b.Shot("import-done")
	b.WaitJS("the session's records in the feed", `[...document.querySelectorAll('#feed .card')].some((c) => c.textContent.includes('refresh'))`, 60*time.Second)

	var platforms []string
	rows, err := in.Db().Query("SELECT platform FROM sessions ORDER BY platform")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p string
		rows.Scan(&p)
		platforms = append(platforms, p)
	}
	rows.Close()
	if strings.Join(platforms, ",") != "claude-code" {
		t.Errorf("sessions after the Claude Code import: %v (the Codex offer was not taken)", platforms)
	}
	// A second import while none runs: the node answers its state, nothing twice.
	if st := in.MustRun(nil, "import", "--from-claude-code", filepath.Dir(filepath.Dir(ccFile)), "--quiet"); !strings.Contains(st, "imported 1 Claude Code sessions") {
		t.Errorf("the CLI import after the viewer's said %q", st)
	}
	e2ekit.GrepDataDir(t, in.DataDir, "SECRET-")
}
