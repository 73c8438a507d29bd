package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/memnode/memnode/store"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
)

// newerDevice rewrites ops as a device of a later payload version would send them: a
// higher "v" and fields this build has never heard of.
func newerDevice(t *testing.T, ops []store.Op) []store.Op {
	t.Helper()
	out := make([]store.Op, len(ops))
	for i, op := range ops {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(op.Payload))
		dec.UseNumber() // HLCs do not fit a float64
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		m["v"] = PayloadVersion + 1
		m["future_field"] = map[string]any{"weight": 0.7, "labels": []string{"x"}}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		op.Payload = b
		out[i] = op
	}
	return out
}

func TestPayloadFromNewerDeviceStillApplies(t *testing.T) {
	ctx := context.Background()
	a, b, c := openTest(t, "dev-a"), openTest(t, "dev-b"), openTest(t, "dev-c")
	now := time.Now().UnixMilli()
	if _, err := a.Commit(ctx, &store.Batch{
		Sessions:     []memory.Session{{ID: "s1", Project: "demo", StartedAt: now, Status: "active"}},
		Prompts:      []memory.Prompt{{SessionID: "s1", Project: "demo", PromptNumber: 1, Text: "fix the login", CreatedAt: now}},
		Observations: []memory.Observation{{SessionID: "s1", Project: "demo", Type: memory.TypeBugfix, Title: "Login fixed", Facts: []string{"f1"}, CreatedAt: now}},
		Summaries:    []memory.Summary{{SessionID: "s1", Project: "demo", Request: "fix the login", Learned: "tokens expire", CreatedAt: now}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetDeviceName(ctx, "dev-a", "laptop"); err != nil {
		t.Fatal(err)
	}
	ops, err := a.OpsSince(ctx, "dev-a", 0, 100)
	if err != nil || len(ops) < 5 {
		t.Fatalf("ops: %d %v", len(ops), err)
	}
	for _, op := range ops {
		var v struct {
			V int `json:"v"`
		}
		if json.Unmarshal(op.Payload, &v) != nil || v.V != PayloadVersion {
			t.Fatalf("%s op written without \"v\":%d: %s", op.Kind, PayloadVersion, op.Payload)
		}
	}

	newer := newerDevice(t, ops)
	res, err := b.ApplyOps(ctx, newer)
	if err != nil || res.Applied != len(newer) {
		t.Fatalf("apply newer payloads: %+v %v", res, err)
	}
	da, _ := a.CanonicalDump(ctx)
	db, _ := b.CanonicalDump(ctx)
	if da != db {
		t.Fatalf("newer payloads did not apply like the originals:\n%s\n---\n%s", da, db)
	}

	// b relays the payloads as they came, unknown fields included, so a third device of the
	// newer version loses nothing.
	relayed, err := b.OpsSince(ctx, "dev-a", 0, 100)
	if err != nil || len(relayed) != len(newer) {
		t.Fatalf("relay: %d %v", len(relayed), err)
	}
	for i := range relayed {
		if !bytes.Equal(relayed[i].Payload, newer[i].Payload) {
			t.Fatalf("op %d relayed as %s, want %s", i, relayed[i].Payload, newer[i].Payload)
		}
	}
	if _, err := c.ApplyOps(ctx, relayed); err != nil {
		t.Fatal(err)
	}
	if dc, _ := c.CanonicalDump(ctx); dc != da {
		t.Fatalf("third device differs:\n%s\n---\n%s", da, dc)
	}
}

// Payloads written before versioning were the record structs marshalled as they are; they
// carry no "v" and must still apply.
func TestUnversionedPayloadApplies(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-b")
	now := time.Now().UnixMilli()
	s, _ := json.Marshal(memory.Session{ID: "s1", Project: "demo", StartedAt: now, Status: "active"})
	obs := memory.Observation{ID: "01OBS", SessionID: "s1", Project: "demo", Type: memory.TypeDecision, Title: "Use WAL", CreatedAt: now}
	o, _ := json.Marshal(obs)
	res, err := r.ApplyOps(ctx, []store.Op{
		{Origin: "dev-old", Seq: 1, HLC: 1, Kind: store.OpSession, RecordID: "s1", Payload: s},
		{Origin: "dev-old", Seq: 2, HLC: 2, Kind: store.OpObservation, RecordID: "01OBS", Payload: o},
	})
	if err != nil || res.Applied != 2 {
		t.Fatalf("apply: %+v %v", res, err)
	}
	got, err := r.GetObservations(ctx, []string{"01OBS"})
	if err != nil || len(got) != 1 || got[0].Title != "Use WAL" || got[0].Origin != "dev-old" {
		t.Fatalf("observation from an unversioned payload: %+v %v", got, err)
	}
}

// The version-1 payload is a contract between devices: its field names must not follow a
// rename of the domain types.
func TestPayloadV1FieldNames(t *testing.T) {
	got := string(encodeObservation(memory.Observation{ID: "o", SessionID: "s", Project: "p", Type: "bugfix",
		Title: "t", Facts: []string{"f"}, FilesRead: []string{"r"}, ContentHash: "h", CreatedAt: 5, Origin: "d", HLC: 7}))
	const want = `{"v":1,"id":"o","session_id":"s","project":"p","type":"bugfix","title":"t","facts":["f"],"files_read":["r"],"content_hash":"h","created_at":5,"origin":"d","hlc":7}`
	if got != want {
		t.Fatalf("observation payload\n got %s\nwant %s", got, want)
	}
	if got, want := string(encodeForget("x")), `{"v":1,"id":"x"}`; got != want {
		t.Fatalf("forget payload %s, want %s", got, want)
	}
}

func TestMalformedPayloadIsBadOp(t *testing.T) {
	for _, p := range []string{`{"v":1}`, `not json`, `{"id":""}`} {
		if _, err := decodeObservation([]byte(p)); !errors.Is(err, store.ErrBadOp) {
			t.Errorf("decodeObservation(%s) = %v, want ErrBadOp", p, err)
		}
	}
}
