package codex

import (
	"encoding/json"
	"path"
	"strings"
)

// Codex reads files with the shell (`cat app.py`, `sed -n 1,80p app.py`): its PostToolUse
// for a shell call is where memnode adds what it knows about the files read, as
// hookSpecificOutput.additionalContext (Codex's PreToolUse cannot add context).

// readers are the commands whose operands are files read.
var readers = map[string]bool{
	"cat": true, "head": true, "tail": true, "less": true, "more": true, "nl": true, "bat": true,
	"batcat": true, "sed": true,
}

// maxReadFiles bounds the files taken from one command line.
const maxReadFiles = 10

// ReadFiles returns the files a shell command line reads with the commands above: each
// simple command (split on ;, &&, ||, | and newlines) whose program is a reader, its
// operands that are not flags, counts, sed's script or a redirection's target. `sed -i`
// edits, it does not read. Copilot's bash reads files the same way.
func ReadFiles(cmdline string) []string {
	var files []string
	for _, part := range splitCommands(cmdline) {
		fields := strings.Fields(part)
		for len(fields) > 0 && strings.Contains(fields[0], "=") && !strings.HasPrefix(fields[0], "=") {
			fields = fields[1:] // FOO=bar cat x
		}
		if len(fields) == 0 || !readers[path.Base(fields[0])] {
			continue
		}
		files = append(files, operands(path.Base(fields[0]) == "sed", fields[1:])...)
		if len(files) >= maxReadFiles {
			return files[:maxReadFiles]
		}
	}
	return files
}

// operands are the file operands of one reader's arguments.
func operands(sed bool, args []string) []string {
	var files []string
	script := sed // sed's first operand is its script, unless -e gives it
	skip := false
	for i, a := range args {
		switch {
		case i > 64:
			return files
		case skip:
			skip = false
		case sed && (strings.HasPrefix(a, "-i") || a == "--in-place"):
			return nil
		case sed && a == "-e":
			script, skip = false, true
		case a == ">" || a == ">>" || a == "2>" || a == "&>":
			skip = true // the file written
		case strings.HasPrefix(a, "-") || a == "<" || strings.Contains(a, ">"):
		case script:
			script = false
		case isCount(a):
		default:
			files = append(files, strings.Trim(a, `"'`))
		}
	}
	return files
}

// splitCommands splits a command line on ;, &&, ||, | and newlines (quotes are not
// parsed: an operator inside quotes only splits a read command that memnode then skips).
func splitCommands(s string) []string {
	return strings.FieldsFunc(strings.NewReplacer("&&", ";", "||", ";", "|", ";", "\n", ";").Replace(s), func(r rune) bool { return r == ';' })
}

// isCount reports whether s is a line count or range (head -n 20, sed -n 1,80p's "20").
func isCount(s string) bool {
	return s != "" && strings.Trim(s, "0123456789,+$p") == ""
}

// shellFilePaths reads the files a canonical Bash call's command reads.
func shellFilePaths(toolInput json.RawMessage) []string {
	var ti struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(toolInput, &ti) != nil || ti.Command == "" {
		return nil
	}
	return ReadFiles(ti.Command)
}
