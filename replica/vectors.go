package replica

import (
	"context"
	"fmt"
	"github.com/memnode/memnode/store"
	"strings"
)

// modeDerived is for rows derived from replicated content (vectors): losing the last
// ones to a power cut only means embedding them again, so they skip the fsync.
var modeDerived = txMode{synchronous: "NORMAL", secureDelete: "FAST"}

// MissingVectors returns up to limit observations, newest first, that have no vector of
// model (rows of another model count as missing, so a model change re-embeds).
func (r *Replica) MissingVectors(ctx context.Context, model string, limit int) ([]store.VectorSource, error) {
	rows, err := r.r.QueryContext(ctx, `SELECT o.rowid, o.id, o.title, o.subtitle, o.facts, o.narrative FROM observations o
		WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.obs_rowid = o.rowid AND v.model = ?)
		ORDER BY o.rowid DESC LIMIT ?`, model, limit)
	if err != nil {
		return nil, fmt.Errorf("missing vectors: %w", err)
	}
	defer rows.Close()
	var out []store.VectorSource
	for rows.Next() {
		var s store.VectorSource
		var title, subtitle, facts, narrative string
		if err := rows.Scan(&s.RowID, &s.ID, &title, &subtitle, &facts, &narrative); err != nil {
			return nil, fmt.Errorf("missing vectors: %w", err)
		}
		s.Text = EmbeddingText(title, subtitle, parseList(facts), narrative)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("missing vectors: %w", err)
	}
	return out, nil
}

// EmbeddingText is the text an observation is embedded from. The title comes first: a
// model that truncates long inputs keeps the densest part.
func EmbeddingText(title, subtitle string, facts []string, narrative string) string {
	parts := make([]string, 0, 3+len(facts))
	for _, p := range append(append([]string{title, subtitle}, facts...), narrative) {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n")
}

// PutVectors stores vectors of model in one transaction, replacing any vector of another
// model. A row whose observation was forgotten (or whose rowid now names another
// observation) in the meantime is skipped. It returns how many rows were stored.
func (r *Replica) PutVectors(ctx context.Context, model string, rows []store.VectorRow) (int, error) {
	stored := 0
	err := r.writeTxMode(ctx, modeDerived, func(tx *wtx) error {
		stored = 0
		for _, v := range rows {
			res, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO vectors(obs_rowid, model, dim, vec)
				SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM observations WHERE rowid = ?1 AND id = ?5)`,
				v.RowID, model, v.Dim, v.Blob, v.ID)
			if err != nil {
				return fmt.Errorf("put vector: %w", err)
			}
			n, _ := res.RowsAffected()
			stored += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return stored, nil
}

// LoadVectors calls fn with every usable vector of model (failed rows left out), in
// rowid order, with the observation's ID. The blob is only valid during the call.
func (r *Replica) LoadVectors(ctx context.Context, model string, fn func(id string, blob []byte) error) error {
	rows, err := r.r.QueryContext(ctx, `SELECT o.id, v.vec FROM vectors v JOIN observations o ON o.rowid = v.obs_rowid
		WHERE v.model = ? AND v.dim > 0 ORDER BY v.obs_rowid`, model)
	if err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			return fmt.Errorf("load vectors: %w", err)
		}
		if err := fn(id, blob); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	return nil
}

// VectorCounts reports how many observations have a vector of model.
func (r *Replica) VectorCounts(ctx context.Context, model string) (store.VectorStats, error) {
	var s store.VectorStats
	err := r.r.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM observations),
		(SELECT COUNT(*) FROM vectors WHERE model = ?1), (SELECT COUNT(*) FROM vectors WHERE model = ?1 AND dim = 0)`, model).
		Scan(&s.Total, &s.Embedded, &s.Failed)
	if err != nil {
		return s, fmt.Errorf("vector counts: %w", err)
	}
	return s, nil
}
