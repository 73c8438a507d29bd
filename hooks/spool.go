package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/internal/datadir"
)

// The spool is DataDir/spool/events.jsonl: one event per line (its format: spoolLine, in
// spoolline.go), appended by hooks while the node is out of reach, replayed by the node on
// start and then every few seconds (DrainSpool).
//
// Crash safety: DrainSpool first renames the live file to events-<nanos>.replaying, so hooks
// keep appending to a fresh events.jsonl; the .replaying file is deleted only after fn has
// accepted every event in it, and a leftover one (a crash mid-drain) is replayed next time.
// Replays can repeat events; the node dedupes by EventID.
//
// Appends and the rotation both run under an flock on spool/.lock, and an appender closes
// the file before unlocking; so once rotated, a file has no writer left and is read whole.
const (
	spoolFile      = "events.jsonl"
	replayingExt   = ".replaying"
	drainBatchSize = 256
	// MaxSpoolBytes bounds the live spool file, so a node that stays down for weeks does not
	// fill the disk.
	MaxSpoolBytes = 256 << 20
)

// ErrSpoolFull is returned by AppendSpool when the spool file reached MaxSpoolBytes.
var ErrSpoolFull = errors.New("spool full")

// AppendSpool appends ev (already cleaned) to dataDir's spool and fsyncs it.
func AppendSpool(dataDir string, ev apitype.Event) error {
	line, err := json.Marshal(spoolLineOf(ev))
	if err != nil {
		return fmt.Errorf("encode spooled event: %w", err)
	}
	line = append(line, '\n')
	dir := datadir.Dir(dataDir).Spool()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create spool dir: %w", err)
	}
	unlock, err := lockSpool(dir)
	if err != nil {
		return err
	}
	defer unlock()
	name := filepath.Join(dir, spoolFile)
	created := false
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		created = true
	} else if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0o600)
	}
	if err != nil {
		return fmt.Errorf("open spool: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat spool: %w", err)
	}
	if fi.Size()+int64(len(line)) > MaxSpoolBytes {
		return ErrSpoolFull
	}
	if _, err := f.Write(line); err != nil {
		// A torn line (a full disk) would also spoil the next append: cut it off.
		_ = f.Truncate(fi.Size())
		return fmt.Errorf("write spool: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Truncate(fi.Size())
		return fmt.Errorf("sync spool: %w", err)
	}
	if created {
		atomicfile.SyncDir(dir)
	}
	return f.Close()
}

// lockSpool takes the spool's lock and returns its release.
func lockSpool(dir string) (func(), error) {
	lf, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open spool lock: %w", err)
	}
	if err := lockFile(lf); err != nil {
		lf.Close()
		return nil, fmt.Errorf("lock spool: %w", err)
	}
	return func() {
		unlockFile(lf)
		lf.Close()
	}, nil
}

// DrainSpool hands every spooled event to fn, in batches, oldest first, and returns how
// many fn accepted. A file is deleted only after fn accepted all of it; on error the rest
// stays for the next drain. Lines that do not decode (a write torn by a crash) are skipped.
func DrainSpool(dataDir string, fn func([]apitype.Event) error) (int, error) {
	dir := datadir.Dir(dataDir).Spool()
	if err := rotateSpool(dir); err != nil {
		return 0, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("list spool: %w", err)
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), replayingExt) {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(files) // zero-padded nanoseconds: name order is age order
	total := 0
	for _, name := range files {
		n, err := drainFile(name, fn)
		total += n
		if err != nil {
			return total, err
		}
		if err := os.Remove(name); err != nil {
			return total, fmt.Errorf("remove drained spool: %w", err)
		}
	}
	if len(files) > 0 {
		atomicfile.SyncDir(dir)
	}
	return total, nil
}

// rotateSpool renames the live file to a .replaying one, under the spool lock.
func rotateSpool(dir string) error {
	live := filepath.Join(dir, spoolFile)
	if _, err := os.Stat(live); errors.Is(err, fs.ErrNotExist) {
		return nil // nothing spooled (or no spool dir at all)
	} else if err != nil {
		return fmt.Errorf("stat spool: %w", err)
	}
	unlock, err := lockSpool(dir)
	if err != nil {
		return err
	}
	defer unlock()
	target := filepath.Join(dir, fmt.Sprintf("events-%020d%s", time.Now().UnixNano(), replayingExt))
	if err := os.Rename(live, target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rotate spool: %w", err)
	}
	atomicfile.SyncDir(dir)
	return nil
}

func drainFile(name string, fn func([]apitype.Event) error) (int, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, fmt.Errorf("open spool: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	batch := make([]apitype.Event, 0, drainBatchSize)
	total := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := fn(batch); err != nil {
			return fmt.Errorf("replay spooled events: %w", err)
		}
		total += len(batch)
		batch = make([]apitype.Event, 0, drainBatchSize)
		return nil
	}
	for {
		line, rerr := r.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var l spoolLine
			if json.Unmarshal(line, &l) == nil && l.EventID != "" {
				batch = append(batch, l.event())
			}
		}
		if len(batch) == drainBatchSize {
			if err := flush(); err != nil {
				return total, err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return total, fmt.Errorf("read spool: %w", rerr)
		}
	}
	return total, flush()
}
