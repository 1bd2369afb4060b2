package memory

import (
	"strings"
	"unicode/utf8"
)

// DefaultMaxContentBytes is the default cap on the content of one record
// (1 MiB). Engines make it configurable.
const DefaultMaxContentBytes = 1 << 20

// ValidateText checks a caller-supplied string: valid UTF-8, no NUL bytes, at
// most max bytes (max <= 0 means no cap). field names the value in the error.
func ValidateText(field, s string, max int) error {
	if !utf8.ValidString(s) {
		return Errorf(CodeInvalidParams, "%s is not valid UTF-8", field)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return Errorf(CodeInvalidParams, "%s contains a NUL byte", field)
	}
	if max > 0 && len(s) > max {
		return Errorf(CodeInvalidParams, "%s is %d bytes, over the %d-byte limit", field, len(s), max)
	}
	return nil
}

// ValidateContent checks record content: ValidateText plus non-blank.
func ValidateContent(field, s string, max int) error {
	if err := ValidateText(field, s, max); err != nil {
		return err
	}
	if strings.TrimSpace(s) == "" {
		return Errorf(CodeInvalidParams, "%s is empty", field)
	}
	return nil
}
