package ai

import (
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
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
	LLMContent       string `json:"llmContent"`
	Interrupted      bool   `json:"interrupted"`
	ExitCode         *int   `json:"exit_code"`
	ExitCode2        *int   `json:"exitCode"`
	ReturnCode       *int   `json:"returncode"`
	BackgroundTaskID string `json:"backgroundTaskId"`
}

// quietCommands change nothing worth remembering and print nothing of interest.
var quietCommands = map[string]bool{
	"cd": true, "pwd": true, "clear": true, "true": true, "sleep": true, "echo": true,
	"which": true, "whoami": true, "date": true, "export": true, "source": true, "set": true,
	".": true, "ls": true,
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

var testRunners = [...]string{
	"go test", "npm test", "npm run test", "yarn test", "pnpm test", "bun test", "pnpm run test",
	"yarn run test", "pytest", "py.test", "-m pytest", "-m unittest", "cargo test", "cargo nextest",
	"jest", "vitest", "mocha", "mvn test", "gradle test", "./gradlew test", "rspec",
	"make test", "make check", "deno test", "phpunit", "ctest", "mix test", "dotnet test",
	"tox", "rake test", "swift test", "npx playwright test", "go vet ./...",
}

var buildRunners = [...]string{
	"go build", "go vet", "npm run build", "yarn build", "pnpm build", "tsc", "cargo build",
	"cargo check", "cargo clippy", "make", "mvn package", "gradle build", "golangci-lint",
	"eslint", "ruff", "mypy", "flake8", "gofmt", "prettier --check", "docker build",
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
		if t := strings.TrimSpace(line); t != "" {
			out = append(out, t)
		}
	}
	return out
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

func passLine(l string) bool {
	return strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "ok\t") || strings.HasPrefix(l, "PASS") ||
		strings.Contains(l, "test result: ok") || countBefore(l, " passed") > 0 ||
		countBefore(l, " passing") > 0 || strings.HasPrefix(l, "Tests:") || strings.HasPrefix(l, "OK")
}

// goFileLine matches compiler and test assertion lines like "x_test.go:42: want 401".
func fileLine(l string) bool {
	i := strings.Index(l, ":")
	if i <= 0 || i+1 >= len(l) || !isDigit(l[i+1]) {
		return false
	}
	return strings.IndexByte(l[:i], '.') > 0 && !strings.Contains(l[:i], " ")
}

