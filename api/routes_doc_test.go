package api

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docRowRE is a route row of docs/API.md's tables: | METHOD | `path`, `path` | …
var docRowRE = regexp.MustCompile(`^\| (GET|POST|PUT|DELETE|PATCH) \| ([^|]+) \|`)

// routeKey writes a route as the docs do: a path parameter (gin's :name, the docs' NAME) as
// ":", a catch-all (gin's *name, the docs' *) as "*".
func routeKey(method, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		switch {
		case strings.HasPrefix(s, ":"), s != "" && s == strings.ToUpper(s) && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "":
			segs[i] = ":"
		case strings.HasPrefix(s, "*"):
			segs[i] = "*"
		}
	}
	return method + " " + strings.Join(segs, "/")
}

// documentedRoutes reads the route rows of docs/API.md.
func documentedRoutes(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		m := docRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, p := range regexp.MustCompile("`(/[^`]*)`").FindAllStringSubmatch(m[2], -1) {
			out[routeKey(m[1], p[1])] = true
		}
	}
	return out
}

// Every route the server registers has a row in docs/API.md, and every row names a route
// the server has: the document is checked against the router, not kept by hand.
func TestEveryRouteIsDocumented(t *testing.T) {
	// Every route is registered whatever the backends (a missing one answers 503); the
	// semantic route needs a Backend that serves it (readyBackend does).
	s, err := New(Config{Addr: "127.0.0.1:38800", Token: "tok", Backend: readyBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	docs := documentedRoutes(t)
	registered := map[string]bool{}
	for _, r := range s.engine.Routes() {
		k := routeKey(r.Method, r.Path)
		registered[k] = true
		if !docs[k] {
			t.Errorf("%s %s is served but docs/API.md has no row for it", r.Method, r.Path)
		}
	}
	if len(registered) < 30 {
		t.Fatalf("only %d routes registered: the router was not read", len(registered))
	}
	var stale []string
	for k := range docs {
		if !registered[k] {
			stale = append(stale, k)
		}
	}
	slices.Sort(stale)
	for _, k := range stale {
		t.Errorf("docs/API.md documents %s, which the server does not serve", k)
	}
}
