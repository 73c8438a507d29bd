// Package team holds the real-process tests of team memory: memnode processes against real
// rqlited (internal/rqlitetest). Test files only; helpers in internal/e2ekit. Each test owns
// its cluster, nodes and ports, so the tests run in parallel (t.Parallel).
package team
