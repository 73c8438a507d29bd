package replica

import (
	"context"
	"fmt"
)

// Facets are the values the viewer's filters offer: the projects, coding agents and origins
// of the sessions held here, each sorted.
type Facets struct {
	Projects  []string
	Platforms []string
	Origins   []string
}

// Facets reads the distinct projects, platforms and origins of the sessions held (every
// record belongs to a session, and sessions are few next to records).
func (r *Replica) Facets(ctx context.Context) (Facets, error) {
	var f Facets
	for _, q := range []struct {
		col string
		dst *[]string
	}{{"project", &f.Projects}, {"platform", &f.Platforms}, {"origin", &f.Origins}} {
		rows, err := r.reads.query(ctx, "SELECT DISTINCT "+q.col+" FROM sessions WHERE "+q.col+" != '' ORDER BY 1")
		if err != nil {
			return Facets{}, fmt.Errorf("facets: %w", err)
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return Facets{}, fmt.Errorf("facets: %w", err)
			}
			*q.dst = append(*q.dst, v)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return Facets{}, fmt.Errorf("facets: %w", err)
		}
	}
	return f, nil
}
