package configs

import (
	"strings"
	"testing"
)

func TestParseFileValidatesAndRejectsUnknownKeys(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{`{}`, ""},
		{`{"workers": 4, "hook_timeout": "3s", "ai_providers": ["openai"]}`, ""},
		{`{"workers": 0}`, "workers must be >= 1"},
		{`{"wrokers": 4}`, "unknown field"},
		{`{"ai_providers": ["bard"]}`, "unknown ai provider"},
		{`{"hook_timeout": "soon"}`, "settings:"},
		{`[1]`, "settings:"},
	} {
		s, err := ParseFile([]byte(c.in))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.in, err, c.err)
		}
		if c.in == `{}` && s.Workers != DefaultWorkers {
			t.Errorf("defaults not applied: %+v", s)
		}
	}
}

func TestFieldsNameEverySetting(t *testing.T) {
	kinds := map[string]string{}
	for _, f := range Fields() {
		kinds[f.Name] = f.Kind
	}
	for name, kind := range map[string]string{"port": "int", "hook_timeout": "duration", "fsync_acks": "bool",
		"skip_tools": "list", "ai_models": "map", "device_name": "string", "ai_daily_token_budget": "int"} {
		if kinds[name] != kind {
			t.Errorf("%s: kind %q, want %q", name, kinds[name], kind)
		}
	}
}
