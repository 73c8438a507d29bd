package datadir_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memnode/memnode/internal/datadir"
)

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	got, err := datadir.Resolve(func(k string) string {
		if k == datadir.EnvVar {
			return dir
		}
		return ""
	})
	if err != nil || string(got) != dir {
		t.Fatalf("Resolve with %s=%s: %q %v", datadir.EnvVar, dir, got, err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	if got, err := datadir.Resolve(func(string) string { return "" }); err != nil || string(got) != filepath.Join(home, ".memnode") {
		t.Fatalf("default: %q %v", got, err)
	}
}

func TestReadToken(t *testing.T) {
	d := datadir.Dir(t.TempDir())
	if _, err := d.ReadToken(); !errors.Is(err, datadir.ErrNoToken) {
		t.Fatalf("missing token: %v, want ErrNoToken", err)
	}
	if err := os.WriteFile(d.Token(), []byte("  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadToken(); !errors.Is(err, datadir.ErrNoToken) {
		t.Fatalf("blank token: %v, want ErrNoToken", err)
	}
	if err := os.WriteFile(d.Token(), []byte("abc123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := d.ReadToken(); err != nil || tok != "abc123" {
		t.Fatalf("token %q %v", tok, err)
	}
	if _, err := datadir.Dir("").ReadToken(); !errors.Is(err, datadir.ErrNoToken) {
		t.Fatalf("no data dir: %v", err)
	}
}

// Every path lies inside the data dir and no two name the same file.
func TestLayoutIsDistinct(t *testing.T) {
	d := datadir.Dir("/data")
	seen := map[string]bool{}
	for _, p := range []string{d.DB(), d.QueueDB(), d.Token(), d.Socket(), d.PID(), d.Lock(), d.Settings(), d.Identity(),
		d.Group(), d.Logs(), d.NodeLog(), d.HookLog(), d.Spool(), d.State(), d.HookFailures(), d.Models(), d.LoginPages()} {
		if filepath.Dir(p) != "/data" && filepath.Dir(filepath.Dir(p)) != "/data" {
			t.Errorf("%s is outside the data dir", p)
		}
		if seen[p] {
			t.Errorf("%s named twice", p)
		}
		seen[p] = true
	}
}
