//go:build !memnode_lean

package main

import (
	"os"

	"github.com/gin-gonic/gin"
	"github.com/nlpodyssey/spago/ag"
)

// This is memnoded, the daemon binary (and, built without tags, a memnode that runs every
// command itself): the node and the commands that link SQLite, libp2p, gin or spago (run, import,
// repair, embed, peers, team) besides every command of the lean memnode (daemon_exec.go).

// progName is what `version` prints first.
const progName = "memnoded"

// setUpProcess sets the process-wide modes of the daemon's libraries.
func setUpProcess() {
	// gin's mode is process-wide; release mode keeps its banner and route dump off stdout
	// (stdout of `memnode mcp` and of hooks carries protocol only).
	gin.SetMode(gin.ReleaseMode)
	// spago runs each tensor operator in its own goroutine by default; for one sentence at
	// a time synchronous execution is ~15% cheaper (embed benchmarks: ~98 vs ~111 CPU-ms
	// for a MiniLM-sized encode). Process-wide, hence set here.
	ag.SetForceSyncExecution(true)
}

// daemonExe is this binary: it runs the node itself.
func daemonExe() (string, error) { return os.Executable() }
