package viewer

import (
	"testing"
	"testing/fstest"
)

// TestVersionFollowsTheContents: the same files give the same version, a changed byte or
// a renamed file another one.
func TestVersionFollowsTheContents(t *testing.T) {
	version := func(fsys fstest.MapFS) string {
		t.Helper()
		v, err := Version(fsys)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	base := fstest.MapFS{"index.html": {Data: []byte("<p>")}, "app/main.js": {Data: []byte("boot()")}}
	v := version(base)
	if len(v) != 12 || version(fstest.MapFS{"index.html": {Data: []byte("<p>")}, "app/main.js": {Data: []byte("boot()")}}) != v {
		t.Fatalf("version %q is not stable", v)
	}
	for name, other := range map[string]fstest.MapFS{
		"a changed byte": {"index.html": {Data: []byte("<p>")}, "app/main.js": {Data: []byte("boot(")}},
		"a renamed file": {"index.html": {Data: []byte("<p>")}, "app/mains.js": {Data: []byte("boot()")}},
	} {
		if version(other) == v {
			t.Errorf("%s kept version %s", name, v)
		}
	}
	if real, err := Version(Assets()); err != nil || len(real) != 12 {
		t.Fatalf("the embedded assets: %q, %v", real, err)
	}
}
