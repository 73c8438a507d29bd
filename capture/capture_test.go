package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPauseResumeTrackRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "capture.json")
	now := time.Now()
	st, err := Load(path)
	if err != nil || len(st.Paused) != 0 {
		t.Fatalf("a missing file: %+v, %v", st, err)
	}
	st.Pause("client-x", now, 0)
	st.Pause(AllProjects, now, 2*time.Hour)
	st.Pause("old", now.Add(-3*time.Hour), time.Hour) // over: pruned
	st.Track("b")
	st.Track("a")
	if st.Track("a") {
		t.Errorf("tracking twice reported new")
	}
	st.Prune(now)
	if err := Save(path, st); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved file: %v %v", fi, err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Paused["old"]; ok {
		t.Errorf("an ended pause was kept")
	}
	if strings.Join(got.Tracked, ",") != "a,b" {
		t.Errorf("tracked %v", got.Tracked)
	}
	act := got.Active(now)
	if len(act) != 2 || act[0].Project != AllProjects || act[1].Project != "client-x" {
		t.Fatalf("active %+v", act)
	}
	if s := act[0].String(); !strings.HasPrefix(s, "all projects paused until ") {
		t.Errorf("all-projects pause reads %q", s)
	}
	if s := act[1].String(); s != "project client-x paused until 'memnode resume'" {
		t.Errorf("project pause reads %q", s)
	}
	if !got.Resume("client-x") || got.Resume("client-x") {
		t.Errorf("resume reports wrong")
	}
	if d := got.Decide(false, "client-x", "", now); d.Record {
		t.Errorf("all projects paused, client-x recorded")
	}
	if !got.Resume(AllProjects) || len(got.Paused) != 0 {
		t.Errorf("resume of all left %v", got.Paused)
	}
	if !got.Untrack("a") || got.Untrack("a") {
		t.Errorf("untrack reports wrong")
	}
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	root := t.TempDir()
	var st State
	st.Pause("p", now, time.Hour)
	st.Tracked = []string{"t"}
	cases := []struct {
		optIn         bool
		project, root string
		at            time.Time
		want          bool
		why           string
	}{
		{false, "p", "", now, false, "paused"},
		{false, "p", "", now.Add(time.Hour), true, ""}, // the pause ended
		{false, "q", "", now, true, ""},
		{true, "q", "", now, false, "not tracked"},
		{true, "t", "", now, true, ""},
		{true, "p", "", now, false, "paused"},
	}
	for _, c := range cases {
		d := st.Decide(c.optIn, c.project, c.root, c.at)
		if d.Record != c.want || d.Why != c.why {
			t.Errorf("Decide(%v, %q, %v) = %+v, want %v %q", c.optIn, c.project, c.at, d, c.want, c.why)
		}
	}
	if st.Decide(true, "m", root, now).Record {
		t.Errorf("opt-in: no marker, recorded")
	}
	if err := os.WriteFile(filepath.Join(root, MarkerFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !st.Decide(true, "m", root, now).Record {
		t.Errorf("opt-in: marker file present, not recorded")
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{"), 0o600)
	if _, err := Load(bad); err == nil {
		t.Errorf("a broken file loaded")
	}
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, []byte(`{"tracked":["`+strings.Repeat("x", maxFileBytes)+`"]}`), 0o600)
	if _, err := Load(big); err == nil {
		t.Errorf("an oversized file loaded")
	}
}

func TestDescribe(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var st State
	if got := st.Describe(false, now); len(got) != 0 {
		t.Errorf("nothing paused, all recorded: %v", got)
	}
	st.Pause("client-x", now, 0)
	st.Track("mine")
	got := st.Describe(true, now)
	if len(got) != 2 || got[0] != "project client-x paused until 'memnode resume'" || !strings.Contains(got[1], "tracked: mine") {
		t.Errorf("describe: %q", got)
	}
}
