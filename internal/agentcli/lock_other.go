//go:build !unix

package agentcli

import (
	"os"
	"os/exec"
)

func lockFile(*os.File) error { return nil }
func unlockFile(*os.File)     {}

func setProcessGroup(*exec.Cmd) {}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
