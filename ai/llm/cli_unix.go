//go:build unix

package llm

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs cmd in a process group of its own and makes its cancellation kill
// the whole group: agent CLIs start helpers (node workers, MCP servers) that must not
// outlive the request.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
