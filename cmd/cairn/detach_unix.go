//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// startDetached starts a command in its own session, so it outlives this
// one and no terminal signal reaches it.
func startDetached(name string, args []string) error {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
