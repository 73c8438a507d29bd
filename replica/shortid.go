package replica

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
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

// shortIDHash is the characters of a short ID's hash (60 bits).
const shortIDHash = store.MaxShortID

// shortKey is a record's place in the short-ID order: h, the 60 bits of SHA-256(id) its
// short hash spells, and ref, where the record's row is: its table (shortTable) in the low
// two bits, its rowid above them. The index holds no ID: a resolved prefix reads its
// records' IDs by rowid, so the index costs 16 bytes a record and the database nothing
// (schema v15 dropped the short_ids table, see replica/DESIGN.md "Short IDs").
type shortKey struct{ h, ref uint64 }

// shortHashOf is the 60 bits of SHA-256(id) a short ID spells.
func shortHashOf[T ~string | ~[]byte](id T) uint64 {
	sum := sha256.Sum256([]byte(id))
	return binary.BigEndian.Uint64(sum[:8]) >> 4
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
func shortHash(id string) string { return spell(shortHashOf(id)) }

// shortTable are the record tables whose rows get short IDs, by the table number a
// shortKey's ref holds.
var shortTable = [3]struct{ kind, table string }{
	{store.OpPrompt, "prompts"}, {store.OpObservation, "observations"}, {store.OpSummary, "summaries"},
}

// indexShortIDs notes, for the in-memory index, the records the transaction stored and
// kept (one it recorded but did not keep — a tombstoned or cut one — has no row).
func (t *wtx) indexShortIDs(ctx context.Context) error {
	if !t.r.shorts.isLoaded() {
		// Nothing to keep up: the first read loads the index, this transaction's rows with
		// it. Should a load begin before the commit and read the tables without them, the
		// index is read again (stale), as after a delete it was not told of.
		if len(t.change.Prompts)+len(t.change.Observations)+len(t.change.Summaries) > 0 {
			t.shortStale = true
		}
		return nil
	}
	for n, ids := range [3][]string{t.change.Prompts, t.change.Observations, t.change.Summaries} {
		q := "SELECT rowid FROM " + shortTable[n].table + " WHERE id = ?"
		for _, id := range ids {
			var rowid int64
			err := t.QueryRowContext(ctx, q, id).Scan(&rowid)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("index short id: %w", err)
			}
			t.shortAdded = append(t.shortAdded, shortKey{h: shortHashOf(id), ref: uint64(rowid)<<2 | uint64(n)})
		}
	}
	return nil
}

// deletesRecords notes that the transaction deletes prompt, observation or summary rows.
// ids are the records it deletes, every one of them (forget knows them: they are what it
// removes), and the in-memory index drops just those after the commit; called with none,
// which rows go is not known and the index is read again from the tables — O(records), 1 s
// at a million, so a path that runs often names its IDs. Every function with a statement
// that deletes such rows calls it (TestEveryRecordDeleteMarksTheShortIndex reads the
// package's source for them).
func (t *wtx) deletesRecords(ids ...string) {
	t.paths = nil // a deleted observation may have taken the last use of a path with it
	if len(ids) == 0 {
		t.shortStale = true
	}
	for _, id := range ids {
		t.shortRemoved = append(t.shortRemoved, shortHashOf(id))
	}
}

// shortIndex is every record's shortKey in memory, sorted by hash, so that a short ID is a
// binary search to its two neighbours and no SQL: the session-start context and every
// search ask for the short IDs of all they show. Read from the record tables' ID indexes on
// first use and after a transaction that deleted records it did not name; kept by the
// commit path (runTx) for the rows each transaction added or named as deleted.
type shortIndex struct {
	mu     sync.RWMutex
	loaded bool
	keys   []shortKey // sorted by h, then ref; two records share an h once in 2⁶⁰ pairs
}

// committed brings the index up to a committed transaction: it adds the rows the
// transaction added and drops those it named as deleted, or, when it deleted records it did
// not name, drops the index to be read again.
func (x *shortIndex) committed(added []shortKey, removed []uint64, stale bool) {
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
	// A hash not held was never seen by a load that began after the commit. A hash held
	// twice (two IDs agree in 60 bits) does not say which of its rows went: read again.
	gone := make(map[uint64]bool, len(removed))
	for _, h := range removed {
		i, found := slices.BinarySearchFunc(x.keys, h, cmpShortKey)
		if !found {
			continue
		}
		if i+1 < len(x.keys) && x.keys[i+1].h == h {
			x.loaded, x.keys = false, nil
			return
		}
		gone[h] = true
	}
	if len(gone) <= 16 {
		for h := range gone {
			i, _ := slices.BinarySearchFunc(x.keys, h, cmpShortKey)
			x.keys = slices.Delete(x.keys, i, i+1)
		}
	} else if len(gone) > 0 { // one pass, not a move of the tail per key
		x.keys = slices.DeleteFunc(x.keys, func(k shortKey) bool { return gone[k.h] })
	}
	if len(added) <= 16 {
		for _, k := range added {
			i, found := slices.BinarySearchFunc(x.keys, k, cmpShortKeys)
			if !found { // found: a load that began after the commit has it already
				x.keys = slices.Insert(x.keys, i, k)
			}
		}
		return
	}
	// Many (an import's batch, a snapshot's chunk): one merge of the sorted keys, not a move
	// of the tail per key — 10,000 inserts into a million keys moved 80 GB.
	x.keys = mergeShortKeys(x.keys, added)
}

