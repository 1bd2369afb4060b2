package memory

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error code. Callers branch on the code,
// never on the message.
type Code string

// The error codes cairn reports. They never change meaning.
const (
	// CodeInvalidParams: the request is malformed or out of bounds.
	CodeInvalidParams Code = "invalid_params"
	// CodeNotFound: a named record does not exist.
	CodeNotFound Code = "not_found"
	// CodeConflict: the request clashes with the stored state (a duplicate id,
	// a second open capsule for a session, closing a closed capsule).
	CodeConflict Code = "conflict"
	// CodeFeatureDisabled: the capability is switched off by configuration.
	CodeFeatureDisabled Code = "feature_disabled"
	// CodeEmbedderUnavailable: the embedding provider failed or timed out.
	CodeEmbedderUnavailable Code = "embedder_unavailable"
	// CodeDBError: the database failed (busy past every retry, disk full,
	// corrupt, or from a newer cairn).
	CodeDBError Code = "db_error"
	// CodeInternal: an unexpected failure; a bug.
	CodeInternal Code = "internal_error"
	// CodeTimeout: the call ran past its time limit (the HTTP API's
	// request timeout) and was stopped.
	CodeTimeout Code = "timeout"
)

// Codes lists every code, in a stable order.
var Codes = []Code{CodeInvalidParams, CodeNotFound, CodeConflict, CodeFeatureDisabled,
	CodeEmbedderUnavailable, CodeDBError, CodeInternal, CodeTimeout}

// Error is cairn's typed error. Message is written for the caller and is safe
// to show; Err is the underlying cause, kept for logs and errors.Is, and never
// shown to a caller (it may hold SQL text or paths).
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Error returns "code: message".
func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns a typed error with a formatted, caller-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns a typed error that keeps cause for logs but shows only the
// formatted message to callers.
func Wrap(code Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: cause}
}

// CodeOf reports the code of err: the code of the first *Error in its chain,
// "" for nil, and CodeInternal for anything untyped.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// Public returns the typed error a caller may see for err: err's own *Error
// when it has one, and a generic internal_error otherwise, so no internal
// detail of an untyped error leaks.
func Public(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return &Error{Code: e.Code, Message: e.Message}
	}
	return &Error{Code: CodeInternal, Message: "internal error"}
}

// IsCode reports whether err carries code.
func IsCode(err error, code Code) bool { return err != nil && CodeOf(err) == code }

// Detail returns err's whole story for the operator's logs: a typed
// error's code and message followed by its cause's text, down the chain.
// It may hold internal detail (addresses, SQL, Go error text) and must
// never reach a caller: callers get Public.
func Detail(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := err.(*Error); ok {
		if e.Err == nil {
			return e.Error()
		}
		return e.Error() + ": " + Detail(e.Err)
	}
	s := err.Error()
	var e *Error
	if errors.As(err, &e) && e.Err != nil {
		s += " (cause: " + Detail(e.Err) + ")"
	}
	return s
}
