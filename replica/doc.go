// Package replica is memnode's source of truth on one device: a SQLite database (WAL, FTS5),
// memnode.db, holding sessions, prompts, observations and summaries and the CRDT op-log with
// its version vector; and beside it memnode.queue.db, the durable queue of hook events, with
// a writer of its own so acknowledgements never wait for the workers' commits.
//
// Every local change appends an op (origin, seq, hlc, kind, record id, payload) in the same
// transaction as the change itself, so the op-log can never disagree with the tables. Remote
// ops are applied through ApplyOps with the same code paths. See DESIGN.md.
package replica
