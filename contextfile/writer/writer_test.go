package writer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
)

var mdc = contextfile.Spec{Path: ".cursor/rules/memnode-context.mdc", Header: "---\nalwaysApply: true\n---"}

// render is what the node's context would be: the project's summaries, newest first.
func render(rep *replica.Replica) func(ctx context.Context, project string) (string, error) {
	return func(ctx context.Context, project string) (string, error) {
		sums, err := rep.RecentSummaries(ctx, project, 10)
		if err != nil || len(sums) == 0 {
			return "", err
		}
		var b strings.Builder
		for _, s := range sums {
			b.WriteString("- " + s.Request + "\n")
		}
		return b.String(), nil
	}
}

func fileText(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func TestWriterRewritesTheFileAfterEachSummaryAndForget(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := context.Background()
	rep, bus := testkit.OpenReplicaWithFeed(t, "dev-a")
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "pkg", "parser")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	targets := filepath.Join(t.TempDir(), "state", "context-files.json")
	w := New(Config{
		Targets: targets,
		Specs:   map[string]contextfile.Spec{"cursor": mdc},
		Feed:    bus,
		ProjectOf: func(ctx context.Context, id string) (string, bool, error) {
			rec, ok, err := rep.Lookup(ctx, id)
			if err != nil || !ok || rec.Summary == nil {
				return "", false, err
			}
			return rec.Summary.Project, true, nil
		},
		Render: render(rep),
		RootOf: func(cwd string) string { return hooks.ProjectRoot(cwd, "") },
	})
	w.Start()
	defer w.Close()

	w.Note("claude-code", "proj", sub) // has no context file: never a target
	w.Note("cursor", "proj", sub)
	res, err := rep.Commit(ctx, &store.Batch{Summaries: []memory.Summary{
		{SessionID: "s1", Project: "proj", Request: "taught the parser about tabs", CreatedAt: 100},
	}})
	if err != nil {
		t.Fatal(err)
	}
	path := mdc.File(root)
	testkit.WaitFor(t, "context file with the summary", 5*time.Second, func() bool {
		return strings.Contains(fileText(path), "taught the parser about tabs")
	})
	if s := fileText(path); !strings.HasPrefix(s, "---\nalwaysApply: true\n---\n") {
		t.Fatalf("file lacks its front matter:\n%s", s)
	}
	ts, err := contextfile.LoadTargets(targets)
	if err != nil || len(ts) != 1 || ts[0] != (contextfile.Target{Platform: "cursor", Project: "proj", Root: root}) {
		t.Fatalf("targets = %v, %v; want the cursor target at the git root", ts, err)
	}

	// Another project's summary leaves this file alone; a forget rewrites it.
	if _, err := rep.Commit(ctx, &store.Batch{Summaries: []memory.Summary{
		{SessionID: "s2", Project: "other", Request: "unrelated work", CreatedAt: 200},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rep.Forget(ctx, []string{res.Summaries[0].ID}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "forgotten summary gone from the file", 5*time.Second, func() bool {
		return !strings.Contains(fileText(path), "taught the parser")
	})
	if strings.Contains(fileText(path), "unrelated work") {
		t.Fatalf("another project's memory leaked into this project's file:\n%s", fileText(path))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
}

func TestWriterDropsATargetWhoseDirectoryIsGone(t *testing.T) {
	testkit.LeakCheck(t)
	ctx := context.Background()
	rep, bus := testkit.OpenReplicaWithFeed(t, "dev-a")
	targets := filepath.Join(t.TempDir(), "context-files.json")
	gone := filepath.Join(t.TempDir(), "deleted-project")
	if _, err := contextfile.AddTarget(targets, contextfile.Target{Platform: "cursor", Project: "proj", Root: gone}); err != nil {
		t.Fatal(err)
	}
	w := New(Config{Targets: targets, Specs: map[string]contextfile.Spec{"cursor": mdc}, Feed: bus,
		ProjectOf: func(context.Context, string) (string, bool, error) { return "proj", true, nil },
		Render:    render(rep), RootOf: func(cwd string) string { return cwd }})
	w.Start()
	defer w.Close()
	if _, err := rep.Commit(ctx, &store.Batch{Summaries: []memory.Summary{{SessionID: "s", Project: "proj", Request: "r", CreatedAt: 1}}}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "target dropped", 5*time.Second, func() bool {
		ts, err := contextfile.LoadTargets(targets)
		return err == nil && len(ts) == 0
	})
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Fatalf("the writer created a directory that was gone: %v", err)
	}
}

func TestCloseWithoutStart(t *testing.T) {
	w := New(Config{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Start() // after Close: does nothing
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
