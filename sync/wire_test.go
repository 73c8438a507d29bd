package sync

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memnode/memnode/store"
)

func sampleMessages() []*message {
	return []*message{
		{Type: msgHello, GroupID: "g1", Name: "laptop", VV: store.VersionVector{"a": 3, "b": 0}, Group: []byte(`{"group_id":"g1"}`)},
		{Type: msgWant, Wants: []want{{Origin: "a", After: 2}, {Origin: "b", After: 0}}},
		{Type: msgOps, Origin: "a", Ops: []store.Op{
			{Origin: "a", Seq: 3, HLC: 1 << 40, Kind: "observation", RecordID: "01ABC", Payload: []byte(`{"id":"01ABC"}`)},
			{Origin: "a", Seq: 4, HLC: 1<<40 + 1, Kind: "observation", RecordID: "01ABD"}, // forgotten: nil payload
			{Origin: "a", Seq: 5, HLC: 1<<40 + 2, Kind: "forget", RecordID: "01ABD", Payload: []byte{}},
		}},
		{Type: msgDone},
		{Type: msgError, Text: "invite refused"},
		{Type: msgPairHello, Nonce: bytes.Repeat([]byte{1}, 32), Member: []byte(`{"peer_id":"x"}`)},
		{Type: msgChallenge, Nonce: bytes.Repeat([]byte{2}, 32)},
		{Type: msgProof, MAC: bytes.Repeat([]byte{3}, 32)},
		{Type: msgWelcome, MAC: bytes.Repeat([]byte{4}, 32), Group: []byte(`{}`)},
		{Type: msgSnapWant},
		{Type: msgSnapWant, From: store.SnapshotCursor{Table: "ops", Key: "12D3KooWabc", Seq: 4711}},
		{Type: msgSnapBegin, VV: store.VersionVector{"a": 2, "b": 7}, Total: 1_275_507},
		{Type: msgSnapRows, Table: "ops", Columns: []string{"origin", "seq", "hlc", "kind", "record_id", "payload", "inrow"}, Rows: [][]any{
			{"a", int64(1), int64(1 << 40), "observation", "01ABC", nil, int64(1)},
			{"a", int64(2), int64(1<<40 + 1), "forget", "01ABC", []byte(`{"id":"01ABC"}`), int64(0)},
			{"a", int64(-3), int64(0), "", "", []byte{}, int64(0)},
		}},
		{Type: msgSnapEnd, VV: store.VersionVector{"a": 2, "b": 7}},
	}
}

func TestMessagesRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	msgs := sampleMessages()
	for _, m := range msgs {
		if _, err := writeMessage(w, m); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	r := bufio.NewReader(&buf)
	var decoded []*message
	for _, want := range msgs {
		got, _, err := readMessage(r)
		if err != nil {
			t.Fatal(err)
		}
		normalize(want)
		normalize(got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
		}
		decoded = append(decoded, got)
	}
	if got := decoded[2]; got.Ops[1].Payload != nil || got.Ops[2].Payload == nil {
		t.Fatal("nil and empty payloads must stay distinct")
	}
	if got := decoded[12].Rows; got[0][5] != nil || got[2][5] == nil {
		t.Fatal("a snapshot's NULL and empty blob must stay distinct")
	}
}

// normalize maps empty containers to nil so DeepEqual compares content.
func normalize(m *message) {
	if len(m.VV) == 0 {
		m.VV = nil
	}
	if len(m.Wants) == 0 {
		m.Wants = nil
	}
	if len(m.Ops) == 0 {
		m.Ops = nil
	}
	if len(m.Group) == 0 {
		m.Group = nil
	}
	if len(m.Columns) == 0 {
		m.Columns = nil
	}
	if len(m.Rows) == 0 {
		m.Rows = nil
	}
}

func TestDecoderRejectsHostileInput(t *testing.T) {
	huge := []byte{msgWant, 0xff, 0xff, 0xff, 0xff, 0x0f} // claims 4 billion wants in 6 bytes
	zeroDelta := encodeMessage(&message{Type: msgOps, Origin: "a", Ops: []store.Op{{Seq: 1}, {Seq: 2}}})
	zeroDelta = bytes.Replace(zeroDelta, []byte{1, 0, 0, 0, 0, 1, 0}, []byte{1, 0, 0, 0, 0, 0, 0}, 1)
	for name, b := range map[string][]byte{
		"empty":        {},
		"unknown type": {99},
		"huge count":   huge,
		"trailing":     append(encodeMessage(&message{Type: msgDone}), 0),
		"truncated":    encodeMessage(sampleMessages()[2])[:20],
		"no origin":    {msgOps, 0, 0},
		"seq repeats":  zeroDelta,
		"no table":     {msgSnapRows, 0, 1, 1, 'x', 0},
		"no columns":   {msgSnapRows, 1, 't', 0, 0},
		"bad value":    {msgSnapRows, 1, 't', 1, 1, 'x', 1, 9},
		"huge rows":    {msgSnapRows, 1, 't', 1, 1, 'x', 0xff, 0xff, 0x03, 0},
	} {
		if _, err := decodeMessage(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	// A frame header over the limit is refused before its body is allocated.
	var buf bytes.Buffer
	buf.Write([]byte{0xff, 0xff, 0xff, 0xff, 0x7f})
	if _, _, err := readMessage(bufio.NewReader(&buf)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized frame: %v", err)
	}
}

// FuzzDecodeMessage: the decoder never panics, and whatever it accepts re-encodes to bytes
// that decode to the same message.
func FuzzDecodeMessage(f *testing.F) {
	for _, m := range sampleMessages() {
		f.Add(encodeMessage(m))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMessage(b)
		if err != nil {
			return
		}
		again, err := decodeMessage(encodeMessage(m))
		if err != nil {
			t.Fatalf("re-encoded message does not decode: %v", err)
		}
		normalize(m)
		normalize(again)
		if !reflect.DeepEqual(m, again) {
			t.Fatalf("decode∘encode is not the identity:\n%+v\n%+v", m, again)
		}
	})
}

// TestFuzzSeedCorpusPresent: the committed seed corpus covers every message type.
func TestFuzzSeedCorpusPresent(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeMessage")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no seed corpus directory")
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) < len(sampleMessages()) {
		t.Fatalf("seed corpus has %d entries, want at least %d: %v", len(entries), len(sampleMessages()), err)
	}
}
