package webui

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

//go:embed templates/*.html assets/*
var files embed.FS

// Options configure the page. The zero value serves a page without sign-in
// (for a server on loopback without a token).
type Options struct {
	// TokenRequired makes visitors sign in with the server's token;
	// CheckToken compares what they typed with it in constant time (the
	// API's httpapi.API.CheckToken). Both or neither.
	TokenRequired bool
	CheckToken    func(string) bool
	// SessionTTL is how long a sign-in lasts (default 12 hours).
	SessionTTL time.Duration
	// Moderation, when set, adds the moderation page: the queue of staged
	// knowledge-graph candidates with their decisions and the blocklist,
	// and the removal queue of thoughts with its export, archives and
	// finalization. cairn serve and cairn ui pass the Engine. Unset, the
	// page neither shows nor serves them.
	Moderation Moderation
	// Errors, when set, is where the health page reads the process's
	// recent warnings and errors.
	Errors *ErrorLog
	// Logger receives failures of the page itself (never memory content).
	Logger *slog.Logger
	// Now is the clock the page shows times against (default time.Now).
	Now func() time.Time
	// RequestTimeout bounds one page's work (default 30 s).
	RequestTimeout time.Duration
}

// UI is the web page over an Engine. It is an http.Handler.
type UI struct {
	eng   *cairn.Engine
	opts  Options
	sess  *sessions
	mux   *http.ServeMux
	pages map[string]*pageTemplate
	asset http.Handler

	scopeCache scopeCache
}

// New returns the page over eng; its templates are parsed once here.
func New(eng *cairn.Engine, opts *Options) (*UI, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TokenRequired && o.CheckToken == nil {
		return nil, memory.Errorf(memory.CodeInvalidParams, "webui: a token is required but nothing checks it")
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 12 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	pages, err := parsePages(o.Now)
	if err != nil {
		return nil, memory.Wrap(memory.CodeInternal, err, "webui: parsing the page templates")
	}
	assets, _ := fs.Sub(files, "assets")
	u := &UI{eng: eng, opts: o, sess: newSessions(o.SessionTTL, o.Now), mux: http.NewServeMux(), pages: pages,
		asset: http.StripPrefix("/assets/", http.FileServerFS(assets))}
	u.routes()
	return u, nil
}

func (u *UI) routes() {
	m := u.mux
	m.HandleFunc("GET /{$}", u.search)
	m.HandleFunc("GET /search", u.search)
	m.HandleFunc("GET /timeline", u.timeline)
	m.HandleFunc("GET /capsules/{id}", u.capsule)
	m.HandleFunc("GET /observations/{id}", u.observation)
	m.HandleFunc("GET /summaries/{id}", u.summary)
	m.HandleFunc("GET /thoughts", u.thoughts)
	m.HandleFunc("GET /thoughts/{id}", u.thought)
	m.HandleFunc("GET /graph", u.entities)
	m.HandleFunc("GET /graph/{id}", u.entity)
	m.HandleFunc("GET /code", u.code)
	m.HandleFunc("GET /code/entities", u.codeEntities)
	m.HandleFunc("GET /code/entity", u.codeEntity)
	m.HandleFunc("GET /code/episodes/{id}", u.episode)
	m.HandleFunc("GET /health", u.health)
	m.HandleFunc("GET /forget", u.forgetConfirm)
	m.HandleFunc("POST /forget", u.forget)
	m.HandleFunc("POST /pin", u.pin)
	m.HandleFunc("POST /unpin", u.unpin)
	m.HandleFunc("POST /thoughts/{id}/mark", u.markThought)
	m.HandleFunc("POST /health/doctor", u.doctorFix)
	m.HandleFunc("GET /login", u.loginForm)
	m.HandleFunc("POST /login", u.login)
	m.HandleFunc("POST /logout", u.logout)
	if u.opts.Moderation != nil {
		m.HandleFunc("GET /moderation", u.moderation)
		m.HandleFunc("POST /moderation/candidates", u.moderateCandidates)
		m.HandleFunc("POST /moderation/unblock", u.unblock)
		m.HandleFunc("POST /moderation/removals/export", u.exportRemovals)
		m.HandleFunc("POST /moderation/removals/finalize", u.finalizeRemovals)
		m.HandleFunc("GET /moderation/archives/{name}", u.downloadArchive)
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		u.fail(w, r, memory.Errorf(memory.CodeNotFound, "there is no page %s", r.URL.Path))
	})
}

// contentSecurityPolicy allows the page's own script, style sheet and
// images only: no inline script or style, no other origin, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxFormBytes bounds a form post.
const maxFormBytes = 1 << 20

// visitor is who a request comes from.
type visitor struct {
	// binding is the cookie value CSRF tokens are bound to; signedIn says
	// the visitor may see pages (always, without a token).
	binding  string
	signedIn bool
	csrf     string
}

type visitorKey struct{}

func visitorOf(r *http.Request) visitor {
	v, _ := r.Context().Value(visitorKey{}).(visitor)
	return v
}

// ServeHTTP implements http.Handler: security headers, assets, the
// visitor's session, sign-in, CSRF, then the page.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin: queries in addresses never leave for other sites, and
	// the browser still sends this page's Origin with its forms.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if strings.HasPrefix(r.URL.Path, "/assets/") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		h.Set("Cache-Control", "no-cache")
		u.asset.ServeHTTP(w, r)
		return
	}
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
		h.Set("Allow", "GET, HEAD, POST")
		u.failStatus(w, r, http.StatusMethodNotAllowed, "This page answers GET and POST only.")
		return
	}
	var v visitor
	if u.opts.TokenRequired {
		if id := cookieValue(r, sessionCookie); u.sess.signedIn(id) {
			v.binding, v.signedIn = id, true
		}
	} else {
		v.signedIn = true
	}
	if v.binding == "" {
		v.binding = cookieValue(r, formCookie)
		if v.binding == "" && r.Method != http.MethodPost {
			v.binding = newID()
			setCookie(w, r, formCookie, v.binding, 0)
		}
	}
	v.csrf = u.sess.csrf(v.binding)
	r = r.WithContext(context.WithValue(r.Context(), visitorKey{}, v))
	public := r.URL.Path == "/login"
	if !v.signedIn && !public {
		if r.Method == http.MethodPost {
			u.failStatus(w, r, http.StatusUnauthorized, "Sign in first: this server asks for its token.")
			return
		}
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	if r.Method == http.MethodPost {
		if !sameOrigin(r) {
			u.failStatus(w, r, http.StatusForbidden, "Cross-origin request refused.")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			u.failStatus(w, r, http.StatusBadRequest, "The form could not be read.")
			return
		}
		if !u.sess.checkCSRF(v.binding, r.PostForm.Get("csrf")) {
			u.failStatus(w, r, http.StatusForbidden,
				"This form could not be verified (its CSRF token is missing or stale). Reload the page and try again.")
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), u.opts.RequestTimeout)
	defer cancel()
	u.mux.ServeHTTP(w, r.WithContext(ctx))
}

// sameOrigin reports whether a POST comes from this server's pages: by
// the browser's Sec-Fetch-Site when it sends one, else by its Origin when
// it sends one.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	ou, err := url.Parse(o)
	return err == nil && strings.EqualFold(ou.Host, r.Host)
}
