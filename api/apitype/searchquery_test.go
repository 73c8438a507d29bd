package apitype

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// FullSearchQuery sets every field of SearchQuery; a field added to it must be set here
// (the test says so), so the codec tests cover it.
func fullSearchQuery(t testing.TB) SearchQuery {
	q := SearchQuery{Text: "parse_timeout ErrTokenExpired & 100%", Project: "billing api", Type: "observations",
		ObsTypes: []string{"bugfix", "decision"}, Device: "laptop", File: "internal/auth/middleware.go",
		Platform: "claude-code", Since: 1_780_000_000_000, Until: 1_790_000_000_000, Limit: 7, Offset: 3,
		Order: "newest", Mode: "fts", Prefix: true}
	v := reflect.ValueOf(q)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("fullSearchQuery leaves SearchQuery.%s zero: set it, so the codec is tested with it", v.Type().Field(i).Name)
		}
	}
	return q
}

func TestSearchQueryCodecCarriesEveryField(t *testing.T) {
	q := fullSearchQuery(t)
	got, err := ParseSearchQuery(q.Values())
	if err != nil || !reflect.DeepEqual(got, q) {
		t.Fatalf("ParseSearchQuery(q.Values()) = %+v, %v; want %+v", got, err, q)
	}
	if v := (SearchQuery{}).Values(); len(v) != 0 {
		t.Errorf("the zero query encodes as %v, want no parameter", v)
	}
}

func TestParseSearchQuery(t *testing.T) {
	for _, c := range []struct {
		raw     string
		want    SearchQuery
		wantErr string
	}{
		{"query=a+b&obs_type=bugfix,+decision,,", SearchQuery{Text: "a b", ObsTypes: []string{"bugfix", "decision"}}, ""},
		{"since=2026-10-01&until=1790000000000", SearchQuery{Since: 1_790_812_800_000, Until: 1_790_000_000_000}, ""},
		{"platformSource=claude", SearchQuery{Platform: "claude-code"}, ""},
		{"platform=claude&platformSource=claude-code", SearchQuery{Platform: "claude-code"}, ""},
		{"platform=codex&platformSource=claude", SearchQuery{}, `platform "codex" and platformSource "claude-code" disagree`},
		{"prefix=true", SearchQuery{Prefix: true}, ""},
		{"limit=ten", SearchQuery{}, `limit must be an integer, not "ten"`},
		{"until=yesterday", SearchQuery{}, `until must be epoch milliseconds or an ISO date/time`},
	} {
		v, err := url.ParseQuery(c.raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseSearchQuery(v)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one saying %q", c.raw, err, c.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, %v; want %+v", c.raw, got, err, c.want)
		}
	}
}

// Whatever a request's query string holds, decoding never panics, and what it decodes to
// encodes back to itself: the node reads what the client meant.
func FuzzSearchQueryCodec(f *testing.F) {
	for _, s := range []string{"", "query=x&limit=5", "obs_type=a,%20b,,c&since=2026-10-01T09:00:00Z", "platformSource=claude&prefix=1",
		"limit=-1&offset=%2B3", fullSearchQuery(f).Values().Encode(), "query=%00&type=%FF&until=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := ParseSearchQuery(v)
		if err != nil {
			return
		}
		again, err := ParseSearchQuery(q.Values())
		if err != nil || !reflect.DeepEqual(again, q) {
			t.Fatalf("%q decodes to %+v, which encodes to %q and decodes to %+v, %v", raw, q, q.Values().Encode(), again, err)
		}
	})
}
