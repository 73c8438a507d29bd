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
