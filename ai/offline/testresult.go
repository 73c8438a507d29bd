package offline

import (
	"encoding/json"
	"slices"
	"strings"
)

// verdict is what a test run's output says about it.
type verdict int

const (
	verdictUnknown verdict = iota // no result line was recognised: never reported as a pass
	verdictPass
	verdictFail
	verdictNone // the runner found no test to run
)

// testResult is a test run read from its output. Only a runner's closing lines (a summary
// with counts, "ok  pkg", "test result: ok.", "OK", "BUILD SUCCESS", …) make a pass: a line
// per passing test does not, so output cut off before the summary stays unknown. Any
// failing or erroring count above zero, any failure line and a non-zero exit make a
// failure, whatever else the output says.
type testResult struct {
	verdict verdict
	// failed is the largest failing count of one summary line (test files and suites
	// left out); passed, errors and total add up the summary lines' counts.
	failed, passed, errors, total int
	counted                       bool // a summary line with counts was read
	failSeen, passSeen, noTests   bool
	buildErr                      bool     // an error before any test ran: compile, import, collection
	names                         []string // failing tests, as the runner names them
	failLines, details, summaries []string
	noTestsLine                   string
	lines                         int    // output lines read
	last                          string // the last of them
}

// testSummaryLead are first words of summary lines whose counts follow a word, not a
// separator: vitest's "Tests  1 failed | 1 passed (2)", nextest's "Summary [0.01s] 2 tests run: …".
var testSummaryLead = map[string]bool{"tests": true, "test": true, "summary": true, "ran": true, "suites": true, "files": true}

// readTestOutput reads the lines of a test run's stdout and stderr (trimmed); the exit code
// line of a failed call's response ("Exit code 1") is not output.
func readTestOutput(stdout, stderr []string) testResult {
	var r testResult
	for _, l := range slices.Concat(stdout, stderr) {
		if strings.HasPrefix(l, "Error: Exit code") || strings.HasPrefix(l, "Exit code") {
			continue
		}
		r.lines++
		r.last = l
		if strings.HasPrefix(l, `{"`) && strings.Contains(l, `"Action":"`) {
			// go test -json: the text is in Output; a build failure is an action of its own.
			var ev struct{ Action, Test, Output string }
			if json.Unmarshal([]byte(l), &ev) != nil {
				continue
			}
			if ev.Action == "build-fail" {
				r.buildErr, r.failSeen = true, true
			}
			if l = strings.TrimSpace(ev.Output); l == "" {
				continue
			}
		}
		r.line(l)
	}
	fail := r.failSeen || r.failed > 0 || r.errors > 0 || len(r.names) > 0
	switch {
	case fail:
		r.verdict = verdictFail
	case r.noTests || (r.counted && r.passed == 0 && r.total == 0):
		r.verdict = verdictNone
	case r.passSeen || r.passed > 0:
		r.verdict = verdictPass
	}
	return r
}

func (r *testResult) fail(l string) { r.failSeen = true; r.failLines = appendUnique(r.failLines, l) }

// failing records a failing test by name and the line that names it.
func (r *testResult) failing(name, l string) {
	if name = strings.TrimSpace(name); name != "" {
		r.names = appendUnique(r.names, name)
	}
	r.fail(l)
}

// failingNames are the failing tests without go's subtests of a failing test
// ("TestX/case" when TestX failed too).
func (r *testResult) failingNames() []string {
	out := make([]string, 0, len(r.names))
	for _, n := range r.names {
		if i := strings.LastIndexByte(n, '/'); i > 0 && !strings.Contains(n, " ") && slices.Contains(r.names, n[:i]) {
			continue
		}
		out = append(out, n)
	}
	return out
}
func (r *testResult) none(l string) {
	r.noTests = true
	if r.noTestsLine == "" {
		r.noTestsLine = l
	}
}

