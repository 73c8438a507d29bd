package replica

import (
	"context"
	"errors"
	"testing"

	"github.com/memnode/memnode/store"
)

// FuzzInstallSnapshotChunk feeds a chunk of arbitrary values (a peer's, untrusted: sync's
// decoder only checks the framing) into a real replica between a beginning and an end. The
// install must never panic; it stores the chunk or refuses it (ErrBadSnapshot, a clock or
// constraint error), and whatever happens the vector claims nothing beyond the snapshot's
// own, an unfinished install can be left to op replay, and the replica stays readable.
func FuzzInstallSnapshotChunk(f *testing.F) {
	f.Add(uint8(6), []byte("\x02\x04peer\x01\x00\x00\x00\x00\x00\x00\x00\x01\x01\x00\x00\x01\x00\x00\x00\x00\x00\x02\x2cobservation\x02\x0801ABCDEF\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01"))
	f.Add(uint8(2), []byte("\x02\x0801ABCDEF\x02\x04sess\x02\x04proj\x00\x02\x08discover\x02\x04text"))
	f.Add(uint8(5), []byte("\x02\x0801ABCDEF\x01\x00\x00\x00\x00\x00\x00\x00\x05\x02\x04peer"))
	f.Add(uint8(0), []byte("\x02\x04sess\x02\x04proj\x00\x00\x00\x02\x06active\x02\x04peer\x01\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, table uint8, data []byte) {
		ctx := context.Background()
		r := openTest(t, "self")
		tb := snapshotTables[int(table)%len(snapshotTables)]
		rows := fuzzRows(data, len(tb.cols))
		if len(rows) == 0 {
			return
		}
		vv := store.VersionVector{"peer": 3}
		chunks := []store.SnapshotChunk{
			{Begin: true, VV: vv, Total: 10},
			{Table: tb.name, Columns: tb.cols, Rows: rows},
			{VV: vv},
		}
		k := 0
		_, err := r.InstallSnapshot(ctx, func() (store.SnapshotChunk, error) {
			if k == len(chunks) {
				return store.SnapshotChunk{}, errors.New("no more chunks")
			}
			k++
			return chunks[k-1], nil
		})
		got, verr := r.VersionVector(ctx)
		if verr != nil {
			t.Fatal(verr)
		}
		for o, s := range got {
			if o != "self" && s > vv[o] {
				t.Fatalf("vector %v claims more than the snapshot's %v (install: %v)", got, vv, err)
			}
		}
		if err != nil {
			if aerr := r.AbandonSnapshot(ctx); aerr != nil {
				t.Fatalf("abandon after %v: %v", err, aerr)
			}
		}
		if p, perr := r.SnapshotProgress(ctx); perr != nil || p.Active {
			t.Fatalf("progress after the install (%v): %+v, %v", err, p, perr)
		}
		if _, derr := r.CanonicalDump(ctx); derr != nil {
			t.Fatalf("dump after the install (%v): %v", err, derr)
		}
	})
}

// fuzzRows cuts data into up to 8 rows of ncols values: a tag byte per value (nil, an int64
// of the next 8 bytes, or a text or blob whose length is the tag's upper bits).
func fuzzRows(data []byte, ncols int) [][]any {
	var rows [][]any
	for len(data) > 0 && len(rows) < 8 {
		row := make([]any, ncols)
		for i := range row {
			if len(data) == 0 {
				break
			}
			tag := data[0]
			data = data[1:]
			switch tag % 4 {
			case 1:
				n := min(len(data), 8)
				var v int64
				for _, x := range data[:n] {
					v = v<<8 | int64(x)
				}
				row[i], data = v, data[n:]
			case 2, 3:
				n := min(int(tag/4), len(data))
				if tag%4 == 2 {
					row[i] = string(data[:n])
				} else {
					row[i] = append([]byte{}, data[:n]...)
				}
				data = data[n:]
			}
		}
		rows = append(rows, row)
	}
	return rows
}
