package main

import (
	"slices"
	"testing"
)

func TestScanListsTheTestsThatCannotFail(t *testing.T) {
	found, read, err := scan("testdata")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"testdata/p/x_test.go:10 TestLogOnly", "testdata/p/x_test.go:24 TestSubtestNoFail", "testdata/p/x_test.go:8 TestNothing"}
	if !slices.Equal(found, want) || read != 5 {
		t.Fatalf("scan listed %q of %d tests; want %q of 5", found, read, want)
	}
}
