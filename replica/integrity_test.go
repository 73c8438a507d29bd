package replica_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/replica"
)

func TestOpenRefusesACorruptFile(t *testing.T) {
	ctx := context.Background()
	cases := map[string]func(t *testing.T, path string){
		"damaged pages": func(t *testing.T, path string) { testkit.CorruptDB(t, path) },
		"not a database": func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not sqlite ", 1000)), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, corrupt := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memnode.db")
			r, err := replica.Open(ctx, replica.Config{Path: path, Origin: "a"})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			corrupt(t, path)
			r, err = replica.Open(ctx, replica.Config{Path: path, Origin: "a"})
			if err == nil {
				r.Close()
				t.Fatal("a corrupt file opened")
			}
			if !errors.Is(err, replica.ErrCorrupt) || !replica.IsCorrupt(err) {
				t.Fatalf("err = %v; want ErrCorrupt", err)
			}
		})
	}
}

func TestOpenAcceptsAHealthyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memnode.db")
	for i := 0; i < 2; i++ { // created, then reopened: quick_check passes both times
		r, err := replica.Open(context.Background(), replica.Config{Path: path, Origin: "a"})
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		r.Close()
	}
	if replica.IsCorrupt(errors.New("disk I/O error")) {
		t.Fatal("an unrelated error counts as corruption")
	}
}
