package exepages

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

const sampleSmaps = `00400000-00403000 r--p 00000000 fe:00 77 /opt/memnode
Size:                 12 kB
Rss:                  12 kB
Anonymous:             0 kB
Private_Dirty:         0 kB
00403000-014c1000 r-xp 00003000 fe:00 77 /opt/memnode
Size:              17144 kB
Anonymous:             0 kB
Private_Dirty:         0 kB
VmFlags: rd ex mr mw me
014c1000-028ec000 r--p 010c1000 fe:00 77 /opt/memnode
Anonymous:             0 kB
028ec000-028ef000 r--p 024ec000 fe:00 77 /opt/memnode
Private_Dirty:         4 kB
Anonymous:             4 kB
028ef000-029aa000 rw-p 024ef000 fe:00 77 /opt/memnode
Anonymous:           188 kB
7f0000000000-7f0000100000 r-xp 00000000 fe:00 99 /usr/lib/libc.so.6
Anonymous:             0 kB
7f0000200000-7f0000300000 rw-p 00000000 00:00 0
Anonymous:          1024 kB
`

func TestCleanReadOnlyMappings(t *testing.T) {
	got, err := cleanReadOnlyMappings([]byte(sampleSmaps), 77)
	if err != nil {
		t.Fatal(err)
	}
	// The relocation table (private dirty page), the writable data and other files stay.
	want := []addrRange{{0x400000, 0x403000}, {0x403000, 0x14c1000}, {0x14c1000, 0x28ec000}}
	if len(got) != len(want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("mapping %d: got %x, want %x", i, got[i], want[i])
		}
	}
	if got, _ := cleanReadOnlyMappings([]byte(sampleSmaps), 0); len(got) != 0 {
		t.Fatalf("inode 0 (anonymous memory) must never match, got %x", got)
	}
}

func TestCleanReadOnlyMappingsRejectsGarbage(t *testing.T) {
	for _, in := range []string{
		"zz-00403000 r-xp 00003000 fe:00 77 /x\n",
		"00403000-00400000 r-xp 00003000 fe:00 77 /x\n", // end before start
		"00403000 r-xp 00003000 fe:00 77 /x\n",
		"00400000-00403000 r-xp\n",
	} {
		if _, err := cleanReadOnlyMappings([]byte(in), 77); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// TestReleaseShrinksResidentFilePages releases this test binary's own start-up pages and
// checks the process keeps running and maps fewer file pages afterwards.
func TestReleaseShrinksResidentFilePages(t *testing.T) {
	before := rssFileKB(t)
	st, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	if st.Mappings < 2 || st.Bytes <= 0 {
		t.Fatalf("released %d mappings, %d bytes; want the code and read-only data at least", st.Mappings, st.Bytes)
	}
	// Run code again after the release: a dropped page that was needed would crash here.
	if _, err := cleanReadOnlyMappings([]byte(sampleSmaps), 77); err != nil {
		t.Fatal(err)
	}
	after := rssFileKB(t)
	if after >= before {
		t.Fatalf("RssFile %d kB after release, %d kB before: nothing was released", after, before)
	}
	t.Logf("RssFile %d kB → %d kB (%d mappings, %d MiB advised)", before, after, st.Mappings, st.Bytes>>20)
}

func rssFileKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
