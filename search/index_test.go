package search_test

import (
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store/storetest"
)

// Every store that passes the contract suite can back a Searcher.
var _ search.Index = storetest.Store(nil)
