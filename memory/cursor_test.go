package memory_test

import (
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// Cursors read back what they encode, and anything else is invalid_params.
func TestCursorsRoundTrip(t *testing.T) {
	if n, err := memory.ParseSeqCursor(memory.SeqCursor(42)); err != nil || n != 42 {
		t.Errorf("seq cursor: %d, %v", n, err)
	}
	if k, id, err := memory.ParseEntityCursor(memory.EntityCursor("auth service", "ent_1")); err != nil || k != "auth service" || id != "ent_1" {
		t.Errorf("entity cursor: %q %q %v", k, id, err)
	}
	if k, err := memory.ParseKeyCursor(memory.KeyCursor("a/b.go::F")); err != nil || k != "a/b.go::F" {
		t.Errorf("key cursor: %q %v", k, err)
	}
	for _, c := range []string{""} {
		if n, err := memory.ParseSeqCursor(c); err != nil || n != 0 {
			t.Errorf("empty seq cursor: %d %v", n, err)
		}
	}
	bad := []struct {
		name  string
		parse func(string) error
		c     string
	}{
		{"seq", func(c string) error { _, err := memory.ParseSeqCursor(c); return err }, "s0"},
		{"seq", func(c string) error { _, err := memory.ParseSeqCursor(c); return err }, "x12"},
		{"seq", func(c string) error { _, err := memory.ParseSeqCursor(c); return err }, memory.KeyCursor("k")},
		{"entity", func(c string) error { _, _, err := memory.ParseEntityCursor(c); return err }, memory.SeqCursor(3)},
		{"entity", func(c string) error { _, _, err := memory.ParseEntityCursor(c); return err }, memory.EntityCursor("name", "")},
		{"entity", func(c string) error { _, _, err := memory.ParseEntityCursor(c); return err }, memory.EntityCursor("name", "a\x00b")},
		{"key", func(c string) error { _, err := memory.ParseKeyCursor(c); return err }, "k!!"},
		{"key", func(c string) error { _, err := memory.ParseKeyCursor(c); return err }, memory.KeyCursor("a\x00b")},
		{"key", func(c string) error { _, err := memory.ParseKeyCursor(c); return err }, "k"},
	}
	for _, b := range bad {
		if err := b.parse(b.c); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%s cursor %q: %v; want invalid_params", b.name, b.c, err)
		}
	}
	for _, n := range []int{0, -1, 1001} {
		if err := memory.CheckPageSize(n); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("page size %d: %v", n, err)
		}
	}
	if err := memory.CheckPageSize(1000); err != nil {
		t.Errorf("page size 1000: %v", err)
	}
}