// line reads one trimmed output line.
func (r *testResult) line(l string) {
	switch {
	case l == "FAIL" || l == "FAILURES!" || l == "ERRORS!" || l == "FAILED":
		r.failSeen = true
		return
	case l == "PASS" || l == "OK":
		r.passSeen = true
		return
	case strings.HasPrefix(l, "--- FAIL: "): // go
		n, _, _ := strings.Cut(l[len("--- FAIL: "):], " (")
		r.failing(n, l)
		return
	case strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "FAIL "): // go, jest, vitest, nextest
		if strings.Contains(l, "[build failed]") || strings.Contains(l, "[setup failed]") {
			r.buildErr = true
		}
		if _, n, ok := strings.Cut(l, " > "); ok { // vitest: FAIL  file > test
			r.failing(n, l)
		} else {
			r.fail(l)
		}
		return
	case strings.HasPrefix(l, "FAIL: ") || strings.HasPrefix(l, "ERROR: "): // unittest, automake
		_, n, _ := strings.Cut(l, ": ")
		if strings.Contains(l, "._FailedTest") { // a module that did not import
			r.buildErr = true
			r.fail(l)
			return
		}
		n, _, _ = strings.Cut(n, " (")
		r.failing(n, l)
		return
	case strings.HasPrefix(l, "FAILED "): // pytest: FAILED file::test - message
		n, _, _ := strings.Cut(l[len("FAILED "):], " - ")
		if strings.HasPrefix(n, "(") || strings.HasPrefix(n, "|") { // unittest: FAILED (failures=1); deno: FAILED | 1 passed | 1 failed
			r.counts(l)
			r.failSeen = true
			return
		}
		r.failing(n, l)
		return
	case strings.HasPrefix(l, "ERROR "): // pytest: ERROR file (collection) or ERROR file::test
		r.fail(l)
		if !strings.Contains(l, "::") {
			r.buildErr = true
		}
		return
	case strings.HasPrefix(l, "not ok "): // TAP (node --test)
		r.failing(tapName(l[len("not ok "):]), l)
		return
	case strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "ok\t"):
		rest := strings.TrimLeft(l[2:], " \t")
		if rest != "" && isDigit(rest[0]) {
			return // TAP: one passing test, not a result
		}
		if strings.Contains(l, "[no tests to run]") {
			r.none(l)
			return
		}
		r.passSeen = true // go: ok  pkg  0.01s
		r.summaries = append(r.summaries, l)
		return
	case strings.HasPrefix(l, "?") && strings.HasSuffix(l, "[no test files]"): // go
		r.none(l)
		return
	case strings.HasPrefix(l, "✕ ") || strings.HasPrefix(l, "× ") || strings.HasPrefix(l, "✗ ") ||
		strings.HasPrefix(l, "✖ ") || strings.HasPrefix(l, "(fail) "):
		_, n, _ := strings.Cut(l, " ")
		r.failing(trimTiming(n), l)
		return
	case strings.HasPrefix(l, "● "): // jest
		if n := l[len("● "):]; n == "Test suite failed to run" {
			r.buildErr = true
			r.fail(l)
		} else {
			r.failing(n, l)
		}
		return
	case strings.HasPrefix(l, "rspec ./") && strings.Contains(l, " # "): // rspec's failed examples
		_, n, _ := strings.Cut(l, " # ")
		r.failing(n, l)
		return
	case strings.Contains(l, " ... FAILED"): // cargo: test x ... FAILED; deno: x ... FAILED (2ms)
		n, _, _ := strings.Cut(strings.TrimPrefix(l, "test "), " ... FAILED")
		r.failing(n, l)
		return
	case strings.HasPrefix(l, "Failed ") && strings.HasSuffix(l, "]"): // dotnet: Failed Ns.Class.Test [4 ms]
		r.failing(trimTiming(l[len("Failed "):]), l)
		return
	case strings.Contains(l, "***Failed") || strings.Contains(l, "***Exception"): // ctest
		if _, n, ok := strings.Cut(l, ": "); ok {
			n, _, _ = strings.Cut(n, " .")
			r.failing(n, l)
		}
		return
	case verboseFailed(l): // pytest -v: file::test FAILED [ 50%]; gradle
		if strings.HasPrefix(l, "> Task ") {
			r.fail(l) // gradle: the task, not a test
			return
		}
		n, _, _ := strings.Cut(l, " FAILED")
		r.failing(n, l)
		return
	case strings.HasPrefix(l, "panic:") || strings.Contains(l, "panicked at") ||
		strings.HasPrefix(l, "make: *** ") || strings.HasPrefix(l, "make[") && strings.Contains(l, "*** ") ||
		strings.HasPrefix(l, "error: test failed") || strings.HasPrefix(l, "error: test run failed") ||
		strings.HasPrefix(l, "error: Test failed") || strings.HasPrefix(l, "Failed!") || strings.HasPrefix(l, "FAILED |") || strings.HasPrefix(l, "The following tests FAILED") ||
		strings.Contains(l, "BUILD FAILURE") || strings.Contains(l, "BUILD FAILED") || strings.Contains(l, "Build FAILED") ||
		strings.Contains(l, "There were failing tests") || strings.Contains(l, "test result: FAILED"):
		r.fail(l)
	case strings.HasPrefix(l, "error[E") || strings.HasPrefix(l, "error: could not compile") ||
		strings.Contains(l, "COMPILATION ERROR") || strings.Contains(l, "Compilation failed") ||
		strings.Contains(l, ": error CS") || strings.Contains(l, "error during collection") ||
		strings.HasPrefix(l, "Exception during run:") || strings.HasPrefix(strings.TrimPrefix(l, "# "), "SyntaxError") ||
		strings.HasPrefix(l, "An error occurred while loading") || strings.Contains(l, "Failed to parse source"):
		r.buildErr = true
		r.fail(l)
	case strings.HasPrefix(l, "Error: No test files found") || strings.HasPrefix(l, "No test files found") ||
		strings.HasPrefix(l, "No tests found") || l == "No tests executed!" || strings.HasPrefix(l, "No tests were found") ||
		l == "NO TESTS RAN" || l == "No examples found." || strings.HasPrefix(l, "no tests ran") ||
		l == "Tests  no tests" || l == "Tests no tests" || l == "No tests to run.":
		r.none(l)
	case strings.HasPrefix(l, "OK (") || strings.HasPrefix(l, "OK, but") ||
		strings.HasPrefix(l, "Passed!") || strings.HasPrefix(l, "ok |") || strings.Contains(l, "BUILD SUCCESS") ||
		strings.HasPrefix(l, "100% tests passed"):
		r.passSeen = true
		r.summaries = append(r.summaries, l)
	case strings.HasPrefix(l, "at ") || strings.HasPrefix(l, "E -") || strings.HasPrefix(l, "E +") || strings.HasPrefix(l, "E ?"):
		return // a stack frame, a line of a diff
	case fileLine(l) || strings.HasPrefix(l, "E ") || strings.Contains(l, "Error:") || strings.Contains(l, "expected") ||
		strings.HasPrefix(l, "Expected") || strings.HasPrefix(l, "assert") || strings.HasPrefix(l, "Failed asserting"):
		r.details = append(r.details, l)
		return // an assertion message is not a summary, whatever numbers it names
	}
	r.counts(l)
}

