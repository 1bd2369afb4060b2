package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// DecodeStrict decodes one JSON value, refusing unknown fields, and turns
// decoding errors into invalid_params errors.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var me *Error
		if errors.As(err, &me) {
			return me
		}
		return Wrap(CodeInvalidParams, err, "%s", JSONProblem(err))
	}
	return nil
}

// JSONProblem describes a JSON decoding error without echoing the input.
func JSONProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth"):
		return fmt.Sprintf("JSON nested too deeply (at byte %d)", se.Offset)
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Sprintf("field %s must be %s, not %s", te.Field, jsonType(te.Type), te.Value)
		}
		return fmt.Sprintf("want %s, not %s", jsonType(te.Type), te.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON"
	}
	msg := err.Error()
	if bytes.HasPrefix([]byte(msg), []byte("json: unknown field ")) {
		return "unknown field " + msg[len("json: unknown field "):]
	}
	return "malformed JSON"
}

// jsonType names the JSON a Go type reads, for a caller who never sees
// Go's type names.
func jsonType(t reflect.Type) string {
	if t == nil {
		return "another JSON value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another JSON value"
}
