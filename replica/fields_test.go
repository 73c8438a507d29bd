package replica

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/memory"
)

// jsonField is one field as a contract sees it: Go name, Go type, JSON name and options.
type jsonField struct{ name, typ, json, opts string }

func jsonFields(v any) []jsonField {
	t := reflect.TypeOf(v)
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, jsonField{f.Name, f.Type.String(), name, opts})
	}
	return out
}

// The Observation's fields are declared in five places: the domain type (memory), the op
// payload (replica), the export line (importer), what an AI provider returns (ai) and the
// by-file API row (apitype), and listed once more as the SQL columns. The op payload and the
// export line convert to and from memory.Observation (a conversion compiles only while the
// names, types and order agree); this test checks what the compiler does not — the JSON
// names and options, the subsets and the column list — so a field added to one and not the
// others fails here, not on a device that silently drops it.
func TestObservationFieldsAgree(t *testing.T) {
	want := jsonFields(memory.Observation{})
	byName := map[string]jsonField{}
	var jsonNames []string
	for _, f := range want {
		byName[f.name] = f
		jsonNames = append(jsonNames, f.json)
	}
	for what, got := range map[string][]jsonField{
		"replica's op payload":     jsonFields(observationFields{}),
		"importer.ObservationLine": jsonFields(importer.ObservationLine{}),
	} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s declares\n%v\nmemory.Observation\n%v", what, got, want)
		}
	}
	if got := jsonFields(observationPayload{})[0]; got.json != "v" || len(jsonFields(observationPayload{})) != 2 {
		t.Errorf("observationPayload is %v, want the version and the embedded fields", jsonFields(observationPayload{}))
	}
	// The subsets: every field they declare is memory.Observation's, with its type and JSON
	// name (the by-file row always writes its lists, so its options may differ).
	for what, sub := range map[string]struct {
		fields   []jsonField
		sameOpts bool
		own      []string // fields the subset adds
	}{
		"ai.Observation":          {jsonFields(ai.Observation{}), true, []string{"Call"}}, // Call: which input call, never on a wire
		"apitype.FileObservation": {jsonFields(apitype.FileObservation{}), false, []string{"Short"}},
	} {
		for _, f := range sub.fields {
			if slices.Contains(sub.own, f.name) {
				continue
			}
			m, ok := byName[f.name]
			if !ok || m.typ != f.typ || m.json != f.json || sub.sameOpts && m.opts != f.opts {
				t.Errorf("%s.%s is %+v; memory.Observation's is %+v", what, f.name, f, m)
			}
		}
	}
	if cols := strings.Join(strings.Fields(strings.ReplaceAll(obsColumns, ",", " ")), ", "); cols != strings.Join(jsonNames, ", ") {
		t.Errorf("obsColumns lists\n%s\nmemory.Observation's JSON names are\n%s", cols, strings.Join(jsonNames, ", "))
	}
}
