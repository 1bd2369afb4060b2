//go:build unix && !linux

package pgtest

import "syscall"

type credential = syscall.Credential

// procAttr runs a binary as cred (when set); the postmaster gets its own
// process group. Without Linux's parent-death signal a server of a killed
// test run stops when its data directory is removed or at reboot.
func procAttr(cred *credential, server bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: server}
}
