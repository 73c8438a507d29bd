// Package store is the contract between memnode's store and its users: the values that
// cross it (batches and commit results, queue rows and claims, ops and version vectors,
// index hits and filters, records and import items, vectors, snapshot chunks), the errors
// a store returns, and the record-ID scheme every store mints. It is a leaf: it imports
// only the domain (`memory`), so `pipeline`, `search`, `sync`, `team`, `importer` and the
// embedding worker build without SQLite. Each consumer declares the small interface it
// needs in its own package; `replica` (SQLite) implements them all, and
// `store/storetest` is the contract suite every implementation passes.
package store
