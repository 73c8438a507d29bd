// Package capture is the user's hand on recording: pauses (every project or one, for a while
// or until resumed), the opt-in list of tracked projects, and the one answer to "is this
// project recorded right now" that the hook asks before sending anything and that status,
// doctor and the viewer show. The state is a small JSON file in the data dir, so a hook reads
// it without asking the node.
package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memnode/memnode/internal/atomicfile"
)

// MarkerFile in a project's root directory opts the project in when capture is opt-in.
const MarkerFile = ".memnode-track"

// AllProjects is the project key of a pause that covers every project.
const AllProjects = "*"

// maxFileBytes bounds what a hook reads of the state file.
const maxFileBytes = 1 << 20

// Pause is one pause: since when, and until when (zero: until resumed).
type Pause struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until,omitzero"`
}

// activeAt reports whether the pause still holds at now.
func (p Pause) activeAt(now time.Time) bool { return p.Until.IsZero() || now.Before(p.Until) }

// State is the content of the capture file.
type State struct {
	// Paused maps a project name (or AllProjects) to its pause.
	Paused map[string]Pause `json:"paused,omitempty"`
	// Tracked are the projects opted in by `memnode track` (capture: opt-in).
	Tracked []string `json:"tracked,omitempty"`
}

// Load reads the state file at path; a missing file is the empty state.
func Load(path string) (State, error) {
	var s State
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read capture state: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return s, fmt.Errorf("read capture state: %w", err)
	}
	if len(b) > maxFileBytes {
		return s, fmt.Errorf("read capture state: %s is larger than %d bytes", path, maxFileBytes)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("parse %s: %w", path, err)
	}
	return s, nil
}

// Save writes the state file atomically (0600).
func Save(path string, s State) error {
	sort.Strings(s.Tracked)
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode capture state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save capture state: %w", err)
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("save capture state: %w", err)
	}
	return nil
}

// Prune drops the pauses that ended before now.
func (s *State) Prune(now time.Time) {
	for k, p := range s.Paused {
		if !p.activeAt(now) {
			delete(s.Paused, k)
		}
	}
}

// Pause pauses project (AllProjects for every one) from now, for d (0: until resumed).
func (s *State) Pause(project string, now time.Time, d time.Duration) {
	if s.Paused == nil {
		s.Paused = map[string]Pause{}
	}
	p := Pause{Since: now.UTC()}
	if d > 0 {
		p.Until = now.Add(d).UTC()
	}
	s.Paused[project] = p
}

// Resume ends project's pause (AllProjects: the pause of every project, and every
// project's own pause too); it reports whether anything was paused.
func (s *State) Resume(project string) bool {
	if project == AllProjects {
		had := len(s.Paused) > 0
		s.Paused = nil
		return had
	}
	_, had := s.Paused[project]
	delete(s.Paused, project)
	return had
}

// Track opts project in; it reports whether it was new.
func (s *State) Track(project string) bool {
	if slices.Contains(s.Tracked, project) {
		return false
	}
	s.Tracked = append(s.Tracked, project)
	return true
}

// Untrack takes project off the opt-in list; it reports whether it was there.
func (s *State) Untrack(project string) bool {
	i := slices.Index(s.Tracked, project)
	if i < 0 {
		return false
	}
	s.Tracked = slices.Delete(s.Tracked, i, i+1)
	return true
}

// PauseOf is the pause that holds for project at now: its own or the all-projects one.
func (s State) PauseOf(project string, now time.Time) (Pause, bool) {
	if p, ok := s.Paused[AllProjects]; ok && p.activeAt(now) {
		return p, true
	}
	if p, ok := s.Paused[project]; ok && p.activeAt(now) {
		return p, true
	}
	return Pause{}, false
}

// Active lists the pauses that hold at now, by project (AllProjects first).
func (s State) Active(now time.Time) []Entry {
	var out []Entry
	for k, p := range s.Paused {
		if p.activeAt(now) {
			out = append(out, Entry{Project: k, Pause: p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Project == AllProjects) != (out[j].Project == AllProjects) {
			return out[i].Project == AllProjects
		}
		return out[i].Project < out[j].Project
	})
	return out
}

// Entry is one active pause.
type Entry struct {
	Project string
	Pause
}

// String says what the pause is, e.g. "all projects paused until 15:04 UTC".
func (e Entry) String() string {
	who := "project " + e.Project
	if e.Project == AllProjects {
		who = "all projects"
	}
	if e.Until.IsZero() {
		return who + " paused until 'memnode resume'"
	}
	return who + " paused until " + e.Until.Local().Format("Jan 2 15:04 MST")
}

// Describe says, one line each, what is not recorded at now: every active pause, and under
// opt-in which projects are; nothing when every project is recorded.
func (s State) Describe(optIn bool, now time.Time) []string {
	var out []string
	for _, e := range s.Active(now) {
		out = append(out, e.String())
	}
	if optIn {
		tracked := "none by name"
		if len(s.Tracked) > 0 {
			tracked = strings.Join(s.Tracked, ", ")
		}
		out = append(out, fmt.Sprintf("opt-in: only tracked projects are recorded (tracked: %s; or a %s file in the project's root)", tracked, MarkerFile))
	}
	return out
}

// Decision is the answer for one project.
type Decision struct {
	Record bool
	// Why, when not recorded: "paused", "not tracked".
	Why string
}

// Decide answers whether project (whose root directory is root; "" when unknown) is
// recorded at now; optIn is the setting capture: opt-in (only tracked projects).
func (s State) Decide(optIn bool, project, root string, now time.Time) Decision {
	if _, ok := s.PauseOf(project, now); ok {
		return Decision{Why: "paused"}
	}
	if !optIn {
		return Decision{Record: true}
	}
	if slices.Contains(s.Tracked, project) {
		return Decision{Record: true}
	}
	if root != "" {
		if fi, err := os.Stat(filepath.Join(root, MarkerFile)); err == nil && !fi.IsDir() {
			return Decision{Record: true}
		}
	}
	return Decision{Why: "not tracked"}
}
