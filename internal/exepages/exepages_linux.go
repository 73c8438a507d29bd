package exepages

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Release hands back the pages of the executable's read-only mappings (code, read-only
// data, pc tables) that start-up touched:
//
//  1. each mapping is marked MADV_NOHUGEPAGE and MADV_RANDOM, so that from now on a touch
//     maps the one page it needs, not a read-ahead window or a 2 MiB folio;
//  2. its pages are unmapped (MADV_DONTNEED);
//  3. the executable's pages that no process maps any more are dropped from the page cache
//     (POSIX_FADV_DONTNEED), so they are not mapped back whole on the next touch.
//
// A mapping is skipped when it is writable or holds a page the process has its own copy
// of: the dynamic loader writes the relocation tables, then makes them read-only, and
// dropping those would lose the relocations. Pages other processes map (another memnode
// command running) stay where they are. What the node runs later is read back on demand.
func Release() (Stats, error) {
	var st Stats
	var exe syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &exe); err != nil {
		return st, fmt.Errorf("stat executable: %w", err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return st, fmt.Errorf("read mappings: %w", err)
	}
	ranges, err := cleanReadOnlyMappings(smaps, exe.Ino)
	if err != nil {
		return st, err
	}
	for _, r := range ranges {
		if err := release(r); err != nil {
			return st, fmt.Errorf("madvise %#x-%#x: %w", r.start, r.end, err)
		}
		st.Mappings++
		st.Bytes += int64(r.end - r.start)
	}
	if err := evict(); err != nil {
		return st, fmt.Errorf("evict executable pages: %w", err)
	}
	return st, nil
}

type addrRange struct{ start, end uintptr }

// mapping is one entry of /proc/<pid>/smaps while it is read.
type mapping struct {
	addrRange
	candidate bool // the file with the wanted inode, mapped without write permission
	private   bool // some page is the process's own copy (anonymous or swapped out)
}

// cleanReadOnlyMappings returns the mappings in a /proc/<pid>/smaps text that map the
// file with inode ino without write permission and hold no page of the process's own.
func cleanReadOnlyMappings(smaps []byte, ino uint64) ([]addrRange, error) {
	var out []addrRange
	var cur *mapping
	flush := func() {
		if cur != nil && cur.candidate && !cur.private {
			out = append(out, cur.addrRange)
		}
		cur = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if key, ok := strings.CutSuffix(f[0], ":"); ok {
			// A field line of the current mapping, e.g. "Anonymous:   4 kB".
			if cur == nil || len(f) < 2 {
				continue
			}
			switch key {
			// Copy-on-write copies are anonymous pages. (Dirty counts say nothing here: a
			// just-written executable's page-cache pages are dirty until written back.)
			case "Anonymous", "Swap":
				if f[1] != "0" {
					cur.private = true
				}
			}
			continue
		}
		// A header: address perms offset dev inode [path]
		flush()
		if len(f) < 5 {
			return nil, fmt.Errorf("mappings: bad line %q", line)
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, fmt.Errorf("mappings: bad address range %q", f[0])
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			return nil, fmt.Errorf("mappings: bad address range %q", f[0])
		}
		n, err := strconv.ParseUint(f[4], 10, 64)
		perms := f[1]
		cur = &mapping{
			addrRange: addrRange{uintptr(start), uintptr(end)},
			candidate: err == nil && ino != 0 && n == ino && len(perms) >= 2 && perms[0] == 'r' && perms[1] != 'w',
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mappings: %w", err)
	}
	return out, nil
}

// madvise is the raw system call: the range is not Go memory, so it is passed as
// numbers, never as a slice or pointer.
func madvise(addr, length uintptr, advice int) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, addr, length, uintptr(advice)); errno != 0 {
		return errno
	}
	return nil
}

// release applies steps 1 and 2 of Release to one mapping.
func release(r addrRange) error {
	// A kernel built without transparent huge pages refuses MADV_NOHUGEPAGE (EINVAL);
	// there is nothing to turn off then.
	if err := madvise(r.start, r.end-r.start, unix.MADV_NOHUGEPAGE); err != nil && err != syscall.EINVAL {
		return err
	}
	for _, advice := range []int{unix.MADV_RANDOM, unix.MADV_DONTNEED} {
		if err := madvise(r.start, r.end-r.start, advice); err != nil {
			return err
		}
	}
	return nil
}

// evict is step 3 of Release: the executable's clean pages that no process maps leave the
// page cache (POSIX_FADV_DONTNEED); mapped pages are left alone.
func evict() error {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return err
	}
	defer f.Close()
	// A just-built executable's pages are dirty until written back, and dirty pages are not
	// dropped: write them back first (Linux allows this on a read-only descriptor).
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
