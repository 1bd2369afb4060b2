//go:build !unix

package pgtest

import "syscall"

// credential is unused where processes cannot change user: the tests never
// run as root there.
type credential struct{ Uid, Gid uint32 }

func procAttr(cred *credential, server bool) *syscall.SysProcAttr { return nil }
