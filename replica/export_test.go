package replica

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memnode/memnode/internal/dbtemplate"
)

// PlaceMigrated puts an up-to-date schema at path, unless a file is there: Open then has no
// migration to run. The template is built once per test binary (main_test.go).
func PlaceMigrated(tb dbtemplate.TB, path string) { migrated.Place(tb, path) }

// PathOf is the database file r was opened on (salvage reads it as a source).
func PathOf(r *Replica) string { return r.cfg.Path }

// CountsDiff compares the maintained counts (table_counts, project_counts) with a fresh
// COUNT(*) and SUM() of the tables, in one read transaction; "" when they agree. A
// project row whose counts are all zero is as good as none.
func CountsDiff(ctx context.Context, r *Replica) (string, error) {
	tx, err := r.r.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	var diff []string
	for _, table := range []string{"sessions", "prompts", "observations", "summaries", "ops", "tombstones"} {
		var kept, counted int
		if err := tx.QueryRowContext(ctx, "SELECT (SELECT n FROM table_counts WHERE name = ?), (SELECT COUNT(*) FROM "+table+")", table).
			Scan(&kept, &counted); err != nil {
			return "", fmt.Errorf("%s: %w", table, err)
		}
		if kept != counted {
			diff = append(diff, fmt.Sprintf("%s: kept %d, counted %d", table, kept, counted))
		}
	}
	read := func(q string) (map[string][3]int, error) {
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := map[string][3]int{}
		for rows.Next() {
			var p string
			var c [3]int
			if err := rows.Scan(&p, &c[0], &c[1], &c[2]); err != nil {
				return nil, err
			}
			if c != [3]int{} {
				out[p] = c
			}
		}
		return out, rows.Err()
	}
	kept, err := read("SELECT project, observations, discovery_tokens, sessions FROM project_counts")
	if err != nil {
		return "", err
	}
	counted, err := read(`SELECT project, SUM(o), SUM(t), SUM(s) FROM (
		SELECT project, COUNT(*) AS o, SUM(discovery_tokens) AS t, 0 AS s FROM observations GROUP BY project
		UNION ALL SELECT project, 0, 0, COUNT(*) FROM sessions GROUP BY project) GROUP BY project`)
	if err != nil {
		return "", err
	}
	projects := maps.Clone(kept)
	maps.Copy(projects, counted)
	for _, p := range slices.Sorted(maps.Keys(projects)) {
		if kept[p] != counted[p] {
			diff = append(diff, fmt.Sprintf("project %q (observations, tokens, sessions): kept %v, counted %v", p, kept[p], counted[p]))
		}
	}
	return strings.Join(diff, "\n"), nil
}
