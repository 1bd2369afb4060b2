//go:build linux

package pgtest

import "syscall"

type credential = syscall.Credential

// procAttr runs a binary as cred (when set); the postmaster gets its own
// process group and receives SIGQUIT when the test process dies, so no
// server outlives a killed test run.
func procAttr(cred *credential, server bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Credential: cred}
	if server {
		attr.Setpgid = true
		attr.Pdeathsig = syscall.SIGQUIT
	}
	return attr
}
