package memory

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"unicode"
)

// Field names follow the specification each tool implements: the
// retrieval contract's records speak camelCase (scopeIds, createdAt,
// targetId), inner_voice's and code memory's tools snake_case (is_private,
// top_k, episode_id). On input either spelling of a field is accepted:
// a name a request does not know is read as the field whose name it spells
// in the other convention. Output keeps each tool's documented names.

// OtherSpellings rewrites the object keys of args (and of the objects it
// nests, as far as t's struct fields go) that t does not know but whose
// other convention names one of its fields. It reports whether it changed
// anything; args that are not a JSON object are returned as they are.
func OtherSpellings(args []byte, t reflect.Type) ([]byte, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber() // numbers pass through as written, past 2^53 too
	if dec.Decode(&v) != nil {
		return args, false
	}
	if !respell(v, t) {
		return args, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return args, false
	}
	return out, true
}

// respell rewrites v's keys for type t in place and reports a change.
func respell(v any, t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		if arr, ok := v.([]any); ok && t.Kind() != reflect.Pointer {
			changed := false
			for _, e := range arr {
				changed = respell(e, t.Elem()) || changed
			}
			return changed
		}
		t = t.Elem()
	}
	obj, ok := v.(map[string]any)
	if !ok || t.Kind() != reflect.Struct {
		return false
	}
	fields := jsonFields(t)
	changed := false
	for k, val := range obj {
		if _, known := fields[k]; known {
			continue
		}
		for _, alt := range []string{camelCase(k), snakeCase(k)} {
			if _, known := fields[alt]; !known || alt == k {
				continue
			}
			if _, taken := obj[alt]; taken {
				continue
			}
			delete(obj, k)
			obj[alt] = val
			changed = true
			break
		}
	}
	for k, val := range obj {
		if ft, ok := fields[k]; ok {
			changed = respell(val, ft) || changed
		}
	}
	return changed
}

// jsonFields maps t's JSON field names to their types, embedded structs'
// fields included.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// camelCase spells snake_case as camelCase ("top_k" → "topK").
func camelCase(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	up := false
	for _, r := range s {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// snakeCase spells camelCase as snake_case ("scopeIds" → "scope_ids").
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
