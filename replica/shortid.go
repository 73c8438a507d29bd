package replica

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"github.com/memnode/memnode/store"
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// Short IDs: a record's full ID is 26 characters (~6.5 tokens in every index row); its
// short form is the shortest prefix of a hash of the ID, at least MinShortID characters,
// that no other record this replica holds shares — git's short hashes. The hash, not the
// ID, is shortened because IDs begin with their time: records of one second share their
// first eight characters.

// shortIDHash is the characters of the stored hash (60 bits).
const shortIDHash = store.MaxShortID

// shortKey is a record's place in the short-ID order: h, the 60 bits of SHA-256(id) its
// short hash spells, and fp, the next 64 bits, which tell apart two IDs whose hashes agree.
type shortKey struct{ h, fp uint64 }

func shortKeyOf(id string) shortKey {
	sum := sha256.Sum256([]byte(id))
	return shortKey{h: binary.BigEndian.Uint64(sum[:8]) >> 4, fp: binary.BigEndian.Uint64(sum[8:16])}
}

// spell is the Crockford base32 form of a 60-bit hash, most significant character first.
func spell(h uint64) string {
	var out [shortIDHash]byte
	for i := range out {
		out[i] = store.IDAlphabet[h>>(5*(shortIDHash-1-i))&31]
	}
	return string(out[:])
}

// shortHash is the Crockford base32 form of the first 60 bits of SHA-256(id).
func shortHash(id string) string { return spell(shortKeyOf(id).h) }

// shortTables are the record tables whose rows get short IDs, by change-feed kind.
var shortTables = map[string]string{store.OpPrompt: "prompts", store.OpObservation: "observations", store.OpSummary: "summaries"}

// indexShortIDs gives every record the transaction stored a short_ids row (records it
// recorded but did not keep — a tombstoned or cut one — get none), and notes the rows it
// added for the in-memory index.
func (t *wtx) indexShortIDs(ctx context.Context) error {
	for kind, ids := range map[string][]string{store.OpPrompt: t.change.Prompts, store.OpObservation: t.change.Observations, store.OpSummary: t.change.Summaries} {
		q := "INSERT OR IGNORE INTO short_ids(h, id) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM " + shortTables[kind] + " WHERE id = ?2)"
		for _, id := range ids {
			k := shortKeyOf(id)
			res, err := t.ExecContext(ctx, q, spell(k.h), id)
			if err != nil {
				return fmt.Errorf("index short id: %w", err)
			}
			if n, err := res.RowsAffected(); err == nil && n > 0 {
				t.shortAdded = append(t.shortAdded, k)
			}
		}
	}
	return nil
}

// deletesRecords notes that the transaction deletes prompt, observation or summary rows
// (their short_ids rows go with them, by trigger). ids are the records it deletes, every
// one of them (forget knows them: they are what it removes), and the in-memory index drops
// just those after the commit; called with none, which rows go is not known and the index
// is read again from the table — O(records), 1 s at a million, so a path that runs often
// names its IDs. Every function with a statement that deletes such rows calls it
// (TestEveryRecordDeleteMarksTheShortIndex reads the package's source for them).
func (t *wtx) deletesRecords(ids ...string) {
	if len(ids) == 0 {
		t.shortStale = true
	}
	for _, id := range ids {
		t.shortRemoved = append(t.shortRemoved, shortKeyOf(id))
	}
}

// shortIndex is the short_ids table in memory, sorted by hash, so that a short ID is a
// binary search to its two neighbours and no SQL: the session-start context and every
// search ask for the short IDs of all they show. Read from the table on first use and
// after a transaction that deleted records it did not name; kept by the commit path (runTx)
// for the rows each transaction added or named as deleted. 16 bytes a record.
type shortIndex struct {
	mu     sync.RWMutex
	loaded bool
	keys   []shortKey // sorted by h; h is unique (the table's key)
}

