//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

// flushLock is not available here: hooks write in their own process.
type flushLock struct{}

func tryFlushLock(path string) (*flushLock, bool, error) { return &flushLock{}, true, nil }

func (l *flushLock) release() {}

// backgroundWrites says hooks can leave their writes to a background
// flusher here.
const backgroundWrites = false
