package cli

import (
	"context"
	"database/sql"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/replica"
)

// checkFailLine checks a failed command's stderr holds exactly one "memnode: " line, that
// it names every one of want, and that the command gave up within startDeadline.
func checkFailLine(t *testing.T, cmd string, r e2ekit.Result, want ...string) {
	t.Helper()
	if r.Code == 0 {
		t.Fatalf("%s exited 0\nstdout: %s\nstderr: %s", cmd, r.Stdout, r.Stderr)
	}
	if r.Took > startDeadline {
		t.Errorf("%s took %s to fail; want under %s", cmd, r.Took, startDeadline)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
		if strings.HasPrefix(l, "memnode: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%s: want one memnode: line, got %d\nstderr: %s", cmd, len(lines), r.Stderr)
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Errorf("%s: line %q does not name %q", cmd, lines[0], w)
		}
	}
}

// sqliteFile opens the instance's memnode.db as another program would (WAL, like the node).
func sqliteFile(t *testing.T, in *e2ekit.Instance) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+datadir.Dir(in.DataDir).DB()+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestStartNamesWhyTheNodeCannotOpen: a node that cannot get past opening its database —
// a migration blocked by another program's write lock, a migration that fails, a schema
// from a newer memnode — or making its data dir, makes `memnode run` exit 1 and
// `memnode start` fail, each within the 10 s bound with one line naming the cause, and
// leaves no node holding the data dir.
func TestStartNamesWhyTheNodeCannotOpen(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, in *e2ekit.Instance) (want []string)
	}{
		{name: "another program holds the write lock during the migration", setup: func(t *testing.T, in *e2ekit.Instance) []string {
			// A sqlite3 shell in a write transaction on a database still to be migrated.
			conn, err := sqliteFile(t, in).Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			for _, q := range []string{"CREATE TABLE notes(x)", "BEGIN IMMEDIATE", "INSERT INTO notes VALUES (1)"} {
				if _, err := conn.ExecContext(context.Background(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			t.Cleanup(func() { conn.ExecContext(context.Background(), "ROLLBACK") })
			comm, _ := os.ReadFile("/proc/self/comm")
			return []string{"memnode.db", "locked by another process", "pid " + strconv.Itoa(os.Getpid()), strings.TrimSpace(string(comm))}
		}},
		{name: "a migration fails", setup: func(t *testing.T, in *e2ekit.Instance) []string {
			if _, err := sqliteFile(t, in).Exec("CREATE TABLE meta(x)"); err != nil {
				t.Fatal(err)
			}
			return []string{"memnode.db", "migrate 0001_init.sql", "table meta already exists"}
		}},
		{name: "the schema is from a newer memnode", setup: func(t *testing.T, in *e2ekit.Instance) []string {
			r, err := replica.Open(context.Background(), replica.Config{Path: datadir.Dir(in.DataDir).DB(), Origin: "e2e"})
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			if _, err := sqliteFile(t, in).Exec("INSERT INTO schema_version(version, applied_at) VALUES (9999, 0)"); err != nil {
				t.Fatal(err)
			}
			return []string{"memnode.db", "newer memnode", "schema version 9999"}
		}},
		{name: "the data dir cannot be made", setup: func(t *testing.T, in *e2ekit.Instance) []string {
			file := filepath.Join(t.TempDir(), "a-file")
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			in.DataDir = filepath.Join(file, "memnode")
			return []string{in.DataDir, "not a directory"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := e2ekit.NewInstance(t)
			want := c.setup(t, in)
			r := in.Run(nil, "run")
			if r.Code != 1 {
				t.Errorf("run exit code = %d, want 1\nstderr: %s", r.Code, r.Stderr)
			}
			checkFailLine(t, "run", r, want...)
			checkFailLine(t, "start", in.Run(nil, "start"), want...)
			if datadir.Held(in.DataDir) {
				t.Fatal("a node still holds the data dir")
			}
		})
	}
}

// TestStartNamesATakenPort: with the TCP transport, a port held by a program that cannot
// prove it is this data dir's node makes `memnode start` fail at once with one line naming
// the port and the way out, starting nothing. (`memnode run` keeps serving its Unix socket
// then: TestPortSquatterGetsNothing.)
func TestStartNamesATakenPort(t *testing.T) {
	in := e2ekit.NewInstance(t)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(in.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	in.Extra = append(in.Extra, "MEMNODE_TRANSPORT=tcp")
	checkFailLine(t, "start", in.Run(nil, "start"), "port "+strconv.Itoa(in.Port), "taken by something else", "MEMNODE_PORT")
	if datadir.Held(in.DataDir) {
		t.Fatal("start started a node although it cannot reach it")
	}
}
