//go:build !unix

package llm

import "os/exec"

// setProcessGroup leaves cmd's default cancellation (kill the process) where process
// groups do not exist.
func setProcessGroup(*exec.Cmd) {}
