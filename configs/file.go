package configs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// ParseFile reads a settings.json object over the defaults and validates it — what a
// settings editor checks before it writes the file. An unknown key is an error: a typo
// would otherwise be ignored without a word.
func ParseFile(b []byte) (Settings, error) {
	s := Default()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("settings: %w", err)
	}
	return s, s.Validate()
}

// Field is one setting: its settings.json key and the kind of value it takes (bool, int,
// string, duration, list, map).
type Field struct {
	Name string
	Kind string
}

// Fields lists every setting in the order Settings declares them.
func Fields() []Field {
	t := reflect.TypeFor[Settings]()
	dur := reflect.TypeFor[Duration]()
	out := make([]Field, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		kind := "string"
		switch {
		case f.Type == dur:
			kind = "duration"
		case f.Type.Kind() == reflect.Bool:
			kind = "bool"
		case f.Type.Kind() >= reflect.Int && f.Type.Kind() <= reflect.Int64:
			kind = "int"
		case f.Type.Kind() == reflect.Slice:
			kind = "list"
		case f.Type.Kind() == reflect.Map:
			kind = "map"
		}
		out = append(out, Field{Name: name, Kind: kind})
	}
	return out
}
