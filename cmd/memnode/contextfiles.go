package main

import (
	"path/filepath"

	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/platform"
)

// registerContextFile makes a project-scope install of a platform with a context file a
// target of the node's writer: the file is written there after the project's next summary
// (agents without hooks send no event that would name the project).
func registerContextFile(dataDir string, p platform.Platform, opts install.Options) ([]install.Change, error) {
	if p.ContextFile.Zero() || opts.Scope != install.ScopeProject {
		return nil, nil
	}
	home := opts.HomeDir
	root := hooks.ProjectRoot(opts.ProjectDir, home)
	t := contextfile.Target{Platform: p.Name, Project: hooks.ProjectName(opts.ProjectDir, home), Root: root}
	if _, err := contextfile.AddTarget(datadir.Dir(dataDir).ContextFiles(), t); err != nil {
		return nil, err
	}
	return []install.Change{{Path: p.ContextFile.File(root), Action: "unchanged", Detail: "memnode keeps its context here after each session summary"}}, nil
}

// removeContextFiles takes memnode's block out of the platform's context files: in every
// project the node wrote one for (user scope), or in this project (project scope), and
// forgets those targets so the node writes them no more.
func removeContextFiles(dataDir string, p platform.Platform, opts install.Options) ([]install.Change, error) {
	if p.ContextFile.Zero() {
		return nil, nil
	}
	var root string
	if opts.Scope == install.ScopeProject {
		root = hooks.ProjectRoot(opts.ProjectDir, opts.HomeDir)
	}
	gone, err := contextfile.DropTargets(datadir.Dir(dataDir).ContextFiles(), func(t contextfile.Target) bool {
		return t.Platform == p.Name && (root == "" || filepath.Clean(t.Root) == root)
	})
	if err != nil {
		return nil, err
	}
	roots := map[string]bool{}
	if root != "" {
		roots[root] = true
	}
	for _, t := range gone {
		roots[t.Root] = true
	}
	var changes []install.Change
	for r := range roots {
		path := p.ContextFile.File(r)
		action, err := contextfile.Remove(path, p.ContextFile)
		if err != nil {
			return changes, err
		}
		if action != contextfile.Absent {
			changes = append(changes, install.Change{Path: path, Action: action, Detail: "memnode context"})
		}
	}
	return changes, nil
}
