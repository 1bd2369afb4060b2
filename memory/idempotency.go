package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode"
	"unicode/utf8"
)

// MaxIdempotencyKeyBytes bounds an idempotency key.
const MaxIdempotencyKeyBytes = 255

// A write answered with an error, or cut by a lost connection, may still
// have been stored: a client that retries must not make a second record.
// Every creating tool (log, capsule_open, think, pin, kg_entity_create,
// kg_observe, kg_edge_create) takes an id the
// client chooses, or an idempotency key from which cairn derives the id
// (HTTP also reads the Idempotency-Key header). A retry with the same id
// or key returns the first request's record, and the same id given for a
// different record is a conflict. The guarantee rests on the record's
// primary key, so it holds across processes and servers sharing a
// database, with no table of keys to expire.

// KeyedID returns the id a creating request asks for: id as given, or,
// with an idempotency key, prefix "_k" and 26 hex digits of the key's
// SHA-256 (the tool's prefix in the hash, so one key names one record per
// kind).
func KeyedID(prefix, id, key string) (string, error) {
	if key == "" {
		return id, nil
	}
	if id != "" {
		return "", Errorf(CodeInvalidParams, "give an id or an idempotencyKey, not both")
	}
	if len(key) > MaxIdempotencyKeyBytes || !utf8.ValidString(key) || !hasNoControl(key) {
		return "", Errorf(CodeInvalidParams, "idempotencyKey: want 1 to %d bytes of UTF-8 text without control characters", MaxIdempotencyKeyBytes)
	}
	sum := sha256.Sum256([]byte(prefix + "\x00" + key))
	return prefix + "_k" + hex.EncodeToString(sum[:13]), nil
}

func hasNoControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// Replay answers a create that failed with err: when err is a conflict and
// the request named its record's id, the record stored under it is
// returned if it is the one the request would have made (same reports
// it), the first result of a retried request. A different record under the
// id is a conflict that says so; any other error is err.
func Replay[T any](err error, id string, get func() (T, error), same func(T) bool, what string) (T, error) {
	var zero T
	if id == "" || !IsCode(err, CodeConflict) {
		return zero, err
	}
	got, gerr := get()
	if gerr != nil {
		return zero, err
	}
	if !same(got) {
		return zero, Errorf(CodeConflict, "id %q already names another %s (a retry must repeat the first request)", id, what)
	}
	return got, nil
}
