package memory

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// The cursors every store makes, so that a page listed by one store can be
// continued by another holding the same records (a migrated database) and
// a cursor is checked the same way everywhere. Each kind starts with its
// own letter; a cursor a store did not make is invalid_params.

// SeqCursor encodes a row's insertion sequence as a cursor.
func SeqCursor(seq int64) Cursor { return "s" + strconv.FormatInt(seq, 10) }

// ParseSeqCursor reads a SeqCursor back; "" is the first page (0: no
// bound).
func ParseSeqCursor(c Cursor) (int64, error) {
	if c == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(c, "s"), 10, 64)
	if err != nil || !strings.HasPrefix(c, "s") || n <= 0 {
		return 0, foreignCursor(c)
	}
	return n, nil
}

// EntityCursor encodes a position in the knowledge graph's name order:
// the entity's name key and, to break ties, its id.
func EntityCursor(nameKey, id string) Cursor {
	return "e" + base64.RawURLEncoding.EncodeToString([]byte(nameKey+"\x00"+id))
}

// ParseEntityCursor reads an EntityCursor back; "" is the first page.
func ParseEntityCursor(c Cursor) (nameKey, id string, err error) {
	if c == "" {
		return "", "", nil
	}
	b, derr := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(c, "e"))
	k, i, ok := strings.Cut(string(b), "\x00")
	if derr != nil || !ok || !strings.HasPrefix(c, "e") || i == "" || strings.ContainsRune(i, 0) {
		return "", "", foreignCursor(c)
	}
	return k, i, nil
}

// KeyCursor encodes a position in a repository's code-entity key order.
func KeyCursor(key string) Cursor {
	return "k" + base64.RawURLEncoding.EncodeToString([]byte(key))
}

// ParseKeyCursor reads a KeyCursor back; "" is the first page.
func ParseKeyCursor(c Cursor) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(c, "k"))
	if err != nil || !strings.HasPrefix(c, "k") || len(b) == 0 || strings.ContainsRune(string(b), 0) {
		return "", foreignCursor(c)
	}
	return string(b), nil
}

func foreignCursor(c Cursor) error {
	return Errorf(CodeInvalidParams, "cursor %q is not one this store made", c)
}

// CheckPageSize bounds a page size: 1 to 1000.
func CheckPageSize(n int) error {
	if n < 1 || n > 1000 {
		return Errorf(CodeInvalidParams, "page size %d is out of range [1, 1000]", n)
	}
	return nil
}

// Check checks a code-entity listing's filter and returns the key its
// cursor names ("" for the first page).
func (f CodeEntityBrowse) Check() (after string, err error) {
	if err := CheckPageSize(f.Limit); err != nil {
		return "", err
	}
	if f.RepoID == "" {
		return "", Errorf(CodeInvalidParams, "a repository is required to list code entities")
	}
	if f.State != "" && !f.State.Valid() {
		return "", Errorf(CodeInvalidParams, "state %q is not one of PROPOSED, AUTHORITATIVE, SUPERSEDED, TOMBSTONED", f.State)
	}
	return ParseKeyCursor(f.After)
}
