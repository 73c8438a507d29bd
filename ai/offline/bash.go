package offline

import (
	"slices"
	"strconv"
	"strings"

	"github.com/memnode/memnode/memory"
)

const maxOutputScan = 256 << 10 // bytes of command output scanned for key lines

type bashInput struct {
	Command         string `json:"command"`
	Description     string `json:"description"`
	RunInBackground bool   `json:"run_in_background"`
}

type bashResponse struct {
	Stdout           string `json:"stdout"`
	Stderr           string `json:"stderr"`
	Output           string `json:"output"`
	Interrupted      bool   `json:"interrupted"`
	ExitCode         *int   `json:"exit_code"`
	BackgroundTaskID string `json:"backgroundTaskId"`
	// Error is set for a failed call (the canonical platform.Failure): Claude Code's
	// PostToolUseFailure puts "Exit code N" and the output in it.
	Error       string `json:"error"`
	IsInterrupt bool   `json:"is_interrupt"`
}

// commandParts splits a shell command line into its simple commands (on && || ; | and
// newlines), each trimmed of leading env assignments and wrappers like sudo or time.
func commandParts(cmd string) []string {
	if len(cmd) > 4096 {
		cmd = cmd[:4096]
	}
	var parts []string
	for _, seg := range strings.FieldsFunc(cmd, func(r rune) bool { return r == '&' || r == '|' || r == ';' || r == '\n' }) {
		seg = strings.TrimSpace(seg)
		for {
			w, rest := cutWord(seg)
			if w == "sudo" || w == "time" || w == "nohup" || w == "exec" || w == "command" ||
				(strings.Contains(w, "=") && !strings.HasPrefix(w, "-") && rest != "") {
				seg = rest
				continue
			}
			if w == "timeout" {
				_, seg = cutWord(rest)
				continue
			}
			break
		}
		if seg != "" {
			parts = append(parts, seg)
		}
		if len(parts) == 16 {
			break
		}
	}
	return parts
}

// mainCommand drops leading cd steps: "cd web && npm test" → "npm test".
func mainCommand(cmd string) string {
	c := strings.TrimSpace(cmd)
	for strings.HasPrefix(c, "cd ") {
		i := strings.Index(c, "&&")
		j := strings.IndexByte(c, ';')
		if i < 0 && j < 0 {
			break
		}
		if i < 0 || (j >= 0 && j < i) {
			c = strings.TrimSpace(c[j+1:])
		} else {
			c = strings.TrimSpace(c[i+2:])
		}
	}
	return c
}

func hasRunner(cmd string, runners []string) string {
	for _, r := range runners {
		i := strings.Index(cmd, r)
		if i < 0 {
			continue
		}
		end := i + len(r)
		if (i == 0 || cmd[i-1] == ' ' || cmd[i-1] == '/') && (end == len(cmd) || cmd[end] == ' ' || cmd[end] == '\n') {
			return r
		}
	}
	return ""
}

// outputLines returns the non-empty lines of s, bounded.
func outputLines(s string, limit int) []string {
	if len(s) > maxOutputScan {
		s = s[:maxOutputScan/2] + "\n" + s[len(s)-maxOutputScan/2:]
	}
	var out []string
	for len(s) > 0 && len(out) < limit {
		var line string
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			line, s = s, ""
		}
		if strings.IndexByte(line, 0x1b) >= 0 {
			line = stripANSI(line)
		}
		if t := strings.TrimSpace(line); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// stripANSI removes terminal escape sequences (colours: ESC [ … letter) from a line.
func stripANSI(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
		}
	}
	return b.String()
}

// failLine reports whether an output line signals a failure.
func failLine(l string) bool {
	switch {
	case strings.HasPrefix(l, "--- FAIL"), strings.HasPrefix(l, "FAIL"), strings.HasPrefix(l, "panic:"),
		strings.HasPrefix(l, "FAILED"), strings.HasPrefix(l, "ERROR"), strings.HasPrefix(l, "✕"),
		strings.HasPrefix(l, "✗"), strings.HasPrefix(l, "×"), strings.HasPrefix(l, "●"),
		strings.HasPrefix(l, "E "), strings.HasPrefix(l, "error"), strings.HasPrefix(l, "Error"),
		strings.HasPrefix(l, "fatal"), strings.HasPrefix(l, "Traceback"),
		strings.Contains(l, "test result: FAILED"), strings.Contains(l, "panicked at"),
		strings.Contains(l, ": error:"), strings.Contains(l, "error TS"), strings.Contains(l, "npm ERR!"),
		strings.Contains(l, "command not found"), strings.Contains(l, "No such file"),
		strings.Contains(l, "Permission denied"):
		return true
	}
	return countBefore(l, " failed") > 0 || countBefore(l, " failing") > 0
}

