package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/memnode/memnode/client"
)

func cmdExport(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "export", "export [--project P] [--out FILE]")
	project := fs.String("project", "", "only this project")
	out := fs.String("out", "", "write to this file instead of stdout")
	if _, code, ok := fs.parse(args, 0, 0); !ok {
		return code
	}
	w := env.Stdout
	var f *os.File
	if *out != "" {
		var err error
		if f, err = exportFile(*out); err != nil {
			return fail(env, "export: %v", err)
		}
		w = f
	}
	rc := &recordCounter{w: w}
	_, err := with(ctx, newNodeConn(env), func(c *client.Client) (int, error) { rc.n = 0; return c.Export(ctx, *project, rc) })
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			// rename replaces the path itself: a symlink planted meanwhile is not followed.
			err = os.Rename(f.Name(), *out)
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}
	if err != nil {
		return fail(env, "export: %v", err)
	}
	fmt.Fprintf(env.Stderr, "exported %s\n", plural(rc.n, "record"))
	return 0
}

// exportFile checks that path is not a symbolic link nor a file of another user, and
// returns a new private (0600) file beside it that the caller renames onto path once the
// export is complete: nothing is ever written through a planted link or into someone
// else's file, and a failed export leaves path as it was.
func exportFile(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a symbolic link: refusing to write through it (remove it or choose another path)", path)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file", path)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
			return nil, fmt.Errorf("%s belongs to uid %d, not you: refusing to write into it", path, st.Uid)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return f, nil // CreateTemp makes it 0600
}

// recordCounter passes an export stream through and counts its records: the lines that
// are neither the header nor a device (what a user calls a record).
type recordCounter struct {
	w    io.Writer
	n    int
	head []byte // the start of the current line, up to len(`{"kind":"header"`)
	mid  bool   // inside a line whose kind is decided
}

func (r *recordCounter) Write(p []byte) (int, error) {
	for _, b := range p {
		switch {
		case b == '\n':
			if !r.mid && len(r.head) > 0 {
				r.count()
			}
			r.head, r.mid = r.head[:0], false
		case !r.mid:
			r.head = append(r.head, b)
			if len(r.head) >= len(`{"kind":"header"`) {
				r.count()
				r.mid = true
			}
		}
	}
	return r.w.Write(p)
}

func (r *recordCounter) count() {
	h := string(r.head)
	if !strings.HasPrefix(h, `{"kind":"header"`) && !strings.HasPrefix(h, `{"kind":"device"`) {
		r.n++
	}
}