// verboseFailed reports whether a line ends in FAILED, or in FAILED and a progress
// bracket ("test_app.py::test_greet FAILED      [ 50%]").
func verboseFailed(l string) bool {
	i := strings.LastIndex(l, " FAILED")
	if i < 0 {
		return false
	}
	rest := strings.TrimSpace(l[i+len(" FAILED"):])
	return rest == "" || rest[0] == '['
}

// tapName is the name in a TAP line's rest: "2 - subtracts" → "subtracts".
func tapName(s string) string {
	if _, n, ok := strings.Cut(s, " - "); ok {
		s = n
	}
	n, _, _ := strings.Cut(s, " # ")
	return n
}

// trimTiming drops a trailing "(11 ms)", "[0.31ms]" or " 48ms".
func trimTiming(s string) string {
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	if i := strings.LastIndex(s, " ["); i > 0 && strings.HasSuffix(s, "]") {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, ' '); i > 0 && strings.HasSuffix(s, "ms") && isDigit(s[i+1]) {
		s = s[:i]
	}
	return s
}

// countKind maps the words of runners' summary lines to what they count.
func countKind(w string) byte {
	switch w {
	case "failed", "failing", "failures", "failure", "fail":
		return 'f'
	case "error", "errors", "errored":
		return 'e'
	case "passed", "passing", "pass", "succeeded":
		return 'p'
	case "tests", "total", "examples", "runs", "test", "run":
		return 't'
	}
	return 0
}

