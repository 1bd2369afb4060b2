// Package content holds the text functions every retrieval face shares:
// token estimates and match-context snippets (and, as they are needed,
// normalisation, content hashes and sentence capping).
//
// It imports nothing of cairn's.
package content
