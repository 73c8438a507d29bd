// Package statedb opens team memory's local state file (<data dir>/team.db) with SQLite
// (go-sqlite3): the driver team itself does not link. team owns the schema and the queries;
// this package owns the file's mode (0600) and its connection settings.
package statedb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver

	"github.com/memnode/memnode/internal/sqliteuri"
)

// Open opens (creating it 0600) the SQLite file at path in WAL mode with full fsync,
// immediate write transactions and one connection: team's writes are a few small
// transactions, and one connection serialises them without SQLITE_BUSY. The result satisfies
// team.StateDB; team.Config.OpenState takes this function.
func Open(ctx context.Context, path string) (*sql.DB, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open team state: %w", err)
	}
	f.Close()
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_busy_timeout", "5000")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite3", sqliteuri.File(path, q))
	if err != nil {
		return nil, fmt.Errorf("open team state: %w", err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open team state: %w", err)
	}
	return db, nil
}
