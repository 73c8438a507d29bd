package contextfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var mdc = Spec{Path: ".cursor/rules/memnode-context.mdc", Header: "---\ndescription: memnode\nalwaysApply: true\n---"}

func TestWriteCreatesWithHeaderAndRemoveDeletes(t *testing.T) {
	root := t.TempDir()
	path := mdc.File(root)
	act, err := Write(path, mdc, "<memnode-context>\nfixed the parser\n</memnode-context>")
	if err != nil || act != Created {
		t.Fatalf("Write = %q, %v; want created", act, err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "---\ndescription: memnode\nalwaysApply: true\n---\n\n"+begin(true, 0)+"\n") ||
		!strings.Contains(string(b), "fixed the parser") || !strings.HasSuffix(string(b), endLine+"\n") {
		t.Fatalf("created file:\n%s", b)
	}
	if act, err := Write(path, mdc, "<memnode-context>\nfixed the parser\n</memnode-context>"); err != nil || act != Unchanged {
		t.Fatalf("same body again = %q, %v; want unchanged", act, err)
	}
	if act, err := Write(path, mdc, "newer memory"); err != nil || act != Updated {
		t.Fatalf("new body = %q, %v; want updated", act, err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "fixed the parser") || !strings.Contains(string(b), "newer memory") {
		t.Fatalf("block not replaced:\n%s", b)
	}
	if act, err := Remove(path, mdc); err != nil || act != Removed {
		t.Fatalf("Remove = %q, %v; want removed", act, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file memnode created is still there: %v", err)
	}
	if act, err := Remove(path, mdc); err != nil || act != Absent {
		t.Fatalf("Remove again = %q, %v; want absent", act, err)
	}
}

func TestWriteKeepsTheUsersText(t *testing.T) {
	spec := Spec{Path: "GEMINI.md"}
	for name, orig := range map[string]string{
		"trailing newline":    "# Project rules\n\nUse tabs.\n",
		"no trailing newline": "# Project rules\nUse tabs.",
		"blank lines at end":  "Use tabs.\n\n\n",
		"empty":               "",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "GEMINI.md")
			if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
				t.Fatal(err)
			}
			if _, err := Write(path, spec, "memory one"); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if !strings.HasPrefix(string(b), strings.TrimRight(orig, "\n")) || !strings.Contains(string(b), "memory one") {
				t.Fatalf("user text clobbered:\n%q", b)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode = %v, want the file's own 0640", fi.Mode().Perm())
			}
			if _, err := Write(path, spec, "memory two"); err != nil {
				t.Fatal(err)
			}
			act, err := Remove(path, spec)
			if err != nil || act != Updated {
				t.Fatalf("Remove = %q, %v; want updated (the file is the user's)", act, err)
			}
			if b, _ := os.ReadFile(path); string(b) != orig && !(orig == "" && len(b) == 0) {
				t.Fatalf("after remove:\n%q\nwant the original\n%q", b, orig)
			}
		})
	}
}

func TestWriteReplacesOnlyTheBlockBetweenUserText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.md")
	orig := "above\n" + begin(false, 0) + "\nold memory\n" + endLine + "\nbelow\n"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(path, Spec{Path: "rules.md"}, "new memory"); err != nil {
		t.Fatal(err)
	}
	want := "above\n" + begin(false, 0) + "\nnew memory\n" + endLine + "\nbelow\n"
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Fatalf("got\n%q\nwant\n%q", b, want)
	}
	if _, err := Remove(path, Spec{Path: "rules.md"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "above\nbelow\n" {
		t.Fatalf("after remove: %q", b)
	}
}

func TestUnbalancedMarkersLeaveTheFileAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.md")
	orig := "mine\n" + begin(false, 0) + "\nno end\n"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(path, Spec{}, "x"); !errors.Is(err, ErrMarkers) {
		t.Fatalf("Write = %v, want ErrMarkers", err)
	}
	if _, err := Remove(path, Spec{}); !errors.Is(err, ErrMarkers) {
		t.Fatalf("Remove = %v, want ErrMarkers", err)
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Fatalf("file changed: %q", b)
	}
}

func TestCreatedFileWithUserTextIsKept(t *testing.T) {
	root := t.TempDir()
	path := mdc.File(root)
	if _, err := Write(path, mdc, "memory"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(b, []byte("my own rule\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if act, err := Remove(path, mdc); err != nil || act != Updated {
		t.Fatalf("Remove = %q, %v; want updated: the user added text", act, err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "my own rule") || strings.Contains(string(b), "memory\n") {
		t.Fatalf("after remove: %q", b)
	}
}

func TestBodyIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.md")
	body := "<memnode-context>\n" + strings.Repeat("ü line of memory\n", MaxBytes/8) + "</memnode-context>"
	if _, err := Write(path, Spec{}, body); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if len(b) > MaxBytes+len(begin(true, 0))+len(endLine)+2 {
		t.Fatalf("file is %d bytes, bound is %d", len(b), MaxBytes)
	}
	s := string(b)
	if !strings.Contains(s, "(cut:") || strings.Count(s, "</memnode-context>") != 1 {
		t.Fatalf("cut block must say so and keep the closing tag:\n%s", s[len(s)-300:])
	}
}

func TestTargetsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "context-files.json")
	a := Target{Platform: "cursor", Project: "p", Root: "/src/p"}
	b := Target{Platform: "windsurf", Project: "p", Root: "/src/p"}
	for _, tc := range []struct {
		t    Target
		want bool
	}{{a, true}, {a, false}, {b, true}} {
		if added, err := AddTarget(path, tc.t); err != nil || added != tc.want {
			t.Fatalf("AddTarget(%v) = %v, %v; want %v", tc.t, added, err, tc.want)
		}
	}
	gone, err := DropTargets(path, func(t Target) bool { return t.Platform == "cursor" })
	if err != nil || len(gone) != 1 || gone[0] != a {
		t.Fatalf("DropTargets = %v, %v", gone, err)
	}
	ts, err := LoadTargets(path)
	if err != nil || len(ts) != 1 || ts[0] != b {
		t.Fatalf("LoadTargets = %v, %v; want [%v]", ts, err, b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("targets file mode %v, want 0600", fi.Mode().Perm())
	}
}

// FuzzWriteRemoveRoundTrip: whatever the user's file holds (without memnode's markers),
// writing a block into it and removing it again gives back its exact bytes.
func FuzzWriteRemoveRoundTrip(f *testing.F) {
	f.Add("# rules\nuse tabs\n", "memory")
	f.Add("", "")
	f.Add("no newline", "two\nlines")
	f.Add("\n\n\n", "<memnode-context>x</memnode-context>")
	f.Fuzz(func(t *testing.T, orig, body string) {
		if strings.Contains(orig, "memnode:") || strings.Contains(body, "memnode:") || strings.Contains(body, "\r") {
			t.Skip()
		}
		path := filepath.Join(t.TempDir(), "f.md")
		if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Write(path, Spec{}, body); err != nil {
			t.Fatal(err)
		}
		if _, err := Write(path, Spec{}, body+" again"); err != nil {
			t.Fatal(err)
		}
		if _, err := Remove(path, Spec{}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if string(b) != orig {
			t.Fatalf("round trip changed the file:\n%q\nwant\n%q", b, orig)
		}
	})
}