func (b *builder) bash() bool {
	var in bashInput
	var resp bashResponse
	decode(b.call.ToolInput, &in)
	out := ""
	exit := -1
	if s, ok := rawString(b.call.ToolResponse); ok {
		out = s
		if rest, ok := strings.CutPrefix(strings.TrimPrefix(s, "Error: "), "Exit code "); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(firstLine(rest))); err == nil {
				exit = n
			}
		}
	} else {
		decode(b.call.ToolResponse, &resp)
		out = resp.Stdout
		if out == "" {
			out = resp.Output
		}
		if out == "" {
			out = resp.LLMContent
		}
		for _, p := range [...]*int{resp.ExitCode, resp.ExitCode2, resp.ReturnCode} {
			if p != nil {
				exit = *p
				break
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
	failed := exit > 0 || resp.Interrupted

	parts := commandParts(cmd)
	quiet := len(parts) > 0
	for _, p := range parts {
		w, _ := cutWord(p)
		if !quietCommands[w] || (w == "ls" && len(outLines) > 0) {
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
	case hasRunner(main, testRunners[:]) != "":
		b.testRun(shown, outLines, errLines, exit, failed)
	case hasRunner(main, buildRunners[:]) != "" && !strings.HasPrefix(main, "make test"):
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

func (b *builder) testRun(shown string, outLines, errLines []string, exit int, failed bool) {
	b.cc.add("testing")
	var fails, passes, details []string
	for _, l := range append(outLines, errLines...) {
		switch {
		case l == "FAIL" || l == "PASS" || l == "ok" || strings.HasPrefix(l, "Error: Exit code") || strings.HasPrefix(l, "Exit code"):
		case strings.HasPrefix(l, "--- FAIL"), strings.HasPrefix(l, "FAIL"), strings.HasPrefix(l, "FAILED"),
			strings.HasPrefix(l, "panic:"), strings.HasPrefix(l, "✕"), strings.HasPrefix(l, "✗"),
			strings.HasPrefix(l, "●"), strings.Contains(l, "panicked at"), strings.HasPrefix(l, "ERROR"):
			fails = append(fails, l)
		case passLine(l):
			passes = append(passes, l)
		case fileLine(l) || strings.HasPrefix(l, "E ") || strings.Contains(l, "Error:") || strings.Contains(l, "expected"):
			details = append(details, l)
		default:
			if failLine(l) {
				fails = append(fails, l)
			}
		}
	}
	if len(fails) > 0 {
		failed = true
	}
	status := "Tests pass: "
	switch {
	case failed:
		status = "Tests fail: "
	case len(passes) == 0 && exit != 0:
		status = "Tests ran: "
	}
	b.obs.Type = TypeDiscovery
	b.obs.Title = status + shown
	n := 0
	for _, l := range fails {
		if strings.HasPrefix(l, "--- FAIL") || strings.HasPrefix(l, "FAILED") || strings.HasPrefix(l, "✕") || strings.HasPrefix(l, "●") {
			n++
		}
	}
	if failed {
		if n > 0 {
			b.obs.Subtitle = plural(n, "failing test", "failing tests")
		} else {
			b.obs.Subtitle = "failed"
		}
		if exit > 0 {
			b.fact("exit " + itoa(exit))
		}
		for i, l := range fails {
			if i == 4 {
				break
			}
			b.fact(l)
		}
		for i, l := range details {
			if i == 3 {
				break
			}
			b.fact(l)
		}
	} else {
		b.obs.Subtitle = "all passed"
	}
	for i, l := range passes {
		if i == 3 {
			break
		}
		b.fact(l)
	}
	s1 := "Ran " + shown + ": "
	switch {
	case failed && n > 0:
		s1 += plural(n, "test", "tests") + " failed"
	case failed:
		s1 += "the run failed"
	case status == "Tests ran: ":
		s1 += "no result line was recognised"
	default:
		s1 += "all tests passed"
	}
	ctx := ""
	if g := promptGist(b.call.Prompt); g != "" {
		if b.intent == intentBug && !failed {
			ctx = `Verifies the fix for: "` + g + `"`
		} else {
			ctx = b.promptContext(false)
		}
	}
	b.narrate(s1, ctx)
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
	b.obs.Type = TypeDiscovery
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
		b.obs.Type = TypeChange
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
		b.obs.Type = TypeChange
	default:
		b.obs.Type = TypeDiscovery
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

var changeCommands = map[string]bool{
	"rm": true, "mv": true, "cp": true, "mkdir": true, "touch": true, "chmod": true,
	"ln": true, "npm": true, "yarn": true, "pnpm": true, "pip": true, "pip3": true,
	"cargo": true, "brew": true, "apt": true, "apt-get": true, "sed": true, "patch": true,
	"docker": true, "kubectl": true, "terraform": true, "uv": true, "poetry": true,
}

var readCommands = map[string]bool{"cat": true, "head": true, "tail": true, "less": true, "bat": true, "wc": true, "nl": true}

func (b *builder) plainRun(desc, main string, outLines, errLines []string, exit int, failed bool) {
	first, args := cutWord(main)
	base := baseName(first)
	b.obs.Type = TypeDiscovery
	if changeCommands[base] {
		sub, _ := cutWord(args)
		switch {
		case base == "sed" && !strings.Contains(args, "-i"):
		case (base == "npm" || base == "yarn" || base == "pnpm" || base == "cargo" || base == "docker") &&
			sub != "install" && sub != "add" && sub != "i" && sub != "remove" && sub != "uninstall" && sub != "ci":
		default:
			b.obs.Type = TypeChange
			if sub == "install" || sub == "add" || sub == "i" || base == "pip" || base == "pip3" {
				b.cc.add("dependencies")
			}
		}
	}
	if base == "go" {
		if sub, _ := cutWord(args); sub == "get" || sub == "mod" {
			b.obs.Type = TypeChange
			b.cc.add("dependencies")
		}
	}
	b.commandFiles(base, args)
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
	case b.obs.Type != TypeChange:
		b.fact("no output")
	}
	s1 := "Ran " + clip(line, 120)
	if desc != "" {
		s1 = capitalize(desc) + ": ran " + clip(line, 120)
	}
	result := ""
	switch {
	case failed || exit > 0:
		result = "It failed"
		if len(key) > 0 {
			result += ": " + clip(key[0], 120)
		}
	case len(outLines) == 1:
		result = "Output: " + clip(outLines[0], 120)
	}
	b.narrate(s1, result, b.promptContext(b.obs.Type == TypeChange))
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
		b.obs.Type = TypeChange
	}
	switch {
	case readCommands[base] && !redirected:
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

type searchInput struct {
	Pattern    string `json:"pattern"`
	Query      string `json:"query"`
	Path       string `json:"path"`
	DirPath    string `json:"dir_path"`
	Glob       string `json:"glob"`
	Include    string `json:"include"`
	Type       string `json:"type"`
	OutputMode string `json:"output_mode"`
	IgnoreCase bool   `json:"-i"`
}

type searchResponse struct {
	Mode       string   `json:"mode"`
	Filenames  []string `json:"filenames"`
	NumFiles   int      `json:"numFiles"`
	Content    string   `json:"content"`
	NumLines   int      `json:"numLines"`
	NumMatches int      `json:"numMatches"`
	Truncated  bool     `json:"truncated"`
}

func (b *builder) search(glob bool) bool {
	var in searchInput
	var resp searchResponse
	decode(b.call.ToolInput, &in)
	if s, ok := rawString(b.call.ToolResponse); ok {
		resp.Content = s
	} else {
		decode(b.call.ToolResponse, &resp)
	}
	pattern := in.Pattern
	if pattern == "" {
		pattern = in.Query
	}
	if pattern == "" {
		return b.generic(b.call.ToolName, "")
	}
	dir := in.Path
	if dir == "" {
		dir = in.DirPath
	}
	where := ""
	if d := b.rel(dir); d != "" && d != "." {
		where = " in " + d
	}
	files := make([]string, 0, min(len(resp.Filenames), 64))
	for i, f := range resp.Filenames {
		if i == 64 {
			break
		}
		files = append(files, b.rel(f))
	}
	var lines []string
	if resp.Content != "" {
		lines = outputLines(resp.Content, 2000)
		if len(files) == 0 && (resp.Mode == "files_with_matches" || glob) {
			for i, l := range lines {
				if i == 64 {
					break
				}
				files = append(files, b.rel(l))
			}
			lines = nil
		}
	}
	nFiles := max(resp.NumFiles, len(files))
	b.obs.Type = TypeDiscovery
	b.cc.scan(pattern)
	qp := "\"" + clip(pattern, 50) + "\""
	count := ""
	switch {
	case resp.Mode == "content" || (len(lines) > 0 && len(files) == 0):
		n := max(resp.NumLines, resp.NumMatches, len(lines))
		count = plural(n, "matching line", "matching lines")
	case resp.Mode == "count":
		count = plural(max(resp.NumMatches, nFiles), "match", "matches")
	default:
		unit := "file"
		if !glob {
			unit = "matching file"
		}
		count = plural(nFiles, unit, unit+"s")
	}
	if glob {
		b.obs.Title = "Find files " + qp + where + ": " + count
	} else {
		b.obs.Title = "Search " + qp + where + ": " + count
	}
	b.obs.Subtitle = count
	opts := []string{}
	if in.Glob != "" {
		opts = append(opts, "glob "+in.Glob)
	}
	if in.Include != "" {
		opts = append(opts, "include "+in.Include)
	}
	if in.Type != "" {
		opts = append(opts, "type "+in.Type)
	}
	if in.IgnoreCase {
		opts = append(opts, "case-insensitive")
	}
	spec := "pattern `" + clip(pattern, 120) + "`" + where
	if len(opts) > 0 {
		spec += " (" + strings.Join(opts, ", ") + ")"
	}
	b.fact(spec)
	switch {
	case len(files) > 0:
		b.fact(count + ": " + joinClip(files, ", ", 180-len(count)))
		for i, f := range files {
			if i == 10 {
				break
			}
			b.read(f)
		}
		b.cc.path(strings.Join(files[:min(len(files), 5)], " "))
	case len(lines) > 0:
		for i, l := range lines {
			if i == 4 {
				break
			}
			b.fact(b.relLine(l))
		}
	default:
		b.fact("no matches")
	}
	if resp.Truncated {
		b.fact("results truncated")
	}
	verb := "Searched for "
	if glob {
		verb = "Looked for files matching "
	}
	s1 := verb + qp + where
	switch {
	case len(files) > 0:
		s1 += "; found " + count + ": " + joinClip(files[:min(len(files), 4)], ", ", 200)
	case len(lines) > 0:
		s1 += "; found " + count
	default:
		s1 += "; nothing matched"
	}
	b.narrate(s1, b.promptContext(false))
	return true
}

// relLine makes the path at the start of a "path:line:text" match relative.
func (b *builder) relLine(l string) string {
	if cwd := strings.TrimRight(b.call.Cwd, "/"); cwd != "" && strings.HasPrefix(l, cwd+"/") {
		return l[len(cwd)+1:]
	}
	return l
}

func (b *builder) list() bool {
	var in searchInput
	decode(b.call.ToolInput, &in)
	dir := in.Path
	if dir == "" {
		dir = in.DirPath
	}
	text := jsonText(b.call.ToolResponse, 16<<10)
	var entries []string
	for _, l := range outputLines(text, 500) {
		l = strings.TrimLeft(l, "-*• ")
		if l != "" && !strings.HasPrefix(l, "NOTE:") {
			entries = append(entries, b.rel(l))
		}
	}
	if len(entries) == 0 {
		return false
	}
	rd := b.rel(dir)
	if rd == "" {
		rd = "."
	}
	b.obs.Type = TypeDiscovery
	b.obs.Title = "List " + rd
	b.obs.Subtitle = plural(len(entries), "entry", "entries")
	b.fact(plural(len(entries), "entry", "entries") + ": " + joinClip(entries, ", ", 170))
	b.cc.path(rd)
	b.narrate("Listed "+rd+" ("+plural(len(entries), "entry", "entries")+")", b.promptContext(false))
	return true
}

type webInput struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt"`
	Query  string `json:"query"`
}

type webResponse struct {
	Code     int             `json:"code"`
	CodeText string          `json:"codeText"`
	Result   string          `json:"result"`
	Bytes    int             `json:"bytes"`
	URL      string          `json:"url"`
	Query    string          `json:"query"`
	Results  json.RawMessage `json:"results"`
}

// shortURL is host + path without scheme, query or fragment.
func shortURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return clip(raw, 100)
	}
	return clip(u.Host+strings.TrimRight(u.Path, "/"), 100)
}

func (b *builder) webFetch() bool {
	var in webInput
	var resp webResponse
	decode(b.call.ToolInput, &in)
	result := ""
	if s, ok := rawString(b.call.ToolResponse); ok {
		result = s
	} else {
		decode(b.call.ToolResponse, &resp)
		result = resp.Result
	}
	if in.URL == "" {
		return b.generic(b.call.ToolName, "")
	}
	su := shortURL(in.URL)
	b.obs.Type = TypeDiscovery
	b.obs.Title = "Fetch " + su
	b.cc.scan(su)
	b.cc.scan(in.Prompt)
	if in.Prompt != "" {
		b.fact("asked: " + in.Prompt)
	}
	if resp.Code != 0 {
		b.obs.Subtitle = "HTTP " + itoa(resp.Code) + " " + resp.CodeText
		if resp.Code >= 400 {
			b.fact("HTTP " + itoa(resp.Code) + " " + resp.CodeText)
		}
	}
	sents := proseSentences(result, 4)
	for _, s := range sents {
		b.fact(s)
	}
	s1 := "Fetched " + su
	if in.Prompt != "" {
		s1 += " to learn: " + clip(in.Prompt, 120)
	}
	s2 := ""
	if len(sents) > 0 {
		s2 = sents[0]
	}
	b.narrate(s1, s2)
	return true
}

// proseSentences returns up to n sentences of free text (markdown tolerated).
func proseSentences(text string, n int) []string {
	if len(text) > 16<<10 {
		text = text[:16<<10]
	}
	var out []string
	for _, u := range markdownUnits(text) {
		for _, s := range splitSentences(u.text, nil) {
			if len(out) == n {
				return out
			}
			out = append(out, clip(s, maxFact))
		}
	}
	return out
}

func (b *builder) webSearch() bool {
	var in webInput
	var resp webResponse
	decode(b.call.ToolInput, &in)
	decode(b.call.ToolResponse, &resp)
	q := in.Query
	if q == "" {
		q = resp.Query
	}
	if q == "" {
		return b.generic(b.call.ToolName, "")
	}
	b.obs.Type = TypeDiscovery
	b.obs.Title = "Web search: \"" + clip(q, 60) + "\""
	b.cc.scan(q)
	var hits []string
	var summary string
	var results []json.RawMessage
	decode(resp.Results, &results)
	for _, r := range results {
		if s, ok := rawString(r); ok {
			if summary == "" {
				summary = s
			}
			continue
		}
		var block struct {
			Content []struct {
				Title string `json:"title"`
				URL   string `json:"url"`
			} `json:"content"`
			Title string `json:"title"`
			URL   string `json:"url"`
		}
		decode(r, &block)
		if block.Title != "" {
			hits = append(hits, clip(block.Title, 80)+" ("+shortURL(block.URL)+")")
		}
		for _, c := range block.Content {
			if len(hits) == 6 {
				break
			}
			hits = append(hits, clip(c.Title, 80)+" ("+shortURL(c.URL)+")")
		}
	}
	if summary == "" {
		if s, ok := rawString(b.call.ToolResponse); ok {
			summary = s
		}
	}
	b.obs.Subtitle = plural(len(hits), "result", "results")
	for i, h := range hits {
		if i == 5 {
			break
		}
		b.fact(h)
	}
	sents := proseSentences(summary, 2)
	for _, s := range sents {
		b.fact(s)
	}
	s2 := ""
	if len(sents) > 0 {
		s2 = sents[0]
	} else if len(hits) > 0 {
		s2 = "Top result: " + hits[0]
	}
	b.narrate("Searched the web for \""+clip(q, 120)+"\"", s2)
	return true
}

type taskInput struct {
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
}

type taskResponse struct {
	Content           json.RawMessage `json:"content"`
	Result            string          `json:"result"`
	TotalToolUseCount int             `json:"totalToolUseCount"`
	Status            string          `json:"status"`
}

func (b *builder) task() bool {
	var in taskInput
	var resp taskResponse
	decode(b.call.ToolInput, &in)
	result := ""
	if s, ok := rawString(b.call.ToolResponse); ok {
		result = s
	} else {
		decode(b.call.ToolResponse, &resp)
		result = resp.Result
		if result == "" {
			result = jsonText(resp.Content, 16<<10)
		}
	}
	what := in.Description
	if what == "" {
		what = firstLine(in.Prompt)
	}
	if what == "" {
		return b.generic(b.call.ToolName, "")
	}
	agent := in.SubagentType
	if agent == "" {
		agent = "agent"
	}
	b.obs.Type = TypeDiscovery
	b.obs.Title = "Agent " + agent + ": " + what
	b.cc.scan(what)
	if in.Prompt != "" {
		b.fact("asked: " + in.Prompt)
	}
	sents := proseSentences(result, 4)
	for _, s := range sents {
		b.fact(s)
	}
	if resp.TotalToolUseCount > 0 {
		b.obs.Subtitle = plural(resp.TotalToolUseCount, "tool use", "tool uses")
	}
	if resp.Status != "" && resp.Status != "completed" {
		b.fact("status: " + resp.Status)
	}
	b.cc.scan(result)
	s2 := ""
	if len(sents) > 0 {
		s2 = "It reported: " + sents[0]
	}
	b.narrate("Delegated to the "+agent+" agent: "+clip(what, 120), s2)
	return true
}

func (b *builder) plan() bool {
	var in struct {
		Plan string `json:"plan"`
	}
	decode(b.call.ToolInput, &in)
	if strings.TrimSpace(in.Plan) == "" {
		return false
	}
	head := inlineText(strings.TrimLeft(firstLine(in.Plan), "#>-* "))
	b.obs.Type = TypeDecision
	b.obs.Title = "Plan: " + clip(head, 70)
	for _, u := range markdownUnits(in.Plan) {
		if u.text != head {
			b.fact(u.text)
		}
	}
	b.cc.scan(in.Plan)
	b.narrate("Agreed on a plan: "+clip(head, 150), b.promptContext(false))
	return true
}

func (b *builder) question() bool {
	var in struct {
		Questions []struct {
			Question string `json:"question"`
			Header   string `json:"header"`
		} `json:"questions"`
	}
	var resp struct {
		Answers map[string]json.RawMessage `json:"answers"`
	}
	decode(b.call.ToolInput, &in)
	decode(b.call.ToolResponse, &resp)
	if len(resp.Answers) == 0 {
		return false
	}
	b.obs.Type = TypeDecision
	var first string
	for _, q := range in.Questions {
		a := jsonText(resp.Answers[q.Question], 400)
		if a == "" {
			continue
		}
		if first == "" {
			first = clip(a, 50)
			if q.Header != "" {
				first = clip(q.Header, 20) + ": " + first
			}
		}
		b.fact(clip(q.Question, 120) + " → " + clip(a, 70))
		b.cc.scan(q.Question)
	}
	if first == "" {
		for _, k := range sortedKeys(resp.Answers) {
			a := jsonText(resp.Answers[k], 400)
			if first == "" {
				first = clip(a, 60)
			}
			b.fact(clip(k, 120) + " → " + clip(a, 70))
		}
	}
	b.obs.Title = "User chose " + first
	b.narrate("Asked the user and they chose " + first)
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// mainArgKeys are the argument names that usually say what a tool call is about.
var mainArgKeys = [...]string{"title", "query", "q", "sql", "statement", "name", "path", "file_path", "url", "command", "pattern", "symbol", "id", "key", "repo", "description", "prompt", "text", "input"}

// writeVerbs in an MCP tool name mark it as changing something.
var writeVerbs = [...]string{"create", "update", "delete", "write", "set", "add", "remove", "post", "push", "send", "edit", "insert", "merge", "move", "rename", "upload", "comment", "close", "assign"}

func (b *builder) mcp() bool {
	rest := strings.TrimPrefix(b.call.ToolName, "mcp__")
	server, tool, ok := strings.Cut(rest, "__")
	if !ok {
		tool, server = rest, ""
	}
	label := tool
	if server != "" {
		label = server + " " + tool
	}
	return b.generic(label, strings.ToLower(tool))
}

// generic describes any tool from its arguments and response text.
func (b *builder) generic(label, tool string) bool {
	var args map[string]json.RawMessage
	decode(b.call.ToolInput, &args)
	keys := sortedKeys(args)
	main := ""
	for _, k := range mainArgKeys {
		if s, ok := rawStringHead(args[k], 4096); ok && strings.TrimSpace(s) != "" {
			main = s
			break
		}
	}
	for _, k := range keys {
		if main != "" {
			break
		}
		if s, ok := rawStringHead(args[k], 4096); ok && strings.TrimSpace(s) != "" {
			main = s
		}
	}
	var pairs []string
	for _, k := range keys {
		if len(pairs) == 6 {
			break
		}
		raw := args[k]
		if s, ok := rawStringHead(raw, 4096); ok {
			pairs = append(pairs, clip(k, 30)+"="+clip(s, 60))
			if len(k) > 4 && (strings.HasSuffix(k, "path") || strings.HasSuffix(k, "file")) {
				b.read(s)
			}
			continue
		}
		if t := strings.TrimSpace(string(raw)); t != "" && t != "null" && (t[0] == '-' || isDigit(t[0]) || t[0] == 't' || t[0] == 'f') {
			pairs = append(pairs, clip(k, 30)+"="+clip(t, 30))
		}
	}
	b.obs.Type = TypeDiscovery
	if tool == "" {
		tool = strings.ToLower(label)
	}
	for _, v := range writeVerbs {
		if strings.Contains(tool, v) {
			b.obs.Type = TypeChange
			break
		}
	}
	b.obs.Title = label
	if main != "" {
		b.obs.Title += ": " + clip(main, 60)
	}
	if len(pairs) > 0 {
		b.fact("args: " + joinClip(pairs, ", ", 190))
	}
	text := jsonText(b.call.ToolResponse, 8<<10)
	lines := outputLines(text, 50)
	for i, l := range lines {
		if i == 3 {
			break
		}
		b.fact("result: " + l)
	}
	if len(lines) > 3 {
		b.fact(plural(len(lines), "line", "lines") + " of result")
	}
	b.cc.scan(label)
	b.cc.scan(main)
	s1 := "Used " + label
	if main != "" {
		s1 += " on " + clip(main, 100)
	}
	s2 := ""
	if len(lines) > 0 {
		s2 = "Result: " + clip(lines[0], 150)
	}
	b.narrate(s1, s2, b.promptContext(b.obs.Type == TypeChange))
	return true
}
