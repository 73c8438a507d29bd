// Package search answers the agent's three-layer workflow over a replica: a compact ranked
// index (Search), the records around a point in time (Timeline) and full records by ID (Get).
//
// Any user text is a valid query: Parse turns it into a safe FTS5 expression (every word is a
// quoted string, so FTS5 operators and punctuation in the text are never interpreted),
// ranking is bm25 with column weights plus a recency tie-break, and the work per query is
// bounded by a candidate window so a term found in most rows costs no more than a rare one.
// See docs/SEARCH.md.
package search
