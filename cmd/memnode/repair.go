//go:build !memnode_lean

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
	memsync "github.com/memnode/memnode/sync"
)

// cmdRepair recovers what is readable from a corrupt memnode.db: the damaged file (and its
// WAL) is moved aside, a new database is created, and every record that still reads is
// copied into it (replica.Salvage). The node must be stopped.
//
// With --purge-dead it deletes the dead letters instead: the events set aside after
// failing store.MaxAttempts times (`memnode status` counts them).
func cmdRepair(ctx context.Context, env *cliEnv, args []string) int {
	f := newFlags(env, "repair", "repair [--purge-dead]")
	purgeDead := f.Bool("purge-dead", false, "delete the dead letters (events set aside after failing 10 times) instead")
	if _, code, ok := f.parse(args, 0, 0); !ok {
		return code
	}
	if datadir.Held(env.DataDir) {
		return fail(env, "repair: the node is running on %s; 'memnode stop' first", env.DataDir)
	}
	path := datadir.Dir(env.DataDir).DB()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fail(env, "repair: no database at %s", path)
	}
	_, peerID, err := memsync.LoadOrCreateIdentity(datadir.Dir(env.DataDir).Identity())
	if err != nil {
		return fail(env, "repair: %v", err)
	}
	origin := peerID.String()
	if *purgeDead {
		r, err := replica.Open(ctx, replica.Config{Path: path, Origin: origin})
		if err != nil {
			return fail(env, "repair: %v", err)
		}
		n, err := r.PurgeDead(ctx)
		if cerr := r.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fail(env, "repair: %v", err)
		}
		fmt.Fprintf(env.Stdout, "deleted %s set aside after failing %d times\n", plural(n, "dead event"), store.MaxAttempts)
		return 0
	}
	// The open checks the header, the schema and the roots; the full check reads every page.
	r, err := replica.Open(ctx, replica.Config{Path: path, Origin: origin})
	if err == nil {
		err = r.CheckIntegrity(ctx)
		r.Close()
		if err == nil {
			fmt.Fprintf(env.Stdout, "%s passes SQLite's quick_check: nothing to repair\n", path)
			return 0
		}
	}
	if !errors.Is(err, replica.ErrCorrupt) {
		return fail(env, "repair: %s does not open, and not because it is corrupt: %v", path, err)
	}
	damaged := path + ".corrupt-" + strconv.FormatInt(time.Now().Unix(), 10)
	for _, side := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(path+side, damaged+side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(env, "repair: move the damaged file aside: %v", err)
		}
	}
	r, err = replica.Open(ctx, replica.Config{Path: path, Origin: origin})
	if err != nil {
		return fail(env, "repair: create a new database: %v", err)
	}
	res, err := r.Salvage(ctx, damaged)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(env, "repair: %v (the damaged file is kept as %s)", err, damaged)
	}
	fmt.Fprintf(env.Stdout, "recovered %d sessions, %d prompts, %d observations, %d summaries; %d unreadable ranges skipped\n",
		res.Sessions, res.Prompts, res.Observations, res.Summaries, res.Skipped)
	fmt.Fprintf(env.Stdout, "the damaged file is kept as %s; 'memnode start' uses the new database\n", damaged)
	return 0
}
