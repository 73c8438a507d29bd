package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestHelpNamesEveryQueryFlag: the one-line help of search and timeline (what `memnode help`
// prints, and the README copies) names every flag the command parses — a flag added to the
// FlagSet and not to the help line is a flag no user finds.
func TestHelpNamesEveryQueryFlag(t *testing.T) {
	table := commandTable()
	flagLine := regexp.MustCompile(`(?m)^  -([a-z][a-z-]*)`)
	for _, name := range []string{"search", "timeline"} {
		var out, errb bytes.Buffer
		runMain(context.Background(), []string{name, "--help"}, strings.NewReader(""), &out, &errb, func(string) string { return "" })
		flags := flagLine.FindAllStringSubmatch(errb.String()+out.String(), -1)
		if len(flags) < 3 {
			t.Fatalf("%s --help lists %d flags:\n%s%s", name, len(flags), out.String(), errb.String())
		}
		summary := table[name].summary
		for _, f := range flags {
			if !regexp.MustCompile(`--` + regexp.QuoteMeta(f[1]) + `\b`).MatchString(summary) {
				t.Errorf("memnode help's %s line does not name --%s: %q", name, f[1], summary)
			}
		}
	}
}
