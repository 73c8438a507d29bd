// Package sync holds the real-process tests of device sync: memnode processes pairing on
// 127.0.0.1, replicating, catching up from the op-log or a snapshot, removal and limits.
// Test files only; helpers in internal/e2ekit. Each test owns its nodes' data dirs and ports
// (e2ekit.SyncPorts), so the tests run in parallel (t.Parallel).
package sync
