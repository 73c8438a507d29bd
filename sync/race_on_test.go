//go:build race

package sync

// raceEnabled is set when the tests run under the race detector, which makes the 20k-op
// catch-up tests too slow to say anything about timing.
const raceEnabled = true
