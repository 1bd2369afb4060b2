//go:build !unix && !windows

package main

import "errors"

// startDetached is not available here: large merges wait for a
// long-running process or cairn index optimize.
func startDetached(string, []string) error { return errors.New("not supported") }
