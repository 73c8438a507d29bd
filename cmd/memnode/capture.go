package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/memnode/memnode/capture"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/datadir"
)

// cmdPause stops recording: every project, or one, until resumed or for a while.
func cmdPause(_ context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "pause", "pause [PROJECT|.] [--for 2h]   (no PROJECT: every project; '.': this directory's)")
	d := fs.Duration("for", 0, "resume by itself after this long (e.g. 2h; default: until 'memnode resume')")
	pos, code, ok := fs.parse(args, 0, 1)
	if !ok {
		return code
	}
	if *d < 0 {
		return fs.usageErr("--for must be positive, not %s", *d)
	}
	project := captureProject(pos)
	return editCapture(env, func(s *capture.State, now time.Time) string {
		s.Pause(project, now, *d)
		e, _ := s.PauseOf(project, now)
		return capture.Entry{Project: project, Pause: e}.String() + ": hooks send nothing, and start no node, for it"
	})
}

// cmdResume ends a pause: every one (no PROJECT) or one project's.
func cmdResume(_ context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "resume", "resume [PROJECT|.]   (no PROJECT: every pause)")
	pos, code, ok := fs.parse(args, 0, 1)
	if !ok {
		return code
	}
	project := captureProject(pos)
	return editCapture(env, func(s *capture.State, now time.Time) string {
		had := s.Resume(project)
		who := "project " + project
		if project == capture.AllProjects {
			who = "all projects"
		}
		switch {
		case !had:
			return who + ": nothing was paused"
		case project != capture.AllProjects:
			if p, still := s.PauseOf(project, now); still {
				return who + " resumed, but " + capture.Entry{Project: capture.AllProjects, Pause: p}.String()
			}
		}
		return who + " recorded again"
	})
}

// cmdTrack opts a project in (setting capture: opt-in), or takes it off with --remove.
func cmdTrack(_ context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "track", "track [PROJECT] [--remove] [--list]   (no PROJECT: this directory's)")
	remove := fs.Bool("remove", false, "take the project off the list")
	list := fs.Bool("list", false, "list the tracked projects")
	pos, code, ok := fs.parse(args, 0, 1)
	if !ok {
		return code
	}
	if *list {
		st, err := capture.Load(datadir.Dir(env.DataDir).Capture())
		if err != nil {
			return fail(env, "track: %v", err)
		}
		for _, p := range st.Tracked {
			fmt.Fprintln(env.Stdout, p)
		}
		if len(st.Tracked) == 0 {
			fmt.Fprintf(env.Stdout, "no project is tracked by name (a %s file in a project's root tracks it too)\n", capture.MarkerFile)
		}
		return 0
	}
	project := "."
	if len(pos) == 1 {
		project = pos[0]
	}
	project = captureProject([]string{project})
	code = editCapture(env, func(s *capture.State, _ time.Time) string {
		if *remove {
			if !s.Untrack(project) {
				return "project " + project + " was not tracked by name"
			}
			return "project " + project + " no longer tracked"
		}
		if !s.Track(project) {
			return "project " + project + " is tracked already"
		}
		return "project " + project + " tracked"
	})
	if code == 0 && !env.Settings.OptIn() {
		fmt.Fprintf(env.Stdout, "note: capture is %q, so every project is recorded anyway; 'memnode config set capture %s' records only tracked ones\n",
			configs.CaptureAll, configs.CaptureOptIn)
	}
	return code
}

// captureProject is the project a pause/resume/track argument names: none is every project,
// "." the current directory's (named as hooks name it).
func captureProject(pos []string) string {
	if len(pos) == 0 || pos[0] == "" || pos[0] == capture.AllProjects {
		return capture.AllProjects
	}
	if pos[0] != "." {
		return pos[0]
	}
	home, _ := os.UserHomeDir()
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return hooks.ProjectName(wd, home)
}

// editCapture loads the capture switches, applies change and saves them; change returns
// the line to print.
func editCapture(env *cliEnv, change func(*capture.State, time.Time) string) int {
	path := datadir.Dir(env.DataDir).Capture()
	st, err := capture.Load(path)
	if err != nil {
		// The file is the user's switch; a broken one is replaced, not obeyed blindly.
		fmt.Fprintf(env.Stderr, "memnode: %v; starting from an empty one\n", err)
		st = capture.State{}
	}
	now := time.Now()
	st.Prune(now)
	msg := change(&st, now)
	if err := capture.Save(path, st); err != nil {
		return fail(env, "%v", err)
	}
	fmt.Fprintln(env.Stdout, msg)
	return 0
}

// captureLines says what is not recorded right now: each active pause, and the opt-in mode.
// Empty when every project is recorded.
func captureLines(env *cliEnv) []string {
	st, err := capture.Load(datadir.Dir(env.DataDir).Capture())
	if err != nil {
		return []string{err.Error() + " (hooks record nothing until 'memnode resume' rewrites it)"}
	}
	return st.Describe(env.Settings.OptIn(), time.Now())
}
