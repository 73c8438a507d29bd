package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// cmdFlags is the flag set of one command (or subcommand). Every mistake in its arguments
// is one line on stderr and exit 2, before the command does anything: `memnode stop --frob`
// must not stop the node. --help prints the synopsis and the flags on stdout.
type cmdFlags struct {
	*flag.FlagSet
	env      *cliEnv
	name     string // "search", "peers remove"
	synopsis string // "search QUERY [--project P …]"
}

// newFlags returns the flag set of command name, whose usage is "memnode " + synopsis.
func newFlags(env *cliEnv, name, synopsis string) *cmdFlags {
	fs := flag.NewFlagSet("memnode "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Go's usage dump is 4–30 lines; parse prints one
	f := &cmdFlags{FlagSet: fs, env: env, name: name, synopsis: synopsis}
	fs.Usage = func() {} // flag calls it on every error too; parse prints the help itself
	return f
}

// parse parses args — flags may come before or after the positional arguments, "--" ends
// the flags — and checks that there are at least lo and at most hi positional arguments
// (hi < 0: no limit). When ok is false the command returns code at once: 0 after --help,
// 2 after a usage error, which parse has already reported.
func (f *cmdFlags) parse(args []string, lo, hi int) (pos []string, code int, ok bool) {
	pos, err := parseMixed(f.FlagSet, args)
	switch {
	case err == flag.ErrHelp:
		fmt.Fprintf(f.env.Stdout, "usage: memnode %s\n", f.synopsis)
		f.SetOutput(f.env.Stdout)
		f.PrintDefaults()
		f.SetOutput(io.Discard)
		return nil, 0, false
	case err != nil:
		msg := err.Error()
		if name, found := strings.CutPrefix(msg, "flag provided but not defined: "); found {
			msg = "unknown flag -" + name
		}
		return nil, f.usageErr("%s", msg), false
	case len(pos) < lo:
		return nil, f.usageErr("missing argument"), false
	case hi >= 0 && len(pos) > hi:
		return nil, f.usageErr("unexpected argument %q", pos[hi]), false
	}
	return pos, 0, true
}

// usageErr reports a usage mistake on one line with the command's synopsis and returns 2.
func (f *cmdFlags) usageErr(format string, a ...any) int {
	fmt.Fprintf(f.env.Stderr, "memnode: %s: %s (usage: memnode %s)\n", f.name, fmt.Sprintf(format, a...), f.synopsis)
	return 2
}

// unknownSub is the one line for a subcommand that does not exist; it returns 2.
func unknownSub(env *cliEnv, cmd, sub, subs string) int {
	if sub == "" {
		fmt.Fprintf(env.Stderr, "memnode: %s: missing subcommand (want %s; 'memnode %s help' explains them)\n", cmd, subs, cmd)
	} else {
		fmt.Fprintf(env.Stderr, "memnode: %s: unknown subcommand %q (want %s; 'memnode %s help' explains them)\n", cmd, sub, subs, cmd)
	}
	return 2
}
