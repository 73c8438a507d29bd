//go:build !memnode_lean

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"testing"

	"github.com/memnode/memnode/importer"
)

// tombstones gives n tombstone records, IDs "0" to n-1, with a header first; reached[i],
// when set, is closed once record i has been given.
func tombstones(n int, reached map[int]chan struct{}) func(func(importer.Record) error) error {
	return func(fn func(importer.Record) error) error {
		if err := fn(importer.Record{Kind: importer.KindHeader, Header: &importer.Header{}}); err != nil {
			return err
		}
		for i := range n {
			if err := fn(importer.Record{Kind: importer.KindTombstone, ID: strconv.Itoa(i)}); err != nil {
				return err
			}
			if c, ok := reached[i]; ok {
				close(c)
			}
		}
		return nil
	}
}

// ids decodes a batch's body back to its tombstones' IDs.
func ids(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	rd := importer.NewReader(bytes.NewReader(body))
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec.ID)
	}
}

// TestSendBatchesSendsInOrder: every record is sent once, in its order, in batches of the
// given size; the header is counted with the first batch and not sent as a record.
func TestSendBatchesSendsInOrder(t *testing.T) {
	var got [][]string
	headers := 0
	err := sendBatches(context.Background(), tombstones(12, nil), 5, 1<<20, func(body []byte, n, h int) error {
		b := ids(t, body)
		if len(b) != n {
			t.Errorf("batch of %d records says %d", len(b), n)
		}
		got, headers = append(got, b), headers+h
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"0", "1", "2", "3", "4"}, {"5", "6", "7", "8", "9"}, {"10", "11"}}
	if !slices.EqualFunc(got, want, slices.Equal) || headers != 1 {
		t.Fatalf("sent %v with %d headers, want %v with 1", got, headers, want)
	}
}

// TestSendBatchesEncodesWhileSending: while the first batch is in flight, the next two are
// read (one waits to be sent, one is being filled): the first send returns only once the
// source has given a record of the third batch, which a client that reads only between
// its requests never does (the test then hangs).
func TestSendBatchesEncodesWhileSending(t *testing.T) {
	third := make(chan struct{})
	sends := 0
	err := sendBatches(context.Background(), tombstones(12, map[int]chan struct{}{10: third}), 5, 1<<20, func([]byte, int, int) error {
		if sends++; sends == 1 {
			<-third
		}
		return nil
	})
	if err != nil || sends != 3 {
		t.Fatalf("sendBatches = %v after %d sends, want nil after 3", err, sends)
	}
}

// TestSendBatchesStopsAtAFailedSend: the first failed send ends the import with its error;
// no later batch is sent and the source stops.
func TestSendBatchesStopsAtAFailedSend(t *testing.T) {
	refused := errors.New("refused")
	var sent []string
	read := 0
	each := tombstones(1000, nil)
	err := sendBatches(context.Background(), func(fn func(importer.Record) error) error {
		return each(func(r importer.Record) error { read++; return fn(r) })
	}, 5, 1<<20, func(body []byte, _, _ int) error {
		b := ids(t, body)
		if b[0] == "5" {
			return refused
		}
		sent = append(sent, b...)
		return nil
	})
	if !errors.Is(err, refused) {
		t.Fatalf("sendBatches = %v, want %v", err, refused)
	}
	if !slices.Equal(sent, []string{"0", "1", "2", "3", "4"}) || read > 100 {
		t.Fatalf("sent %v and read %d records after a refused second batch", sent, read)
	}
}
