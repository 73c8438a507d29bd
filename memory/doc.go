// Package memory is memnode's domain: the records it keeps (sessions, prompts, observations,
// summaries, devices), the observation vocabulary, the event kinds hooks report and the
// domain errors. It imports only the standard library, so every part — the cgo replica, the
// lean hook binary, the client, MCP — can share it.
//
// These types are the domain, not a contract: the SQLite rows (replica), the CRDT op payload,
// the export format (importer) and the HTTP API each have their own versioned types and
// convert at their edge.
package memory
