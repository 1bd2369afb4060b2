package postgres

import "testing"

// The shared statements' placeholders become PostgreSQL's: ? in order,
// ?N as $N, none inside quoted strings or identifiers, and a statement
// without any is returned as it is.
func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT x FROM t WHERE a = ? AND b = ?", "SELECT x FROM t WHERE a = $1 AND b = $2"},
		{"UPDATE t SET s = ?1 WHERE id = ?2 AND s <> ?1", "UPDATE t SET s = $1 WHERE id = $2 AND s <> $1"},
		{"SELECT '?', \"a?b\", ? FROM t", "SELECT '?', \"a?b\", $1 FROM t"},
		{"SELECT 'it''s ?' || ?", "SELECT 'it''s ?' || $1"},
		{"LIMIT ?10", "LIMIT $10"},
		{"SELECT $1 FROM t", "SELECT $1 FROM t"},
		{"x = ANY(?::text[])", "x = ANY($1::text[])"},
	} {
		if got := rebind(c.in); got != c.want {
			t.Errorf("rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
