package webui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/cairnhq/cairn/internal/httpstatus"
	"github.com/cairnhq/cairn/internal/text"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// pageTemplate is one page: the layout, the shared parts and the page's
// own "content".
type pageTemplate struct{ t *template.Template }

// parsePages parses every page; now is the clock relative times are
// measured against.
func parsePages(now func() time.Time) (map[string]*pageTemplate, error) {
	funcs := templateFuncs(now)
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*pageTemplate{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" || base == "parts" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/parts.html", n)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", n, err)
		}
		out[base] = &pageTemplate{t: t}
	}
	return out, nil
}

// templateFuncs are the template functions. None returns template.HTML:
// every value a template prints is escaped.
func templateFuncs(now func() time.Time) template.FuncMap {
	return template.FuncMap{
		"stamp":     stamp,
		"ago":       func(ms int64) string { return ago(now(), ms) },
		"scope":     func(s memory.Scope) string { return s.String() },
		"pretty":    prettyJSON,
		"trunc":     trunc,
		"percent":   func(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" },
		"num":       func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) },
		"plural":    text.Plural,
		"bytes":     text.Bytes,
		"add":       func(a, b int) int { return a + b },
		"highlight": highlight,
		"first":     func(s string) string { r, _ := utf8.DecodeRuneInString(s); return strings.ToUpper(string(r)) },
		"join":      strings.Join,
		"path":      url.PathEscape,
		"list":      func(s ...string) []string { return s },
		"hasPrefix": strings.HasPrefix,
		"codelink":  codeLink,
		"gates":     func(g cairn.GateEvaluated) []cairn.Gate { return []cairn.Gate{g.GateA, g.GateB, g.GateC} },
		"timeMs":    func(t time.Time) int64 { return t.UnixMilli() },
		// modlink is the moderation page with its filters, and more
		// pairs ("private", "on").
		"modlink": func(status, kind, thought string, more ...string) string {
			return link("/moderation", append([]string{"status", status, "kind", kind, "thought", thought}, more...)...)
		},
	}
}

