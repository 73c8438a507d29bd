// Package team shares chosen projects' memory with a team through an rqlite cluster the team
// runs: signed ops pushed from a local outbox, pulled by cursor and verified, applied through
// the replica's CRDT rules; FTS5 search over everything shared. See DESIGN.md.
package team
