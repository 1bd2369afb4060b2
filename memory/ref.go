package memory

import (
	"fmt"
	"strings"
)

// MaxIDBytes bounds a caller-chosen record id.
const MaxIDBytes = 256

// ValidateRef checks a record id given by a caller: valid text of at most
// MaxIDBytes, without surrounding spaces or control characters. An empty
// id passes when optional; field names the value in the error.
func ValidateRef(field, id string, optional bool) error {
	if id == "" {
		if optional {
			return nil
		}
		return Errorf(CodeInvalidParams, "%s is empty", field)
	}
	if err := ValidateText(field, id, MaxIDBytes); err != nil {
		return err
	}
	if strings.TrimSpace(id) != id || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Errorf(CodeInvalidParams, "%s %q has surrounding spaces or control characters", field, id)
	}
	return nil
}

// Prefixed puts a prefix on a typed error's message ("line 3: ..."),
// keeping its code and cause.
func Prefixed(err error, format string, args ...any) error {
	pe := Public(err)
	return &Error{Code: pe.Code, Message: fmt.Sprintf(format, args...) + pe.Message, Err: err}
}
