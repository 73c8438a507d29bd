package archtest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// replicaImporters are the packages whose code may import replica: the daemon's wiring, the
// CLI, the test kit that opens real replicas for other packages' tests, and the e2e kit that
// reads a stopped sync peer's replica. Every other part
// speaks the store contract (package store) through an interface of its own.
var replicaImporters = []string{"node", "internal/testkit", "internal/e2ekit"}

// sqliteFree are the packages that must build without SQLite: they reach the store only
// through the store contract, so a second backend (or a fake) can stand in for the replica.
// team keeps its own local state (team.db) behind team.StateDB, opened by team/statedb.
var sqliteFree = []string{"pipeline", "search", "sync", "team", "importer", "embed/worker", "store", "store/storetest", "store/memstore"}

const sqliteDriver = "github.com/mattn/go-sqlite3"

func TestOnlyTheNodeImportsTheReplica(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	module, pkgs := listPackages(t, root)
	replica := module + "/replica"
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.ImportPath, module+"/")
		if name == "replica" || strings.HasPrefix(name, "replica/") || strings.HasPrefix(name, "cmd/") || slices.Contains(replicaImporters, name) {
			continue
		}
		if slices.Contains(p.Imports, replica) {
			t.Errorf("`%s` imports replica: use the store package's types behind an interface of its own (only node, cmd/* and tests open a replica)", name)
		}
	}
}

func TestStoreUsersLinkNoSQLite(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	module, pkgs := listPackages(t, root)
	seen := 0
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.ImportPath, module+"/")
		if !slices.Contains(sqliteFree, name) {
			continue
		}
		seen++
		if slices.Contains(p.Deps, sqliteDriver) {
			t.Errorf("`%s` links %s (go list -deps): it must reach storage through the store contract only", name, sqliteDriver)
		}
		if slices.Contains(p.Deps, module+"/replica") {
			t.Errorf("`%s` links replica (go list -deps)", name)
		}
	}
	if seen != len(sqliteFree) {
		t.Fatalf("found %d of the %d packages %v", seen, len(sqliteFree), sqliteFree)
	}
	// The check can fail: the replica itself links the driver.
	for _, p := range pkgs {
		if p.ImportPath == module+"/replica" && !slices.Contains(p.Deps, sqliteDriver) {
			t.Fatalf("replica does not link %s: the dependency list this test reads is wrong", sqliteDriver)
		}
	}
}
