package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/hooks"
)

// cmdPin pins an observation: it heads every session-start context of its project.
func cmdPin(ctx context.Context, env *cliEnv, args []string) int {
	return runPin(ctx, env, args, true)
}

// cmdUnpin takes the pin off.
func cmdUnpin(ctx context.Context, env *cliEnv, args []string) int {
	return runPin(ctx, env, args, false)
}

func runPin(ctx context.Context, env *cliEnv, args []string, pinned bool) int {
	name := "pin"
	if !pinned {
		name = "unpin"
	}
	fs := newFlags(env, name, name+" ID [--json]")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	pos, code, ok := fs.parse(args, 1, 1)
	if !ok {
		return code
	}
	res, err := newNodeConn(env).Pin(ctx, apitype.Pin{ID: pos[0], Pinned: pinned})
	if err != nil {
		return fail(env, "%s: %v", name, err)
	}
	if *asJSON {
		return printJSON(env, res)
	}
	where := "every session of project " + res.Project + " starts with it"
	if !pinned {
		where = "it no longer heads the context of project " + res.Project
	}
	fmt.Fprintf(env.Stdout, "%s %sned (%q): %s, on every device\n", orID(res.Short, res.ID), name, res.Title, where)
	return 0
}

// cmdSave saves a note by hand, for this directory's project, another, or every project.
func cmdSave(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "save", `save "TEXT" [--global | --project P] [--pin] [--title T] [--type T] [--json]`)
	global := fs.Bool("global", false, "a note for every project: it heads every session's context")
	project := fs.String("project", "", "the project (default: this directory's)")
	pin := fs.Bool("pin", false, "pin it: every session of its project starts with it")
	title := fs.String("title", "", "a short title (default: the start of the text)")
	typ := fs.String("type", "", "note (default), decision, discovery, …")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	pos, code, ok := fs.parse(args, 1, -1)
	if !ok {
		return code
	}
	if *global && *project != "" {
		return fs.usageErr("--global and --project exclude each other")
	}
	n := apitype.Note{Text: strings.Join(pos, " "), Title: *title, Type: *typ, Project: *project, Pin: *pin}
	if *global {
		n.Scope = apitype.ScopeGlobal
	} else if n.Project == "" {
		home, _ := os.UserHomeDir()
		wd, err := os.Getwd()
		if err != nil {
			return fail(env, "save: %v (name the project with --project)", err)
		}
		n.Project = hooks.ProjectName(wd, home)
	}
	res, err := newNodeConn(env).SaveNote(ctx, n)
	if err != nil {
		return fail(env, "save: %v", err)
	}
	if *asJSON {
		return printJSON(env, res)
	}
	switch {
	case res.Duplicate:
		fmt.Fprintln(env.Stdout, "already in memory (an identical note exists)")
	case *global:
		fmt.Fprintf(env.Stdout, "saved %s as a global note: every project's sessions start with it\n", res.ID)
	case *pin:
		fmt.Fprintf(env.Stdout, "saved %s in project %s, pinned\n", res.ID, n.Project)
	default:
		fmt.Fprintf(env.Stdout, "saved %s in project %s\n", res.ID, n.Project)
	}
	return 0
}
