package webui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cairnhq/cairn/internal/throttle"
)

// Cookie names. The session cookie exists only once a visitor signed in
// (servers with a token); the form cookie binds CSRF tokens for visitors
// without one (servers without a token, and the sign-in form). Keeping
// them apart means a page opened from another site, which arrives without
// either cookie (SameSite=Strict), never replaces a signed-in session.
const (
	sessionCookie = "cairn_session"
	formCookie    = "cairn_form"
)

// maxSessions bounds the signed-in sessions kept; past it the one that
// expires first is dropped.
const maxSessions = 1000

// sessions keeps signed-in sessions and makes CSRF tokens.
type sessions struct {
	key []byte
	ttl time.Duration
	now func() time.Time

	mu     sync.Mutex
	active map[string]time.Time // session id → expiry

	// failures throttles sign-in attempts: at most 10 wrong tokens a
	// minute from one client address, so a stranger guessing cannot lock
	// the user out from elsewhere.
	failures *throttle.Failures
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	key := make([]byte, 32)
	rand.Read(key)
	return &sessions{key: key, ttl: ttl, now: now, active: map[string]time.Time{}, failures: throttle.New(10, time.Minute, now)}
}

// newID returns a fresh random cookie value.
func newID() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// validID reports whether v looks like a value newID made.
func validID(v string) bool {
	if len(v) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil
}

// csrf is the CSRF token bound to a cookie value.
func (s *sessions) csrf(binding string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("csrf\x00" + binding))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF reports whether token is the one bound to binding.
func (s *sessions) checkCSRF(binding, token string) bool {
	if binding == "" || token == "" {
		return false
	}
	want := s.csrf(binding)
	return subtle.ConstantTimeCompare([]byte(want), []byte(token)) == 1
}

// signedIn reports whether id names a live session.
func (s *sessions) signedIn(id string) bool {
	if id == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.active[id]
	if ok && !s.now().Before(exp) {
		delete(s.active, id)
		return false
	}
	return ok
}

// start records a new session and returns its id.
func (s *sessions) start() string {
	id := newID()
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, exp := range s.active {
		if !now.Before(exp) {
			delete(s.active, k)
		}
	}
	if len(s.active) >= maxSessions {
		var oldest string
		var at time.Time
		for k, exp := range s.active {
			if oldest == "" || exp.Before(at) {
				oldest, at = k, exp
			}
		}
		delete(s.active, oldest)
	}
	s.active[id] = now.Add(s.ttl)
	return id
}

// end forgets a session.
func (s *sessions) end(id string) {
	s.mu.Lock()
	delete(s.active, id)
	s.mu.Unlock()
}

// cookieValue reads a cookie made by newID ("" when absent or malformed).
func cookieValue(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil || !validID(c.Value) {
		return ""
	}
	return c.Value
}

// setCookie writes an HttpOnly, SameSite=Strict cookie for the whole
// site (Secure when the request came over TLS). maxAge < 0 deletes it;
// 0 makes it last for the browser's session.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// safeNext returns a same-site path to go to after signing in, or "/".
// Browsers drop tabs and line breaks from a URL ("/\t/evil" is
// "//evil", another site) and read "\" as "/": a path with a control
// character or a backslash is refused whole.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsFunc(next, func(r rune) bool {
		return r == '\\' || r < 0x20 || r == 0x7f
	}) {
		return "/"
	}
	return next
}