// countBefore returns the number right before word in l ("3 failed" → 3), or 0.
func countBefore(l, word string) int {
	i := strings.Index(l, word)
	if i <= 0 {
		return 0
	}
	j := i
	for j > 0 && isDigit(l[j-1]) {
		j--
	}
	n, _ := strconv.Atoi(l[j:i])
	return n
}

// fileLine matches compiler and test assertion lines like "x_test.go:42: want 401".
func fileLine(l string) bool {
	i := strings.Index(l, ":")
	if i <= 0 || i+1 >= len(l) || !isDigit(l[i+1]) {
		return false
	}
	return strings.LastIndexByte(l[:i], '.') > 0 && !strings.Contains(l[:i], " ")
}

func (b *builder) bash() bool {
	var in bashInput
	var resp bashResponse
	decode(b.call.ToolInput, &in)
	out := ""
	exit := -1
	exitFrom := func(s string) {
		s = strings.TrimPrefix(s, "Error: ")
		rest, ok := strings.CutPrefix(s, "Exit code ")
		if !ok {
			rest, ok = strings.CutPrefix(s, "exit status ") // Go's exec error, as Antigravity reports it
		}
		if ok {
			if n, err := strconv.Atoi(strings.TrimSpace(firstLine(rest))); err == nil {
				exit = n
			}
		}
	}
	if s, ok := rawString(b.call.ToolResponse); ok {
		out = s
		exitFrom(s)
	} else {
		decode(b.call.ToolResponse, &resp)
		out = resp.Stdout
		if out == "" {
			out = resp.Output
		}
		for _, p := range [...]*int{resp.ExitCode} {
			if p != nil {
				exit = *p
				break
			}
		}
		if resp.Error != "" {
			exitFrom(resp.Error)
			if exit <= 0 {
				exit = 1 // it failed, whatever the text says
			}
			if out == "" {
				out = resp.Error
			}
		}
	}
	cmd := strings.TrimSpace(in.Command)
	if cmd == "" {
		return b.generic(b.call.ToolName, "")
	}
	stderr := resp.Stderr
	outLines := outputLines(out, 4000)
	errLines := outputLines(stderr, 2000)
	interrupted := resp.Interrupted || resp.IsInterrupt
	// No response at all (an agent that records a call before it runs, as Antigravity's
	// PreToolUse does) is not an empty output: nothing is known of the result.
	b.noResult = len(b.call.ToolResponse) == 0 || string(b.call.ToolResponse) == "null"
	failed := exit > 0 || interrupted

	parts := commandParts(cmd)
	quiet := len(parts) > 0
	for _, p := range parts {
		w, _ := cutWord(p)
		if !b.v.quiet[w] || (w == "ls" && len(outLines) > 0) {
			quiet = false
			break
		}
	}
	if quiet && !failed && len(errLines) == 0 {
		return false
	}

	main := mainCommand(cmd)
	shown := clip(main, 120)
	b.fact("$ " + clip(cmd, maxFact-2))
	b.cc.scan(main)
	first, _ := cutWord(main)

	switch {
	case hasRunner(main, b.v.testRunners) != "":
		b.testRun(shown, outLines, errLines, exit, interrupted)
	case hasRunner(main, b.v.buildRunners) != "" && !strings.HasPrefix(main, "make test"):
		b.buildRun(shown, outLines, errLines, exit, failed)
	case first == "git":
		b.gitRun(main, outLines, errLines, failed)
	default:
		b.plainRun(in.Description, main, outLines, errLines, exit, failed)
	}
	if in.RunInBackground || resp.BackgroundTaskID != "" {
		b.fact("started in the background")
	}
	return true
}

