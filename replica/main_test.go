package replica

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// shortChecks is rapid's -rapid.checks under -short unless the command line gives one:
// rapid itself runs a fifth of it under -short, so each property tries 10 cases in the inner
// loop (20 with rapid's default of 100); make test runs the full 100.
const shortChecks = 50

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && !flagGiven("rapid.checks") {
		if err := flag.Set("rapid.checks", fmt.Sprint(shortChecks)); err != nil {
			fmt.Fprintln(os.Stderr, "replica tests:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// flagGiven says whether the command line set the flag.
func flagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