func stamp(ms int64) string {
	if ms == 0 {
		return "—"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04 UTC")
}

// ago says how long before now ms was ("3 days ago").
func ago(now time.Time, ms int64) string {
	if ms == 0 {
		return ""
	}
	d := now.Sub(time.UnixMilli(ms))
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		s = text.Plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		s = text.Plural(int(d/time.Hour), "hour")
	case d < 60*24*time.Hour:
		s = text.Plural(int(d/(24*time.Hour)), "day")
	case d < 730*24*time.Hour:
		s = text.Plural(int(d/(30*24*time.Hour)), "month")
	default:
		s = text.Plural(int(d/(365*24*time.Hour)), "year")
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// prettyJSON indents a JSON value for reading ("" for an empty object).
func prettyJSON(v any) string {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case memory.RawObject:
		raw = x
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		raw = b
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	if s := buf.String(); s != "{}" && s != "null" {
		return s
	}
	return ""
}

// trunc cuts s to at most n characters, marking the cut with "…".
func trunc(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRightFunc(string(r[:n]), unicode.IsSpace) + "…"
}

// segment is a run of text, a search term's occurrence or not.
type segment struct {
	Text string
	Hit  bool
}

// highlight splits text into runs, marking the words that begin with one
// of terms (ignoring case), so a template can show them; the runs are
// escaped like any other text.
func highlight(text string, terms []string) []segment {
	if len(terms) == 0 {
		return []segment{{Text: text}}
	}
	lower := make([]string, 0, len(terms))
	for _, t := range terms {
		if t = strings.ToLower(t); len(t) >= 2 {
			lower = append(lower, t)
		}
	}
	var out []segment
	start, plain := 0, 0
	flush := func(to int, hit bool) {
		if plain < start {
			out = append(out, segment{Text: text[plain:start]})
		}
		out = append(out, segment{Text: text[start:to], Hit: hit})
		plain = to
	}
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isWord(r) {
			i += n
			continue
		}
		start = i
		j := i
		for j < len(text) {
			r2, n2 := utf8.DecodeRuneInString(text[j:])
			if !isWord(r2) {
				break
			}
			j += n2
		}
		w := strings.ToLower(text[i:j])
		for _, t := range lower {
			if strings.HasPrefix(w, t) || (len(w) >= 4 && strings.HasPrefix(t, w)) {
				flush(j, true)
				break
			}
		}
		i = j
	}
	if plain < len(text) {
		out = append(out, segment{Text: text[plain:]})
	}
	return out
}

// pageData is what every page's template receives.
type pageData struct {
	Title string
	// Nav names the menu entry to mark as current.
	Nav  string
	CSRF string
	// Bare hides the menu (a visitor who has not signed in).
	Bare       bool
	SignOut    bool
	Moderation bool
	Version    string
	// Flash is a message about the action just done.
	Flash string
	// Here is the page's own path and query, for forms that come back.
	Here string
	Data any
}

// flashes are the messages an action may leave for the next page, by key:
// a page shows only these texts, never one taken from the URL.
var flashes = map[string]string{
	"pinned":    "Pinned. Retrieval in its scope now returns it ahead of every candidate.",
	"unpinned":  "Pin removed. The record itself is kept.",
	"forgotten": "Forgotten: the text was erased from the database and every index. The record's id and links remain.",
	"marked":    "Thought status changed.",
	"signedout": "Signed out.",
	"repaired":  "Checks run with repairs.",
	"moderated": "Candidates updated.",
	"finalized": "Removals finalized.",
}

// render writes a page, or an error page if its template fails.
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, name, title, nav string, data any) {
	t, ok := u.pages[name]
	if !ok {
		u.failStatus(w, r, http.StatusInternalServerError, "This page is missing from the binary.")
		return
	}
	v := visitorOf(r)
	pd := pageData{Title: title, Nav: nav, CSRF: v.csrf, Bare: !v.signedIn, SignOut: u.opts.TokenRequired && v.signedIn,
		Moderation: u.opts.Moderation != nil, Version: cairn.Version, Flash: flashes[r.URL.Query().Get("done")],
		Here: r.URL.RequestURI(), Data: data}
	var buf bytes.Buffer
	if err := t.t.ExecuteTemplate(&buf, "layout", pd); err != nil {
		u.opts.Logger.Error("rendering a page failed", "page", name, "err", err)
		if name != "error" {
			u.failStatus(w, r, http.StatusInternalServerError, "This page could not be drawn.")
		}
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// errorView is the error page's data.
type errorView struct {
	Status  int
	Code    string
	Message string
	// Back is where the page's link goes back to (default: search).
	Back string
}

// fail shows a typed error's caller-safe message with the status its code
// maps to; the cause is logged, never shown.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, err error) { u.failBack(w, r, err, "") }

// failBack is fail with a link back to the page the action came from.
func (u *UI) failBack(w http.ResponseWriter, r *http.Request, err error, back string) {
	pub := memory.Public(err)
	status := httpstatus.Of(pub.Code)
	if status >= 500 {
		u.opts.Logger.Error("page failed", "path", r.URL.Path, "err", memory.Detail(err))
	}
	if back != "" {
		back = safeNext(back)
	}
	u.render(w, r, status, "error", http.StatusText(status), "", errorView{Status: status, Code: string(pub.Code), Message: pub.Message, Back: back})
}

// failStatus shows a message with a status.
func (u *UI) failStatus(w http.ResponseWriter, r *http.Request, status int, msg string) {
	u.render(w, r, status, "error", http.StatusText(status), "", errorView{Status: status, Message: msg})
}

// done redirects after an action (POST, then GET) to path with a flash
// message key.
func done(w http.ResponseWriter, r *http.Request, path, flash string) {
	u, err := url.Parse(safeNext(path))
	if err != nil {
		u = &url.URL{Path: "/"}
	}
	q := u.Query()
	q.Set("done", flash)
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// link builds a path with a query from pairs of keys and values, leaving
// out empty values.
func link(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