// mergeShortKeys is keys (sorted) with added (any order) merged in, each key once.
func mergeShortKeys(keys, added []shortKey) []shortKey {
	add := slices.Clone(added)
	slices.SortFunc(add, cmpShortKeys)
	add = slices.Compact(add)
	out := make([]shortKey, 0, len(keys)+len(add))
	i, j := 0, 0
	for i < len(keys) && j < len(add) {
		switch c := cmpShortKeys(keys[i], add[j]); {
		case c < 0:
			out = append(out, keys[i])
			i++
		case c > 0:
			out = append(out, add[j])
			j++
		default: // a load that began after the commit has it already
			out = append(out, keys[i])
			i, j = i+1, j+1
		}
	}
	out = append(out, keys[i:]...)
	return append(out, add[j:]...)
}

// isLoaded reports whether the index is in memory.
func (x *shortIndex) isLoaded() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.loaded
}

func cmpShortKey(k shortKey, h uint64) int { return cmp.Compare(k.h, h) }

func cmpShortKeys(a, b shortKey) int {
	if c := cmp.Compare(a.h, b.h); c != 0 {
		return c
	}
	return cmp.Compare(a.ref, b.ref)
}

// load reads the index from the record tables (each one's ID index holds the rowid: no
// table row is read). It holds the lock while it reads, so a commit that the read does not
// see adds its rows after it.
func (x *shortIndex) load(ctx context.Context, r *Replica) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.loaded {
		return nil
	}
	var keys []shortKey
	for n, t := range shortTable {
		if err := loadShortKeys(ctx, r.r, n, t.table, &keys); err != nil {
			return err
		}
	}
	slices.SortFunc(keys, cmpShortKeys)
	x.loaded, x.keys = true, keys
	return nil
}

func loadShortKeys(ctx context.Context, db *sql.DB, n int, table string, keys *[]shortKey) error {
	rows, err := db.QueryContext(ctx, "SELECT rowid, id FROM "+table)
	if err != nil {
		return err
	}
	defer rows.Close()
	var rowid int64
	var id sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&rowid, &id); err != nil {
			return err
		}
		*keys = append(*keys, shortKey{h: shortHashOf(id), ref: uint64(rowid)<<2 | uint64(n)})
	}
	return rows.Err()
}

// forms sets out[id] to the short form of each of ids the index holds; ok is false when
// the index must be loaded first. An ID whose 60 bits another record's ID shares has none.
func (x *shortIndex) forms(ids []string, out map[string]string) (ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.loaded {
		return false
	}
	for _, id := range ids {
		h := shortHashOf(id)
		i, found := slices.BinarySearchFunc(x.keys, h, cmpShortKey)
		if !found || (i+1 < len(x.keys) && x.keys[i+1].h == h) {
			continue // no record here, or two records share the hash
		}
		n := store.MinShortID
		if i > 0 {
			n = max(n, commonChars(h, x.keys[i-1].h)+1)
		}
		if i+1 < len(x.keys) {
			n = max(n, commonChars(h, x.keys[i+1].h)+1)
		}
		s := spell(h)
		for n < len(s) && looksNumeric(s[:n]) {
			n++
		}
		out[id] = s[:min(n, len(s))]
	}
	return true
}

// prefixed returns the refs of the records (at most max) whose hash begins with the
// characters of prefix (upper case, of the ID alphabet), in hash order.
func (x *shortIndex) prefixed(prefix string, max int) []uint64 {
	var lo uint64
	for i := range len(prefix) {
		lo = lo<<5 | uint64(strings.IndexByte(store.IDAlphabet, prefix[i]))
	}
	rest := 5 * uint(shortIDHash-len(prefix))
	lo <<= rest
	hi := lo | (1<<rest - 1)
	x.mu.RLock()
	defer x.mu.RUnlock()
	var refs []uint64
	i, _ := slices.BinarySearchFunc(x.keys, lo, cmpShortKey)
	for ; i < len(x.keys) && x.keys[i].h <= hi && len(refs) < max; i++ {
		refs = append(refs, x.keys[i].ref)
	}
	return refs
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
var migrationSteps = map[int]func(context.Context, *sql.Tx) error{6: backfillShortIDs, 7: opsInRow, 15: internFilePaths, 16: opsByOriginID, 17: packContentHashes}

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
// lists them (up to 10). It reads the in-memory index, then each candidate's ID by rowid.
func (r *Replica) ResolveShortID(ctx context.Context, prefix string) (id string, ok bool, err error) {
	if !store.IsShortIDForm(prefix) {
		return "", false, nil
	}
	if err := r.shorts.load(ctx, r); err != nil {
		return "", false, fmt.Errorf("resolve short id: %w", err)
	}
	var ids []string
	for _, ref := range r.shorts.prefixed(strings.ToUpper(prefix), 11) {
		var rid string
		err := r.reads.queryRow(ctx, "SELECT id FROM "+shortTable[ref&3].table+" WHERE rowid = ?", int64(ref>>2)).Scan(&rid)
		if errors.Is(err, sql.ErrNoRows) {
			continue // deleted since the index was read
		}
		if err != nil {
			return "", false, fmt.Errorf("resolve short id: %w", err)
		}
		ids = append(ids, rid)
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
