package replica

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/mattn/go-sqlite3"

	"github.com/memnode/memnode/internal/codewords"
)

// codePartsFunc is the SQL function the observations' full-text index calls for its parts
// column (migration 0010): codewords.Parts of the record's text. Deterministic, so SQLite
// may use it in triggers and views; the index removes a row by recomputing it, which is
// why a change of the rules (codewords.Version) needs a migration that rebuilds the index.
const codePartsFunc = "memnode_code_parts"

// projectKeyFunc is the SQL function the full-text indexes call for their project_key
// column (migration 0013): projectKey of the record's project. Deterministic, like
// memnode_code_parts, and for the same reason frozen: an index removes a row by recomputing
// its key, so a change of projectKey needs a migration that rebuilds the indexes.
const projectKeyFunc = "memnode_project_key"

// projectKey is the one token a project is known by in the full-text indexes: FNV-64a of
// its name in decimal digits (the porter tokenizer stems no digits, and no query term can
// reach the column, which every other MATCH excludes). Two projects may share a key; the
// reads that filter by it check the project in the table too.
func projectKey(project string) string {
	h := fnv.New64a()
	h.Write([]byte(project))
	return strconv.FormatUint(h.Sum64(), 10)
}

// connector opens go-sqlite3 connections that carry memnode's SQL functions. Every
// connection of a replica database needs them: the records' triggers and the indexes'
// content views call memnode_code_parts and memnode_project_key. Another program (a sqlite3 shell) can read the
// database, but writing an observation there fails with "no such function".
type connector struct {
	dsn     string
	pragmas []string
	drv     *sqlite3.SQLiteDriver
}

// openDB is sql.Open("sqlite3", dsn) with memnode's SQL functions on every connection, and
// pragmas (statements the DSN has no parameter for) run on each as it opens.
func openDB(dsn string, pragmas ...string) *sql.DB {
	return sql.OpenDB(connector{dsn: dsn, pragmas: pragmas, drv: &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		if err := c.RegisterFunc(codePartsFunc, codewords.Parts, true); err != nil {
			return err
		}
		return c.RegisterFunc(projectKeyFunc, projectKey, true)
	}}})
}

// Connect opens a connection and runs the pragmas on it through database/sql/driver's
// interface (the driver's own Exec is missing from its cgo-less stub, which the lean
// client's vet compiles against).
func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	for _, p := range c.pragmas {
		ex, ok := conn.(driver.ExecerContext)
		if !ok {
			conn.Close()
			return nil, fmt.Errorf("%s: the driver's connection runs no statements", p)
		}
		if _, err := ex.ExecContext(ctx, p, nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return conn, nil
}

func (c connector) Driver() driver.Driver { return c.drv }
