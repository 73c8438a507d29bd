// Package search answers the agent's three-layer workflow over a replica: a compact ranked
// index (Search), the records around a point in time (Timeline) and full records by ID (Get).
//
// Any user text is a valid query: Parse turns it into a safe FTS5 expression (every word is a
// quoted string, so FTS5 operators and punctuation in the text are never interpreted).
// Ranking by relevance ORs the informative terms (stop and question words left out,
// identifiers weighed up) and ranks every match by bm25 with light column weights, then
// lifts a record by its session neighbours' relevance; recency only breaks ties. A term
// found in most rows only filters, so it costs no more than a rare one. The figures that
// justify each choice come from search/recall (LoCoMo, the coding-memory set). See
// docs/SEARCH.md.
package search
