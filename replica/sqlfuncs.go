package replica

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/mattn/go-sqlite3"

	"github.com/memnode/memnode/internal/codewords"
)

// codePartsFunc is the SQL function the observations' full-text index calls for its parts
// column (migration 0010): codewords.Parts of the record's text. Deterministic, so SQLite
// may use it in triggers and views; the index removes a row by recomputing it, which is
// why a change of the rules (codewords.Version) needs a migration that rebuilds the index.
const codePartsFunc = "memnode_code_parts"

// connector opens go-sqlite3 connections that carry memnode's SQL functions. Every
// connection of a replica database needs them: the observations' triggers and the index's
// content view call memnode_code_parts. Another program (a sqlite3 shell) can read the
// database, but writing an observation there fails with "no such function".
type connector struct {
	dsn string
	drv *sqlite3.SQLiteDriver
}

// openDB is sql.Open("sqlite3", dsn) with memnode's SQL functions on every connection.
func openDB(dsn string) *sql.DB {
	return sql.OpenDB(connector{dsn: dsn, drv: &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		return c.RegisterFunc(codePartsFunc, codewords.Parts, true)
	}}})
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }

func (c connector) Driver() driver.Driver { return c.drv }
