package replica

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Short IDs: a record's full ID is 26 characters (~6.5 tokens in every index row); its
// short form is the shortest prefix of a hash of the ID, at least MinShortID characters,
// that no other record this replica holds shares — git's short hashes. The hash, not the
// ID, is shortened because IDs begin with their time: records of one second share their
// first eight characters.

// Short ID bounds.
const (
	MinShortID  = 6  // characters of the shortest short form (~2 tokens by memory.EstimateTokens)
	shortIDHash = 12 // characters of the stored hash (60 bits)
)

// ErrAmbiguous reports a short ID that several records share; the error names them.
var ErrAmbiguous = errors.New("ambiguous short ID")

// shortHash is the Crockford base32 form of the first 60 bits of SHA-256(id).
func shortHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	v := uint64(sum[0])<<56 | uint64(sum[1])<<48 | uint64(sum[2])<<40 | uint64(sum[3])<<32 |
		uint64(sum[4])<<24 | uint64(sum[5])<<16 | uint64(sum[6])<<8 | uint64(sum[7])
	var out [shortIDHash]byte
	for i := range out {
		out[i] = idAlphabet[v>>59]
		v <<= 5
	}
	return string(out[:])
}

// shortTables are the record tables whose rows get short IDs, by change-feed kind.
var shortTables = map[string]string{OpPrompt: "prompts", OpObservation: "observations", OpSummary: "summaries"}

// indexShortIDs gives every record the transaction stored a short_ids row (records it
// recorded but did not keep — a tombstoned or cut one — get none).
func (t *wtx) indexShortIDs(ctx context.Context) error {
	for kind, ids := range map[string][]string{OpPrompt: t.change.Prompts, OpObservation: t.change.Observations, OpSummary: t.change.Summaries} {
		q := "INSERT OR IGNORE INTO short_ids(h, id) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM " + shortTables[kind] + " WHERE id = ?2)"
		for _, id := range ids {
			if _, err := t.ExecContext(ctx, q, shortHash(id), id); err != nil {
				return fmt.Errorf("index short id: %w", err)
			}
		}
	}
	return nil
}

// backfillShortIDs is migration 6's Go step: short IDs for the records already stored.
func backfillShortIDs(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT id FROM prompts UNION ALL SELECT id FROM observations UNION ALL SELECT id FROM summaries")
	if err != nil {
		return fmt.Errorf("backfill short ids: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("backfill short ids: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("backfill short ids: %w", err)
	}
	st, err := tx.PrepareContext(ctx, "INSERT OR IGNORE INTO short_ids(h, id) VALUES (?, ?)")
	if err != nil {
		return fmt.Errorf("backfill short ids: %w", err)
	}
	defer st.Close()
	for _, id := range ids {
		if _, err := st.ExecContext(ctx, shortHash(id), id); err != nil {
			return fmt.Errorf("backfill short ids: %w", err)
		}
	}
	return nil
}

// migrationSteps run in a migration's transaction right after its SQL.
var migrationSteps = map[int]func(context.Context, *sql.Tx) error{6: backfillShortIDs, 7: opsInRow}

// ShortIDs returns the short form of each ID that names a record here (IDs without one
// are left out): the shortest prefix of its hash, at least MinShortID characters, that no
// other record shares, lengthened while it would read as a claude-mem number (digits, or
// S and digits).
func (r *Replica) ShortIDs(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	// One query for the whole list (the session-start context asks for every observation
	// it shows): each hash with the ID that owns it and its two neighbours in hash order.
	hashes := make([]string, 0, len(ids))
	byHash := make(map[string][]string, len(ids))
	for _, id := range ids {
		h := shortHash(id)
		if _, dup := byHash[h]; !dup {
			hashes = append(hashes, h)
		}
		byHash[h] = append(byHash[h], id)
	}
	rows, err := r.reads.query(ctx, `SELECT j.value,
			(SELECT id FROM short_ids WHERE h = j.value),
			(SELECT h FROM short_ids WHERE h < j.value ORDER BY h DESC LIMIT 1),
			(SELECT h FROM short_ids WHERE h > j.value ORDER BY h LIMIT 1)
		FROM json_each(?) AS j`, string(mustJSON(hashes)))
	if err != nil {
		return nil, fmt.Errorf("short ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		var mine, before, after sql.NullString
		if err := rows.Scan(&h, &mine, &before, &after); err != nil {
			return nil, fmt.Errorf("short ids: %w", err)
		}
		if !mine.Valid || !slices.Contains(byHash[h], mine.String) {
			continue // no record here, or another ID owns the hash
		}
		id := mine.String
		n := MinShortID
		for _, nb := range []sql.NullString{before, after} {
			if nb.Valid {
				n = max(n, commonPrefix(h, nb.String)+1)
			}
		}
		for n < len(h) && looksNumeric(h[:n]) {
			n++
		}
		out[id] = h[:min(n, len(h))]
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("short ids: %w", err)
	}
	return out, nil
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// looksNumeric reports a form that would read as a claude-mem ID: digits, or S and digits.
func looksNumeric(s string) bool {
	s = strings.TrimPrefix(s, "S")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// IsShortIDForm reports whether s could be a short ID (or a prefix of one): 4 to 12
// Crockford base32 characters, any case.
func IsShortIDForm(s string) bool {
	if len(s) < 4 || len(s) > shortIDHash {
		return false
	}
	for _, c := range strings.ToUpper(s) {
		if !strings.ContainsRune(idAlphabet, c) {
			return false
		}
	}
	return true
}

// ResolveShortID returns the ID of the record whose short ID starts with prefix (any
// case). ok is false when none does; several make an error wrapping ErrAmbiguous that
// lists them (up to 10).
func (r *Replica) ResolveShortID(ctx context.Context, prefix string) (id string, ok bool, err error) {
	if !IsShortIDForm(prefix) {
		return "", false, nil
	}
	p := strings.ToUpper(prefix)
	rows, err := r.reads.query(ctx, "SELECT h, id FROM short_ids WHERE h >= ? AND h <= ? ORDER BY h LIMIT 11",
		p, p+strings.Repeat("Z", shortIDHash-len(p)))
	if err != nil {
		return "", false, fmt.Errorf("resolve short id: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var h, rid string
		if err := rows.Scan(&h, &rid); err != nil {
			return "", false, fmt.Errorf("resolve short id: %w", err)
		}
		ids = append(ids, rid)
	}
	if err := rows.Err(); err != nil {
		return "", false, fmt.Errorf("resolve short id: %w", err)
	}
	switch len(ids) {
	case 0:
		return "", false, nil
	case 1:
		return ids[0], true, nil
	}
	more := ""
	if len(ids) > 10 {
		ids, more = ids[:10], ", …"
	}
	return "", false, fmt.Errorf("%w: %s names %s%s; give more characters or the full ID", ErrAmbiguous, prefix, strings.Join(ids, ", "), more)
}
