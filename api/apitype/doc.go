// Package apitype holds the request and response bodies of the node's HTTP API — the
// contract between the node (package api) and its clients (package client, the hook
// binary, the MCP server) — and their plain-text renderings. It imports only the standard
// library and the domain package memory, so a client links no cgo, gin, libp2p or spago.
//
// Versioning: Version is the API's version, reported by GET /health. Within a version
// changes are additive only: a new optional field, a new route. Readers ignore fields they do
// not know (encoding/json's default) and treat a missing field as its zero value, so an
// older CLI keeps working against a newer node and the reverse. Renaming or removing a
// field, or changing its meaning, is a new Version.
package apitype

// Version is the HTTP API's version (see the package comment for the rule). 3: GET
// /api/status is the typed Status, one sub-struct per part.
const Version = 3
