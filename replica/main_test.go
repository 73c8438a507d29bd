package replica

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/memnode/memnode/internal/dbtemplate"
)

// migrated is the schema the tests' fresh databases start from: built once per test binary
// by Open itself, then copied (see PlaceMigrated). The migration tests, and the tests of
// what Open does to a new file, open their databases without it.
var migrated = dbtemplate.New(func(path string) error {
	r, err := Open(context.Background(), Config{Path: path, Origin: "template"})
	if err != nil {
		return err
	}
	return r.Close()
})

// shortChecks is rapid's -rapid.checks under -short unless the command line gives one:
// rapid itself runs a fifth of it under -short, so each property tries 10 cases in the inner
// loop (20 with rapid's default of 100); make test runs the full 100.
const shortChecks = 50

// raceChecks is rapid's -rapid.checks under the race detector unless the command line gives
// one. make test runs every property with rapid's 100 cases in its plain run; its -race run
// is there for data races, which come from the concurrent paths every case takes, not from
// the hundredth random case. With 100 cases under -race the properties were most of
// replica's race run (221 s of package time in .ci/run at load 3; the whole plain run: 135 s).
const raceChecks = 20

func TestMain(m *testing.M) {
	flag.Parse()
	if checks := checksFor(testing.Short(), raceDetector); checks > 0 && !flagGiven("rapid.checks") {
		if err := flag.Set("rapid.checks", fmt.Sprint(checks)); err != nil {
			fmt.Fprintln(os.Stderr, "replica tests:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// checksFor is the -rapid.checks a run sets, 0 for rapid's default: the fewer of the
// -short and the race detector's when both apply.
func checksFor(short, race bool) int {
	switch {
	case race:
		return raceChecks
	case short:
		return shortChecks
	}
	return 0
}

// flagGiven says whether the command line set the flag.
func flagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
