package offline

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// keywordsJSON is the data the heuristics react to: concept words, the words of a prompt
// that mark a bug fix, refactor or feature, and the shell commands that are quiet, change
// files, read files, run tests or build.
//
//go:embed keywords.json
var keywordsJSON []byte

// vocab is keywords.json decoded for lookups. Read-only once built.
type vocab struct {
	concept                   map[string]string // word → concept
	bug, refactor, feature    map[string]bool
	quiet, change, read       map[string]bool
	testRunners, buildRunners []string
}

// parseVocab decodes keywords.json; every list must be present.
func parseVocab(b []byte) (*vocab, error) {
	var f struct {
		Concepts map[string][]string `json:"concepts"`
		Intent   struct {
			Bug, Refactor, Feature []string
		} `json:"intent"`
		Commands struct {
			Quiet, Change, Read []string
			TestRunners         []string `json:"test_runners"`
			BuildRunners        []string `json:"build_runners"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("decode keywords: %w", err)
	}
	v := &vocab{
		concept: map[string]string{},
		bug:     set(f.Intent.Bug), refactor: set(f.Intent.Refactor), feature: set(f.Intent.Feature),
		quiet: set(f.Commands.Quiet), change: set(f.Commands.Change), read: set(f.Commands.Read),
		testRunners: f.Commands.TestRunners, buildRunners: f.Commands.BuildRunners,
	}
	for c, words := range f.Concepts {
		for _, w := range words {
			if prev, dup := v.concept[w]; dup {
				return nil, fmt.Errorf("decode keywords: %q is both %s and %s", w, prev, c)
			}
			v.concept[w] = c
		}
	}
	for name, n := range map[string]int{"concepts": len(v.concept), "intent.bug": len(v.bug), "intent.refactor": len(v.refactor),
		"intent.feature": len(v.feature), "commands.quiet": len(v.quiet), "commands.change": len(v.change),
		"commands.read": len(v.read), "commands.test_runners": len(v.testRunners), "commands.build_runners": len(v.buildRunners)} {
		if n == 0 {
			return nil, fmt.Errorf("decode keywords: %s is empty", name)
		}
	}
	return v, nil
}

func set(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