// counts reads a summary line's counts: "1 failed, 1 passed in 0.1s", "test result: FAILED.
// 1 passed; 1 failed", "Tests run: 2, Failures: 1", "# fail 1", "FAILED (failures=1)",
// "2 examples, 0 failures". A count is taken only where a summary puts one: "N word" with
// the number at the line's start or after punctuation (anywhere on a line that starts with
// a summary word), "Word: N" with the word at the start or after punctuation, so prose
// ("handled 3 errors") is not read as a result.
func (r *testResult) counts(l string) {
	if len(l) > 300 || !strings.ContainsAny(l, "0123456789") {
		return
	}
	lower := strings.ToLower(l)
	var buf [64]token
	toks := buf[:0]
	for i := 0; i < len(lower) && len(toks) < len(buf); {
		if !tokenByte(lower[i]) {
			i++
			continue
		}
		j := i
		for j < len(lower) && tokenByte(lower[j]) {
			j++
		}
		toks = append(toks, token{lower[i:j], i})
		i = j
	}
	if len(toks) == 0 {
		return
	}
	lead := testSummaryLead[toks[0].s]
	suites := strings.HasPrefix(lower, "test suites") || strings.HasPrefix(lower, "test files")
	var f, p, e, t int
	found, failKind := false, false
	for i, tk := range toks {
		n, ok := atoiWord(tk.s)
		if !ok || tk.at > 1 && lower[tk.at-1] == '.' && isDigit(lower[tk.at-2]) ||
			tk.end()+1 < len(lower) && lower[tk.end()] == '.' && isDigit(lower[tk.end()+1]) {
			continue // not a whole number: a count is one
		}
		kind := byte(0)
		if j := i + 1; j < len(toks) && tokGap(lower, toks, i, j) == "" && (lead || tk.at == 0 || isPunct(prevNonSpace(lower, tk.at))) {
			if (toks[j].s == "tests" || toks[j].s == "test") && j+1 < len(toks) && tokGap(lower, toks, j, j+1) == "" {
				if k := countKind(toks[j+1].s); k != 0 && k != 't' {
					j++ // ctest: "1 tests failed"
				}
			}
			kind = countKind(toks[j].s)
		}
		// "Word: N" or "word=N" after punctuation; "word N" only at the line's start ("# fail 1").
		outOf := i > 1 && toks[i-1].s == "of" && toks[i-2].s == "out"
		if k := i - 1; kind == 0 && k >= 0 && (tokGap(lower, toks, k, i) == "" && (k == 0 || outOf) || tokGap(lower, toks, k, i) == ":" || tokGap(lower, toks, k, i) == "=") {
			w := toks[k].s
			switch {
			case w == "run" && k > 0 && toks[k-1].s == "tests" && tokGap(lower, toks, k-1, k) == "":
				k-- // "Tests run: 2"
				w = "tests"
			case w == "of" && k > 0 && toks[k-1].s == "out": // ctest: "out of 2"
				kind = 't'
			}
			if b := prevNonSpace(lower, toks[k].at); kind == 0 && w != "run" && w != "test" && (b == 0 || isPunct(b)) {
				kind = countKind(w)
			}
		}
		switch kind {
		case 'f':
			f += n
			failKind = true
		case 'p':
			p += n
		case 'e':
			e += n
			failKind = true
		case 't':
			t += n
		default:
			continue
		}
		found = true
	}
	if !found {
		return
	}
	r.counted = true
	if suites {
		r.failSeen = r.failSeen || f > 0 || e > 0
		return
	}
	// Several summaries (cargo's per test binary) add up their passing tests; a runner that
	// repeats its summary (Maven's per class and overall) must not double its failures.
	r.failed = max(r.failed, f)
	r.errors = max(r.errors, e)
	r.total = max(r.total, t)
	r.passed += p
	if f == 0 && e == 0 && (p > 0 || t > 0 && failKind) {
		r.passSeen = true
	}
	if f+e+p+t > 0 {
		r.summaries = append(r.summaries, l)
	}
}

type token struct {
	s  string
	at int
}

func (t token) end() int { return t.at + len(t.s) }

// tokGap is what stands between tokens a and b of line, blanks trimmed.
func tokGap(line string, toks []token, a, b int) string {
	return strings.TrimSpace(line[toks[a].end():toks[b].at])
}

func tokenByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '%' }

func atoiWord(w string) (int, bool) {
	if w == "" || len(w) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(w); i++ {
		if !isDigit(w[i]) {
			return 0, false
		}
		n = n*10 + int(w[i]-'0')
	}
	return n, true
}

// prevNonSpace is the byte before s[i] that is not a blank, or 0 at the start.
func prevNonSpace(s string, i int) byte {
	for i > 0 {
		i--
		if s[i] != ' ' && s[i] != '\t' {
			return s[i]
		}
	}
	return 0
}

func isPunct(c byte) bool {
	return strings.IndexByte(",;|(=:.-#![]", c) >= 0 || c >= 0x80
}

// passWord reports whether s says something passed ("pass", "passed", "passes", "passing",
// "PASSED"), as a word: the test over the runner corpus and the guard that keeps such words
// out of a failed or unread run's facts use it.
func passWord(s string) bool {
	low := strings.ToLower(s)
	for i := 0; ; {
		j := strings.Index(low[i:], "pass")
		if j < 0 {
			return false
		}
		j += i
		end := j + 4
		for _, suf := range [...]string{"ing", "ed", "es"} {
			if strings.HasPrefix(low[end:], suf) {
				end += len(suf)
				break
			}
		}
		if (j == 0 || !isWordByte(low[j-1])) && (end == len(low) || !isWordByte(low[end])) {
			return true
		}
		i = j + 4
	}
}
