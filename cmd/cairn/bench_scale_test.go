package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchScaleBadFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cairn.db")
	for _, args := range [][]string{
		{"--sizes", "0"},
		{"--sizes", "10k,abc"},
		{"--sizes", "-5"},
		{"--concurrency", "0"},
		{"--provider", "bm25"},
		{"--queries", "0"},
		{"--dir", filepath.Join(t.TempDir(), "missing")},
		{"--child", "nope"},
	} {
		_, errs, code := cli(t, db, "", append([]string{"bench", "scale"}, args...)...)
		if code != 2 || !strings.Contains(errs, "cairn: ") {
			t.Errorf("bench scale %v: exit %d, %q; want exit 2 (invalid_params)", args, code, errs)
		}
	}
}
