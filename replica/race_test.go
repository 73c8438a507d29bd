//go:build race

package replica

// raceDetector: this test binary runs under the race detector (go test -race).
const raceDetector = true
