// Package team holds the real-process tests of team memory: memnode processes against real
// rqlited (internal/rqlitetest). Test files only; helpers in internal/e2ekit.
package team
