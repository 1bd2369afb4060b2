package httpapi

import (
	"encoding/json"
	"math"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// queryField is where a query parameter goes in a tool's arguments: a
// top-level field, or a field of a nested object (scopeIds.sessionId is
// written sessionId in a query).
type queryField struct {
	parent string // the enclosing field's JSON name, or ""
	name   string
	kind   reflect.Type
}

// queryFields maps the query parameter names a tool accepts to fields of
// its request type: its scalar and string-list fields, and the scalar
// fields of its nested objects.
func queryFields(in reflect.Type) map[string]queryField {
	out := map[string]queryField{}
	var walk func(t reflect.Type, parent string)
	walk = func(t reflect.Type, parent string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Struct && parent == "":
				walk(ft, name)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String,
				ft.Kind() == reflect.String, ft.Kind() == reflect.Bool,
				ft.Kind() >= reflect.Int && ft.Kind() <= reflect.Float64:
				out[name] = queryField{parent: parent, name: name, kind: ft}
			}
		}
	}
	walk(in, "")
	return out
}

// withQuery adds the URL's query parameters to the JSON arguments of a GET
// route, converted to the field types: numbers and booleans parse, string
// lists take repeated or comma-separated values. An unknown parameter, a
// malformed value or one that clashes with the body is invalid_params.
func withQuery(args []byte, q url.Values, fields map[string]queryField) ([]byte, error) {
	if len(q) == 0 {
		return args, nil
	}
	obj := map[string]json.RawMessage{}
	if s := strings.TrimSpace(string(args)); s != "" {
		if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
			return nil, memory.Errorf(memory.CodeInvalidParams, "the request body must be a JSON object")
		}
	}
	nested := map[string]map[string]json.RawMessage{}
	for key, vals := range q {
		f, ok := fields[key]
		if !ok {
			return nil, memory.Errorf(memory.CodeInvalidParams, "unknown query parameter %q", key)
		}
		enc, err := queryValue(key, vals, f.kind)
		if err != nil {
			return nil, err
		}
		if f.parent == "" {
			if _, dup := obj[f.name]; dup {
				return nil, memory.Errorf(memory.CodeInvalidParams, "%s is given twice (path, body or query)", key)
			}
			obj[f.name] = enc
			continue
		}
		if nested[f.parent] == nil {
			nested[f.parent] = map[string]json.RawMessage{}
		}
		nested[f.parent][f.name] = enc
	}
	for parent, m := range nested {
		if _, dup := obj[parent]; dup {
			return nil, memory.Errorf(memory.CodeInvalidParams, "%s is given both in the body and in the query", parent)
		}
		b, _ := json.Marshal(m)
		obj[parent] = b
	}
	return json.Marshal(obj)
}

func queryValue(key string, vals []string, t reflect.Type) (json.RawMessage, error) {
	if t.Kind() == reflect.Slice {
		list := []string{}
		for _, v := range vals {
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					list = append(list, p)
				}
			}
		}
		return json.Marshal(list)
	}
	if len(vals) != 1 {
		return nil, memory.Errorf(memory.CodeInvalidParams, "query parameter %q is given %d times", key, len(vals))
	}
	v := vals[0]
	switch k := t.Kind(); {
	case k == reflect.String:
		return json.Marshal(v)
	case k == reflect.Bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, memory.Errorf(memory.CodeInvalidParams, "query parameter %s=%q: want true or false", key, v)
		}
		return json.Marshal(b)
	case k >= reflect.Int && k <= reflect.Uint64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, memory.Errorf(memory.CodeInvalidParams, "query parameter %s=%q: want a whole number", key, v)
		}
		return json.Marshal(n)
	default:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, memory.Errorf(memory.CodeInvalidParams, "query parameter %s=%q: want a number", key, v)
		}
		return json.Marshal(f)
	}
}
