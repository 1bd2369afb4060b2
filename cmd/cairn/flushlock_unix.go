//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"
	"syscall"
)

// flushLock is held by the one process writing a spool in the
// background.
type flushLock struct{ f *os.File }

// tryFlushLock takes the spool's flush lock without waiting; ok is false
// when another process holds it.
func tryFlushLock(path string) (l *flushLock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, false, nil
		}
		return nil, false, err
	}
	return &flushLock{f: f}, true, nil
}

func (l *flushLock) release() {
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}

// backgroundWrites says hooks can leave their writes to a background
// flusher here.
const backgroundWrites = true