func (b *builder) testRun(shown string, outLines, errLines []string, exit int, interrupted bool) {
	b.cc.add("testing")
	r := readTestOutput(outLines, errLines)
	v := r.verdict
	switch {
	case exit > 0 && v != verdictNone:
		v = verdictFail
	case interrupted && v != verdictFail:
		v = verdictUnknown
	}
	b.obs.Type = memory.TypeDiscovery
	// A run that did not pass never says "pass": its facts keep no line that does (a
	// summary's passing count is restated as "succeeded").
	fact := func(s string) {
		if v == verdictPass || !passWord(s) {
			b.fact(s)
		}
	}
	run := "Ran " + shown + ": "
	ctx := b.promptContext(false)
	switch v {
	case verdictFail:
		b.obs.Title = "Tests fail: " + shown
		names := r.failingNames()
		n := max(r.failed, len(names))
		switch {
		case n > 0:
			b.obs.Subtitle = plural(n, "test failed", "tests failed")
			run += plural(n, "test", "tests") + " failed"
			if shown := slices.DeleteFunc(slices.Clone(names), passWord); len(shown) > 0 {
				run += ": " + joinClip(shown, ", ", 160)
			}
		case r.buildErr:
			b.obs.Subtitle = "error before the tests ran"
			run += "an error stopped it before the tests ran"
		case r.errors > 0:
			b.obs.Subtitle = plural(r.errors, "error", "errors")
			run += plural(r.errors, "error", "errors")
		default:
			b.obs.Subtitle = "failed"
			run += "the run failed"
		}
		if exit > 0 {
			b.fact("exit " + itoa(exit))
		}
		for i, l := range r.failLines {
			if i == 4 {
				break
			}
			fact(l)
		}
		for i, l := range r.details {
			if i == 3 {
				break
			}
			fact(l)
		}
		if r.counted && (r.failed > 0 || r.errors > 0) {
			c := make([]string, 0, 3)
			if r.failed > 0 {
				c = append(c, itoa(r.failed)+" failed")
			}
			if r.errors > 0 {
				c = append(c, plural(r.errors, "error", "errors"))
			}
			if r.passed > 0 {
				c = append(c, itoa(r.passed)+" succeeded")
			}
			b.fact("result: " + strings.Join(c, ", "))
		}
	case verdictPass:
		b.obs.Title = "Tests pass: " + shown
		b.obs.Subtitle = "all passed"
		if n := max(r.passed, r.total); n > 0 {
			b.obs.Subtitle = plural(n, "test passed", "tests passed")
		}
		for i, l := range r.summaries {
			if i == 3 {
				break
			}
			b.fact(l)
		}
		run += "all tests passed"
		if g := promptGist(b.call.Prompt); g != "" && b.intent == intentBug {
			ctx = `Verifies the fix for: "` + g + `"`
		}
	case verdictNone:
		b.obs.Title = "No tests ran: " + shown
		b.obs.Subtitle = "no tests found"
		fact(r.noTestsLine)
		if exit > 0 {
			b.fact("exit " + itoa(exit))
		}
		run += "no tests ran"
	default:
		b.obs.Title = "Test result unknown: " + shown
		b.obs.Subtitle = "result not recognised"
		switch {
		case interrupted:
			b.obs.Subtitle = "interrupted, result not recognised"
			run += "it was interrupted before a result was recognised"
		case b.noResult:
			run += "its result was not recorded"
		case r.lines == 0:
			run += "the result was not recognised (no output)"
		default:
			run += "the result was not recognised"
		}
		if exit >= 0 {
			b.fact("exit " + itoa(exit))
		}
		switch {
		case b.noResult:
			b.fact("no result recorded")
		case r.lines == 0:
			b.fact("no output")
		default:
			fact("last output: " + r.last)
		}
	}
	b.narrate(run, ctx)
}

func (b *builder) buildRun(shown string, outLines, errLines []string, exit int, failed bool) {
	b.cc.add("build")
	var problems []string
	for _, l := range append(errLines, outLines...) {
		if failLine(l) || fileLine(l) {
			problems = append(problems, l)
		}
	}
	if len(problems) > 0 {
		failed = true
	}
	b.obs.Type = memory.TypeDiscovery
	if failed {
		b.obs.Title = "Build/check fails: " + shown
		b.obs.Subtitle = plural(len(problems), "problem", "problems")
		if exit > 0 {
			b.fact("exit " + itoa(exit))
		}
		for i, l := range problems {
			if i == 5 {
				break
			}
			b.fact(l)
		}
		b.narrate("Ran " + shown + ": it reported " + plural(len(problems), "problem", "problems"))
		return
	}
	b.obs.Title = "Build/check ok: " + shown
	b.obs.Subtitle = "ok"
	for i, l := range outLines {
		if i == 2 {
			break
		}
		b.fact("output: " + l)
	}
	b.narrate("Ran " + shown + " with no errors")
}

