package team

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzPulledRows feeds arbitrary cluster answers (untrusted: any member can write any row)
// through the pull path's decoding and verification: nothing may panic, and a row that
// decodes never verifies without a real signature.
func FuzzPulledRows(f *testing.F) {
	f.Add([]byte(`[[1,"12D3KooWAbc",1,"p","observation","01X","123","{}","aa","alice/x","c2ln"]]`))
	f.Add([]byte(`[[9007199254740993,"o",18446744073709551615,"p","forget","r","18446744073709551615",null,"","",""]]`))
	f.Add([]byte(`[["x"],[1,2,3,4,5,6,7,8,9,10,11]]`))
	f.Add([]byte(`[[1.5,"o",-1,"p","k","r","-3",{"a":1},[],"a","%%%"]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var rows [][]any
		if d.Decode(&rows) != nil {
			return
		}
		ops, err := decodeOps(rows)
		if err != nil {
			return
		}
		for _, op := range ops {
			if verify(op) == nil {
				t.Fatalf("an op with a made-up signature verified: %+v", op)
			}
		}
	})
}

// FuzzCheckPayload feeds arbitrary payloads (what a member with write access signs and
// inserts) through the pull's payload check and the privacy gate: nothing panics, and an
// accepted record payload names the signed row's record, project and author device.
func FuzzCheckPayload(f *testing.F) {
	f.Add("observation", []byte(`{"id":"r1","project":"p","origin":"o","title":"t"}`))
	f.Add("forget", []byte(`{"v":1,"id":"r1"}`))
	f.Add("session", []byte(`{"id":"r1","project":"q","origin":"o"}`))
	f.Add("prompt", []byte(`{"id":"r1","project":"p","origin":"o","text":"<private>x</private>"}`))
	f.Add("observation", []byte(`[1,2]`))
	f.Add("supersede", []byte(`{"v":1,"id":"r1","by":"r2","project":"p"}`))
	f.Fuzz(func(t *testing.T, kind string, payload []byte) {
		op := Op{Origin: "o", Project: "p", Kind: kind, RecordID: "r1", Payload: payload}
		if checkPayload(op) != "" {
			return
		}
		_ = cleanPayload(payload)
		var h payloadHead
		if err := json.Unmarshal(payload, &h); err != nil || h.ID != "r1" {
			t.Fatalf("accepted %s payload %q naming %+v (%v)", kind, payload, h, err)
		}
		if kind != "forget" && h.Project != "p" || kind != "forget" && kind != "supersede" && h.Origin != "o" {
			t.Fatalf("accepted %s payload %q naming %+v", kind, payload, h)
		}
	})
}
