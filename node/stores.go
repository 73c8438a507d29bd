package node

import (
	"github.com/memnode/memnode/embed/worker"
	"github.com/memnode/memnode/inject"
	"github.com/memnode/memnode/pipeline"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/sync"
	"github.com/memnode/memnode/team"
)

// The replica is every part's store: each part declares the small interface it needs, in
// the store package's types, and the node hands them one *replica.Replica.
var (
	_ inject.Reader  = (*replica.Replica)(nil)
	_ pipeline.Store = (*replica.Replica)(nil)
	_ search.Backend = (*replica.Replica)(nil)
	_ sync.Store     = (*replica.Replica)(nil)
	_ team.Replica   = (*replica.Replica)(nil)
	_ worker.Store   = (*replica.Replica)(nil)
)
