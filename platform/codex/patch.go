package codex

import (
	"encoding/json"
	"strings"
)

// patchCall maps an apply_patch text that touches exactly one file onto the canonical
// call: "*** Update File" → Edit {file_path, old_string, new_string} (the hunks' removed
// and added lines, context in both), "*** Add File" → Write {file_path, content}. Other
// patches (several files, deletes, moves) stay apply_patch.
func patchCall(patch, cwd string) (string, json.RawMessage, bool) {
	lines := strings.Split(strings.ReplaceAll(patch, "\r\n", "\n"), "\n")
	var op, path string
	var old, new []string
	files := 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "*** Update File: "):
			op, path = "update", strings.TrimSpace(strings.TrimPrefix(l, "*** Update File: "))
			files++
		case strings.HasPrefix(l, "*** Add File: "):
			op, path = "add", strings.TrimSpace(strings.TrimPrefix(l, "*** Add File: "))
			files++
		case strings.HasPrefix(l, "*** Delete File: "), strings.HasPrefix(l, "*** Move to: "):
			return "", nil, false
		case strings.HasPrefix(l, "***"), strings.HasPrefix(l, "@@"):
		case op == "":
		case strings.HasPrefix(l, "+"):
			new = append(new, l[1:])
		case strings.HasPrefix(l, "-"):
			old = append(old, l[1:])
		case strings.HasPrefix(l, " "):
			old, new = append(old, l[1:]), append(new, l[1:])
		}
	}
	if files != 1 || path == "" {
		return "", nil, false
	}
	file := absPath(path, cwd)
	if op == "add" {
		return "Write", mustJSON(map[string]string{"file_path": file, "content": strings.Join(new, "\n") + "\n"}), true
	}
	return "Edit", mustJSON(map[string]string{"file_path": file, "old_string": strings.Join(old, "\n"), "new_string": strings.Join(new, "\n")}), true
}
