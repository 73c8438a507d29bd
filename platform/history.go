package platform

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"time"
)

// History is where an agent keeps its past sessions on disk, for `memnode import
// --from-<agent>`: each session file is replayed as the hook calls the agent made for it,
// through the agent's Adapter like live ones.
type History struct {
	// Dir is the default folder of the agent's session files (e.g. ~/.codex/sessions);
	// getenv reads the agent's own variables (CODEX_HOME, …).
	Dir func(home string, getenv func(string) string) string
	// IsSession reports whether rel (a path below Dir, slash-separated) is a session file.
	IsSession func(rel string) bool
	// Replay reads one session file.
	Replay func(path string) (Replayed, error)
	// UserMemory names the agent's hand-kept memory file for every project, relative to
	// the parent of Dir ("CLAUDE.md", "AGENTS.md", "GEMINI.md", …): its list items become
	// global notes. "" for none.
	UserMemory string
	// ProjectMemory lists the memory files of a project: root is its root folder,
	// sessionFile one of its session files. Their list items become the project's notes.
	ProjectMemory func(root, sessionFile string) []string
	// Export is set for an agent that keeps its sessions in a database, not in files
	// (OpenCode): it exports the sessions of the agent's data folder dir last updated at or
	// after since (epoch ms; 0: all) through the agent's own CLI into the folder out, a
	// file each that Replay reads. It reports false, writing nothing, when dir is not such
	// a data folder: a folder of files exported before is read as it is.
	Export func(ctx context.Context, dir, out string, since int64) (bool, error)
}

// Replayed is one session file, read back.
type Replayed struct {
	// Calls are the hook calls the agent made for the session, in order (none for a file
	// of no session, e.g. a sub-agent's).
	Calls []Recorded
	// Cwd is the session's working folder ("" when the file does not say).
	Cwd string
	// BadLines counts the lines that were not records of the agent's format (torn by a
	// crash, or another program's): they are skipped, and the importer says how many.
	BadLines int
}

// SessionFiles lists the session files below dir (those h.IsSession accepts) last written
// at or after since (epoch ms; 0: all), oldest first. A folder below dir that cannot be
// read is skipped; dir itself missing or unreadable is an error.
func (h History) SessionFiles(dir string, since int64) ([]string, error) {
	type file struct {
		path string
		mod  time.Time
	}
	var found []file
	err := filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // an unreadable folder: the rest still imports
		}
		if de.IsDir() || !de.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || !h.IsSession(filepath.ToSlash(rel)) {
			return nil
		}
		fi, err := de.Info()
		if err != nil {
			return nil
		}
		if since > 0 && fi.ModTime().UnixMilli() < since {
			return nil
		}
		found = append(found, file{path, fi.ModTime()})
		return nil
	})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist (give the folder that holds the sessions)", dir)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("%s cannot be read (permission denied)", dir)
	case err != nil:
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].mod.Before(found[j].mod) })
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.path
	}
	return out, nil
}

// MaxHistoryLine bounds one line of a session file (a line may hold a whole model request).
const MaxHistoryLine = 64 << 20

// ScanLines calls fn with each non-blank line of r (the slice is reused between calls).
// A line longer than MaxHistoryLine is an error: the file is not one of the agent's.
func ScanLines(r io.Reader, fn func(n int, line []byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxHistoryLine)
	n := 0
	for sc.Scan() {
		n++
		if len(sc.Bytes()) == 0 {
			continue
		}
		fn(n, sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read line %d: %w", n+1, err)
	}
	return nil
}

// ReplayFile opens a session file (platform.OpenTranscript's checks) and hands it to read.
func ReplayFile(path string, read func(io.Reader) (Replayed, error)) (Replayed, error) {
	f, err := OpenTranscript(path)
	if err != nil {
		return Replayed{}, err
	}
	defer f.Close()
	return read(f)
}
