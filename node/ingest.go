package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/pipeline"
	"github.com/memnode/memnode/privacy"
)

var errNotReady = errors.New("node not ready")

// Ingest hands an event to the pipeline (validate, policy, clean again, queue durably).
// When it returns without error the event survives a crash.
func (n *Node) Ingest(ctx context.Context, ev apitype.Event) (apitype.EventReply, error) {
	p := n.pipe.Load()
	if p == nil {
		return apitype.EventReply{}, fmt.Errorf("ingest: %w", errNotReady)
	}
	if err := n.corruption(); err != nil {
		return apitype.EventReply{}, fmt.Errorf("ingest: %w: %w", memory.ErrCorrupt, err)
	}
	rep, err := p.Ingest(ctx, ev)
	if err == nil {
		n.seen.note(ev.Platform, n.cfg.Now())
	}
	if err == nil && rep.Status != "skipped" {
		n.noteContextFile(ev.Platform, privacy.Clean(ev.Project), privacy.Clean(ev.Cwd))
	}
	return rep, err
}

func globMatcher(globs []string) func(string) bool {
	if len(globs) == 0 {
		return nil
	}
	return memory.Policy{ExcludedProjects: globs}.ProjectExcluded
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// storageStatus is Status.Storage.
func (n *Node) storageStatus(ps pipeline.Stats) apitype.StorageStatus {
	if ps.StorageFull {
		return apitype.StorageStatus{State: apitype.StorageFull,
			Message: "new events are refused until space is freed on the disk of " + n.cfg.DataDir}
	}
	return apitype.StorageStatus{State: apitype.StorageOK}
}
