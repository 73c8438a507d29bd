//go:build unix

package agentcli

import (
	"os"
	"os/exec"
	"syscall"
)

func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// setProcessGroup makes cmd the leader of a new process group, so killGroup reaches the
// agent's children (MCP servers, hooks) too.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