func (b *builder) gitRun(main string, outLines, errLines []string, failed bool) {
	b.cc.add("git")
	_, rest := cutWord(main)
	sub, _ := cutWord(rest)
	if i := strings.Index(main, "git commit"); i >= 0 {
		sub = "commit"
		main = main[i:]
	}
	switch sub {
	case "commit":
		msg := commitMessage(main)
		b.obs.Type = memory.TypeChange
		if msg != "" {
			b.obs.Title = "Commit: " + msg
		} else {
			b.obs.Title = "git commit"
		}
		for i, l := range outLines {
			if i == 2 {
				break
			}
			b.fact("output: " + l)
		}
		b.narrate("Committed: " + msg)
		return
	case "push", "merge", "rebase", "checkout", "switch", "reset", "revert", "cherry-pick", "stash", "tag", "branch", "add", "rm", "mv", "restore", "pull":
		b.obs.Type = memory.TypeChange
	default:
		b.obs.Type = memory.TypeDiscovery
	}
	b.obs.Title = clip(main, maxTitle)
	if sub == "status" || sub == "diff" {
		n := 0
		for _, l := range outLines {
			if strings.HasPrefix(l, "modified:") || strings.HasPrefix(l, "new file:") || strings.HasPrefix(l, "deleted:") ||
				strings.HasPrefix(l, "M ") || strings.HasPrefix(l, "A ") || strings.HasPrefix(l, "D ") ||
				strings.HasPrefix(l, "?? ") || strings.HasPrefix(l, "diff --git") {
				n++
				b.fact(l)
			}
		}
		b.obs.Subtitle = plural(n, "changed file", "changed files")
	} else {
		for i, l := range outLines {
			if i == 4 {
				break
			}
			b.fact(l)
		}
	}
	for i, l := range errLines {
		if i == 2 || !failLine(l) {
			break
		}
		b.fact(l)
	}
	if failed {
		b.fact("failed")
	}
	b.narrate("Ran " + clip(main, 120))
}

// commitMessage finds the -m message of a git commit, heredoc form included.
func commitMessage(cmd string) string {
	i := strings.Index(cmd, "-m ")
	if i < 0 {
		i = strings.Index(cmd, "--message=")
		if i < 0 {
			return ""
		}
		i += len("--message=") - 3
	}
	s := strings.TrimSpace(cmd[i+3:])
	if strings.HasPrefix(s, `"$(cat <<`) {
		// -m "$(cat <<'EOF'\nsubject\n\nbody\nEOF\n)"
		if nl := strings.IndexByte(s, '\n'); nl >= 0 {
			return clip(firstLine(s[nl+1:]), 72)
		}
		return ""
	}
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		if j := strings.IndexByte(s[1:], q); j >= 0 {
			return clip(firstLine(s[1:1+j]), 72)
		}
		return clip(firstLine(s[1:]), 72)
	}
	w, _ := cutWord(s)
	return clip(w, 72)
}

