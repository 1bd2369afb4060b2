package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// serve's timeouts must be positive durations: anything else is a usage
// error that names the flag, before anything is opened or bound.
func TestServeTimeoutFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	for _, args := range [][]string{
		{"--read-header-timeout", "0s"}, {"--read-timeout", "-1s"}, {"--write-timeout", "0"},
		{"--idle-timeout", "0s"}, {"--request-timeout", "0s"}, {"--read-timeout", "soon"},
	} {
		_, errs, code := cli(t, db, "", append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
		if code != 2 || !strings.Contains(errs, args[0]) {
			t.Errorf("serve %v: exit %d %s; want 2 naming the flag", args, code, errs)
		}
	}
}
