package code

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled on first use: the regex
// fallback's many patterns would otherwise cost every cairn process
// milliseconds at start, whether it reads code or not.
type lazyRegexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

func lazy(src string) *lazyRegexp { return &lazyRegexp{src: src} }

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

func (l *lazyRegexp) FindAll(b []byte, n int) [][]byte { return l.get().FindAll(b, n) }

func (l *lazyRegexp) FindAllSubmatch(b []byte, n int) [][][]byte {
	return l.get().FindAllSubmatch(b, n)
}

func (l *lazyRegexp) FindString(s string) string           { return l.get().FindString(s) }
func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }
func (l *lazyRegexp) FindSubmatch(b []byte) [][]byte       { return l.get().FindSubmatch(b) }
func (l *lazyRegexp) Match(b []byte) bool                  { return l.get().Match(b) }
func (l *lazyRegexp) MatchString(s string) bool            { return l.get().MatchString(s) }
