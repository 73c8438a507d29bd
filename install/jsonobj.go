package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// object is a JSON object that keeps its key order, so rewriting a user's settings file
// moves nothing but what memnode adds or removes.
type object struct {
	keys []string
	vals map[string]any // values: *object, []any, string, json.Number, bool, nil
}

func newObject() *object { return &object{vals: map[string]any{}} }

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *object) len() int { return len(o.keys) }

// MarshalJSON writes the keys in their order.
func (o *object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := marshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := marshalNoEscape(o.vals[k])
		if err != nil {
			return nil, err
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// errNotObject is returned when a file's top level is not a JSON object.
var errNotObject = errors.New("top level is not a JSON object")

// parseObject decodes a JSON document whose top level is an object.
func parseObject(b []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	o, ok := v.(*object)
	if !ok {
		return nil, errNotObject
	}
	return o, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return o, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}

// style is how a file lays out its JSON, kept when memnode rewrites it.
type style struct {
	indent      string // "" means compact
	trailingNew bool   // ends with a newline
}

// defaultStyle is how Claude Code writes settings.json: two-space indent, trailing newline.
var defaultStyle = style{indent: "  ", trailingNew: true}

// styleOf reads the indent of the first indented line and whether the file ends with a
// newline.
func styleOf(b []byte) style {
	st := style{trailingNew: bytes.HasSuffix(b, []byte("\n"))}
	for _, line := range bytes.Split(b, []byte("\n"))[1:] {
		ws := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if len(ws) > 0 && len(ws) < len(line) {
			st.indent = string(ws)
			break
		}
	}
	if st.indent == "" && bytes.Count(bytes.TrimSpace(b), []byte("\n")) > 0 {
		st.indent = defaultStyle.indent // multi-line without indent: not worth guessing
	}
	return st
}

// encodeDoc renders a document in a file's style.
func encodeDoc(o *object, st style) ([]byte, error) {
	compact, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if st.indent == "" {
		buf.Write(compact)
	} else if err := json.Indent(&buf, compact, "", st.indent); err != nil {
		return nil, err
	}
	if st.trailingNew {
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}
