package search_test

import (
	"github.com/memnode/memnode/replica/storetest"
	"github.com/memnode/memnode/search"
)

// Every store that passes the contract suite can back a Searcher.
var _ search.Index = storetest.Store(nil)