func (b *builder) plainRun(desc, main string, outLines, errLines []string, exit int, failed bool) {
	first, args := cutWord(main)
	base := baseName(first)
	b.obs.Type = memory.TypeDiscovery
	if b.v.change[base] {
		sub, _ := cutWord(args)
		switch {
		case base == "sed" && !strings.Contains(args, "-i"):
		case (base == "npm" || base == "yarn" || base == "pnpm" || base == "cargo" || base == "docker") &&
			sub != "install" && sub != "add" && sub != "i" && sub != "remove" && sub != "uninstall" && sub != "ci":
		default:
			b.obs.Type = memory.TypeChange
			if sub == "install" || sub == "add" || sub == "i" || base == "pip" || base == "pip3" {
				b.cc.add("dependencies")
			}
		}
	}
	if base == "go" {
		if sub, _ := cutWord(args); sub == "get" || sub == "mod" {
			b.obs.Type = memory.TypeChange
			b.cc.add("dependencies")
		}
	}
	// Every simple command of the line names its files: "cat a.go && rm b.go", "x;y", "a | b".
	for _, part := range commandParts(firstLine(main)) {
		w, rest := cutWord(part)
		b.commandFiles(baseName(w), rest)
	}
	desc = strings.TrimSpace(desc)
	line := firstLine(main) // the rest of a multi-line command is heredoc content
	switch {
	case desc != "":
		b.obs.Title = desc
		b.obs.Subtitle = clip(line, maxSubtitle)
	case strings.Contains(line, ">") && len(b.obs.FilesModified) > 0:
		b.obs.Title = "Write " + b.obs.FilesModified[0] + " from the shell"
		b.obs.Subtitle = clip(line, maxSubtitle)
	default:
		b.obs.Title = clip(line, maxTitle)
	}
	// A one-line answer completes the title: "Try the endpoint → {"error":"token expired"}".
	if len(outLines) == 1 && len(errLines) == 0 && !failed && exit <= 0 && len(outLines[0]) <= 48 &&
		len(b.obs.Title)+len(outLines[0]) <= maxTitle-3 {
		b.obs.Title += " → " + outLines[0]
	}
	if failed || exit > 0 {
		if exit > 0 {
			b.fact("exit " + itoa(exit))
		} else {
			b.fact("interrupted")
		}
	}
	var key []string
	for _, l := range append(outLines, errLines...) {
		if strings.HasPrefix(l, "Error: Exit code") || strings.HasPrefix(l, "Exit code") {
			continue
		}
		if failLine(l) || fileLine(l) || strings.Contains(strings.ToLower(l), "warn") {
			key = append(key, l)
		}
		if len(key) == 4 {
			break
		}
	}
	switch {
	case base == "ls" || base == "find" || base == "tree" || base == "fd":
		if len(outLines) > 0 {
			b.fact(plural(len(outLines), "entry", "entries") + ": " + joinClip(outLines, ", ", 170))
		}
	case len(key) > 0:
		for _, l := range key {
			b.fact(l)
		}
	case len(outLines) > 0:
		for i, l := range outLines {
			if i == 3 {
				break
			}
			b.fact("output: " + l)
		}
		if len(outLines) > 4 {
			b.fact("… " + plural(len(outLines), "line", "lines") + " of output, last: " + outLines[len(outLines)-1])
		}
	case len(errLines) > 0:
		b.fact("stderr: " + errLines[0])
	case b.noResult:
		b.fact("no result recorded")
	case b.obs.Type != memory.TypeChange:
		b.fact("no output")
	}
	// The title is the description or the command: the narrative does not say it again.
	s1 := ""
	if b.obs.Title != clip(line, maxTitle) && !strings.HasPrefix(b.obs.Title, clip(line, maxTitle)+" → ") {
		s1 = "Ran " + clip(line, 120)
	}
	result := ""
	switch {
	case failed || exit > 0:
		result = "It failed"
		if len(key) > 0 {
			result += ": " + clip(key[0], 120)
		}
	case len(outLines) == 1 && !strings.HasSuffix(b.obs.Title, " → "+outLines[0]):
		result = "Output: " + clip(outLines[0], 120)
	}
	b.narrate(s1, result, b.promptContext(b.obs.Type == memory.TypeChange))
	if len(b.obs.Narrative) > 0 && len(outLines) > 0 {
		b.cc.scan(outLines[0])
	}
}

// commandFiles records the files a simple command reads or writes: the operands of cat,
// head, tail…, of rm, mv, cp, touch, of sed -i, and the targets of > and >> redirections.
// Only the first line counts: what follows is usually heredoc content.
func (b *builder) commandFiles(base, args string) {
	var operands []string
	redirected := false
	fields := strings.Fields(firstLine(args))
	for i := 0; i < len(fields) && i < 64; i++ {
		a := fields[i]
		switch {
		case a == "|" || a == "&&" || a == ";" || a == "||" || strings.HasPrefix(a, "<<"):
			i = len(fields)
			continue
		case a == ">" || a == ">>":
			if i+1 < len(fields) {
				b.modified(strings.Trim(fields[i+1], `"'`))
				redirected = true
				i++
			}
			continue
		case strings.HasPrefix(a, ">"):
			b.modified(strings.Trim(strings.TrimLeft(a, ">"), `"'`))
			redirected = true
			continue
		case strings.HasPrefix(a, "-") || isNumber(a) || (a != "" && isDigit(a[0]) && strings.Contains(a, ">")):
			continue
		}
		operands = append(operands, strings.Trim(a, `"'`))
	}
	if redirected {
		b.obs.Type = memory.TypeChange
	}
	switch {
	case b.v.read[base] && !redirected:
		for _, a := range operands {
			b.read(a)
		}
	case base == "rm" || base == "mv" || base == "touch" || base == "cp":
		for _, a := range operands {
			b.modified(a)
		}
	case base == "sed" && strings.Contains(args, "-i") && len(operands) > 1:
		b.modified(operands[len(operands)-1])
	}
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
