package configs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Edit changes one setting in the bytes of a settings.json and returns the new file: the
// other keys are kept (a change merges, it never overwrites the file), the result is checked
// by ParseFile (unknown keys, ranges) and indented. value nil removes the key. key is a
// settings.json key, or "map_key.entry" for one entry of a map setting (ai_models.openai).
// value is given as on a command line and read by the field's kind: true/false, a number, a
// Go duration ("10s"), a comma-separated list, KEY=VALUE pairs for a map; JSON of the
// field's type is accepted too.
func Edit(file []byte, key string, value *string) ([]byte, error) {
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(file)) > 0 {
		if err := json.Unmarshal(file, &obj); err != nil {
			return nil, fmt.Errorf("settings: the file is not a JSON object (%w); fix or remove it first", err)
		}
	}
	name, entry, isEntry := strings.Cut(key, ".")
	kind := ""
	for _, f := range Fields() {
		if f.Name == name {
			kind = f.Kind
		}
	}
	switch {
	case kind == "":
		return nil, fmt.Errorf("settings: unknown key %q ('memnode config list' shows them)", name)
	case isEntry && (kind != "map" || entry == ""):
		return nil, fmt.Errorf("settings: %q: only a map setting takes .ENTRY", key)
	}
	switch {
	case isEntry:
		m := map[string]string{}
		if raw, ok := obj[name]; ok {
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("settings: %s: %w", name, err)
			}
		}
		if value == nil {
			delete(m, entry)
		} else {
			m[entry] = *value
		}
		if len(m) == 0 {
			delete(obj, name)
		} else {
			obj[name], _ = json.Marshal(m)
		}
	case value == nil:
		delete(obj, name)
	default:
		raw, err := valueJSON(kind, *value)
		if err != nil {
			return nil, fmt.Errorf("settings: %s: %w", name, err)
		}
		obj[name] = raw
	}
	out, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	if _, err := ParseFile(out); err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// valueJSON turns a command-line value into the JSON of a field of kind.
func valueJSON(kind, v string) (json.RawMessage, error) {
	v = strings.TrimSpace(v)
	switch kind {
	case "bool":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", v)
		}
		return json.Marshal(b)
	case "int":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", v)
		}
		return json.Marshal(n)
	case "duration":
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not a duration like 10s or 2m", v)
		}
		return json.Marshal(d.String())
	case "list":
		if strings.HasPrefix(v, "[") {
			var l []string
			if err := json.Unmarshal([]byte(v), &l); err != nil {
				return nil, fmt.Errorf("want a JSON list of strings or a,b,c: %w", err)
			}
			return json.Marshal(l)
		}
		l := []string{}
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				l = append(l, p)
			}
		}
		return json.Marshal(l)
	case "map":
		m := map[string]string{}
		if strings.HasPrefix(v, "{") {
			if err := json.Unmarshal([]byte(v), &m); err != nil {
				return nil, fmt.Errorf("want a JSON object of strings or KEY=VALUE,…: %w", err)
			}
			return json.Marshal(m)
		}
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			k, val, ok := strings.Cut(p, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("%q: want KEY=VALUE", p)
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
		return json.Marshal(m)
	}
	return json.Marshal(v)
}

// Value is setting key of s (a settings.json key, or map_key.entry) as text: a string as
// is, anything else as JSON. ok is false for an unknown key.
func Value(s Settings, key string) (string, bool) {
	b, _ := json.Marshal(s)
	all := map[string]json.RawMessage{}
	_ = json.Unmarshal(b, &all)
	name, entry, isEntry := strings.Cut(key, ".")
	kind := ""
	for _, f := range Fields() {
		if f.Name == name {
			kind = f.Kind
		}
	}
	if kind == "" {
		return "", false
	}
	raw, ok := all[name]
	if !ok { // omitted as empty
		return map[string]string{"bool": "false", "int": "0", "list": "[]", "map": "{}"}[kind], true
	}
	if isEntry {
		m := map[string]string{}
		if json.Unmarshal(raw, &m) != nil {
			return "", false
		}
		return m[entry], true
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str, true
	}
	return string(raw), true
}