// committed brings the index up to a committed transaction: it adds the rows the
// transaction added and drops those it named as deleted, or, when it deleted records it did
// not name, drops the index to be read again.
func (x *shortIndex) committed(added, removed []shortKey, stale bool) {
	if len(added) == 0 && len(removed) == 0 && !stale {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if stale {
		x.loaded, x.keys = false, nil
	}
	if !x.loaded {
		return // the next read loads what this transaction committed
	}
	// A key not held was never seen by a load that began after the commit; one with
	// another fp is another ID's (the table keeps the first of two IDs sharing 60 bits).
	if len(removed) <= 16 {
		for _, k := range removed {
			if i, found := slices.BinarySearchFunc(x.keys, k.h, cmpShortKey); found && x.keys[i].fp == k.fp {
				x.keys = slices.Delete(x.keys, i, i+1)
			}
		}
	} else { // one pass, not a move of the tail per key
		gone := make(map[shortKey]bool, len(removed))
		for _, k := range removed {
			gone[k] = true
		}
		x.keys = slices.DeleteFunc(x.keys, func(k shortKey) bool { return gone[k] })
	}
	for _, k := range added {
		i, found := slices.BinarySearchFunc(x.keys, k.h, cmpShortKey)
		if !found { // found: a load that began after the commit has it already
			x.keys = slices.Insert(x.keys, i, k)
		}
	}
}

func cmpShortKey(k shortKey, h uint64) int { return cmp.Compare(k.h, h) }

// load reads the index from the table. It holds the lock while it reads, so a commit that
// the read does not see adds its rows after it.
func (x *shortIndex) load(ctx context.Context, r *Replica) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.loaded {
		return nil
	}
	rows, err := r.r.QueryContext(ctx, "SELECT id FROM short_ids")
	if err != nil {
		return err
	}
	defer rows.Close()
	var keys []shortKey
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		keys = append(keys, shortKeyOf(id))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	slices.SortFunc(keys, func(a, b shortKey) int { return cmp.Compare(a.h, b.h) })
	x.loaded, x.keys = true, keys
	return nil
}

// forms sets out[id] to the short form of each of ids the index holds; ok is false when
// the index must be loaded first.
func (x *shortIndex) forms(ids []string, out map[string]string) (ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.loaded {
		return false
	}
	for _, id := range ids {
		k := shortKeyOf(id)
		i, found := slices.BinarySearchFunc(x.keys, k.h, cmpShortKey)
		if !found || x.keys[i].fp != k.fp {
			continue // no record here, or another ID owns the hash
		}
		n := store.MinShortID
		if i > 0 {
			n = max(n, commonChars(k.h, x.keys[i-1].h)+1)
		}
		if i+1 < len(x.keys) {
			n = max(n, commonChars(k.h, x.keys[i+1].h)+1)
		}
		h := spell(k.h)
		for n < len(h) && looksNumeric(h[:n]) {
			n++
		}
		out[id] = h[:min(n, len(h))]
	}
	return true
}

// commonChars is how many leading base32 characters two distinct 60-bit hashes share.
func commonChars(a, b uint64) int { return (bits.LeadingZeros64(a^b) - (64 - 5*shortIDHash)) / 5 }

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
// S and digits). It reads the in-memory index (shortIndex).
func (r *Replica) ShortIDs(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	for !r.shorts.forms(ids, out) {
		if err := r.shorts.load(ctx, r); err != nil {
			return nil, fmt.Errorf("short ids: %w", err)
		}
	}
	return out, nil
}

// WarmShortIDs reads the short-ID index now (what the first ShortIDs call would: a read of
// every record's key, seconds at 1M records), so the first session-start context after the
// node is ready does not pay it.
func (r *Replica) WarmShortIDs(ctx context.Context) error {
	if err := r.shorts.load(ctx, r); err != nil {
		return fmt.Errorf("short ids: %w", err)
	}
	return nil
}

// looksNumeric reports a form that would read as a claude-mem ID: digits, or S and digits.
func looksNumeric(s string) bool {
	s = strings.TrimPrefix(s, "S")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// ResolveShortID returns the ID of the record whose short ID starts with prefix (any
// case). ok is false when none does; several make an error wrapping ErrAmbiguous that
// lists them (up to 10).
func (r *Replica) ResolveShortID(ctx context.Context, prefix string) (id string, ok bool, err error) {
	if !store.IsShortIDForm(prefix) {
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
	return "", false, fmt.Errorf("%w: %s names %s%s; give more characters or the full ID", store.ErrAmbiguous, prefix, strings.Join(ids, ", "), more)
}
