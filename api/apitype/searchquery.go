package apitype

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/memnode/memnode/memory"
)

// The search query's one codec: Values encodes a SearchQuery as GET /api/search's
// parameters (the client), ParseSearchQuery decodes them (the node, and the CLI's flags
// and the MCP tool's arguments, which are handed over under the same names), so a
// parameter means the same whoever sends it. ParseSearchQuery(q.Values()) is q for every q
// it returned (FuzzSearchQueryCodec).

// Values encodes q as GET /api/search's query parameters; zero fields are left out.
func (q SearchQuery) Values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	num := func(k string, n int64) {
		if n != 0 {
			v.Set(k, strconv.FormatInt(n, 10))
		}
	}
	set("query", q.Text)
	set("project", q.Project)
	set("type", q.Type)
	set("obs_type", strings.Join(q.ObsTypes, ","))
	set("device", q.Device)
	set("file", q.File)
	set("platform", q.Platform)
	num("since", q.Since)
	num("until", q.Until)
	num("limit", int64(q.Limit))
	num("offset", int64(q.Offset))
	set("order", q.Order)
	set("mode", q.Mode)
	if q.Prefix {
		v.Set("prefix", "1")
	}
	return v
}

// ParseSearchQuery decodes GET /api/search's query parameters: obs_type comma-separated
// (blanks trimmed, empty entries dropped), since and until epoch ms or an ISO date/time,
// platform (or claude-mem's platformSource) as memory.PlatformName records it. The error
// names the parameter and what it must be.
func ParseSearchQuery(v url.Values) (SearchQuery, error) {
	q := SearchQuery{Text: v.Get("query"), Project: v.Get("project"), Type: v.Get("type"), Device: v.Get("device"),
		File: v.Get("file"), Order: v.Get("order"), Mode: v.Get("mode"), ObsTypes: SplitList(v.Get("obs_type"))}
	q.Prefix = v.Get("prefix") == "1" || v.Get("prefix") == "true"
	p, alias := memory.PlatformName(v.Get("platform")), memory.PlatformName(v.Get("platformSource"))
	if p != "" && alias != "" && p != alias {
		return q, fmt.Errorf("platform %q and platformSource %q disagree: give one of them", p, alias)
	}
	if q.Platform = p; p == "" {
		q.Platform = alias
	}
	var err error
	if q.Limit, err = intValue(v, "limit"); err != nil {
		return q, err
	}
	if q.Offset, err = intValue(v, "offset"); err != nil {
		return q, err
	}
	if q.Since, err = timeValue(v, "since"); err != nil {
		return q, err
	}
	if q.Until, err = timeValue(v, "until"); err != nil {
		return q, err
	}
	return q, nil
}

// SplitList splits a comma-separated list, trimming blanks and dropping empty entries.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func intValue(v url.Values, name string) (int, error) {
	s := v.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s must be an integer, not %q", name, s)
	}
	return n, nil
}

func timeValue(v url.Values, name string) (int64, error) {
	s := v.Get(name)
	if s == "" {
		return 0, nil
	}
	t, ok := ParseTimeFilter(s)
	if !ok {
		return 0, fmt.Errorf("%s must be epoch milliseconds or an ISO date/time (2026-10-01, 2026-10-01T09:00:00Z), not %q", name, s)
	}
	return t, nil
}
