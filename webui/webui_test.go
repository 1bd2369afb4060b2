package webui_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
	"github.com/cairnhq/cairn/internal/uiseed"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
	"github.com/cairnhq/cairn/webui"
)

var ctx = context.Background()

// site is a server with the page over a seeded engine.
type site struct {
	// db is the database file.
	db     string
	srv    *httptest.Server
	eng    *cairn.Engine
	seeded uiseed.Seeded
	client *http.Client
}

type siteOptions struct {
	token string
	// moderate serves the moderation page over the engine; engine
	// changes the engine's options.
	moderate bool
	engine   func(*cairn.Options)
	errors   *webui.ErrorLog
}

func newSite(t *testing.T, o siteOptions) *site {
	t.Helper()
	dir := t.TempDir()
	opts := uiseed.Options(filepath.Join(dir, "archive"))
	if o.engine != nil {
		o.engine(opts)
	}
	db := filepath.Join(dir, "cairn.db")
	eng, err := cairn.Open(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	seeded, err := uiseed.Seed(ctx, eng, filepath.Join(dir, "repo"))
	if err != nil {
		t.Fatal(err)
	}
	var page http.Handler
	api := httpapi.New(eng, &httpapi.Options{Token: o.token, LoopbackOnly: true,
		Page: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { page.ServeHTTP(w, r) })})
	uo := &webui.Options{TokenRequired: api.TokenRequired(), CheckToken: api.CheckToken, Errors: o.errors, Now: func() time.Time { return uiseed.Now }}
	if o.moderate {
		uo.Moderation = eng
	}
	ui, err := webui.New(eng, uo)
	if err != nil {
		t.Fatal(err)
	}
	page = ui
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &site{db: db, srv: srv, eng: eng, seeded: seeded, client: client}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (s *site) do(t *testing.T, method, path string, form url.Values, header ...string) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return page{res.StatusCode, res.Header, string(b)}
}

func (s *site) get(t *testing.T, path string) page { t.Helper(); return s.do(t, "GET", path, nil) }

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads a page's CSRF token.
func csrf(t *testing.T, p page) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", p.body)
	}
	return m[1]
}

func wantStatus(t *testing.T, p page, status int) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d; want %d\n%.3000s", p.status, status, p.body)
	}
}

// Every page draws from a seeded store, with the security headers.
func TestPagesRender(t *testing.T) {
	s := newSite(t, siteOptions{})
	sd := s.seeded
	for _, tc := range []struct{ path, want string }{
		{"/", "What do you want to remember"},
		{"/search?q=why+does+checkout+say+session+expired&repo=github.com%2Facme%2Fshop", "Why this result"},
		{"/search?q=clock+skew&provider=local-fts&budget=200", "bm25"},
		// Each candidate's score bar is labelled: its parts by name, with
		// their shares, beside the bar and in each segment's title.
		{"/search?q=why+does+checkout+say+session+expired&repo=github.com%2Facme%2Fshop", `<li><span class="swatch p-lex"></span>Words `},
		{"/search?q=why+does+checkout+say+session+expired&repo=github.com%2Facme%2Fshop", `<title>Recency: `},
		// The tiers: the pin in the repository's scope with its reason,
		// the open capsule's summary in session s3's.
		{"/search?q=session+clock+skew+token+tests&repo=github.com%2Facme%2Fshop", `<p class="reason">Team decision on webhook idempotency</p>`},
		{"/search?q=invoice+background+job&session=s3", `<h2>Current summary`},
		{"/timeline", "Fix &#39;session expired&#39; errors at checkout"},
		{"/timeline?repo=github.com%2Facme%2Fshop&status=open", "Render invoice PDFs"},
		{"/capsules/cap_s1", "Observations"},
		{"/observations/" + sd.Observation, "Provenance"},
		{"/summaries/sum_s1", "evidence"},
		{"/thoughts", "Clock skew between auth"},
		{"/thoughts?origin=tool", "migrator role"},
		{"/thoughts?private=on&tag=team", "Alice prefers"},
		{"/thoughts/" + sd.Thought, "Mark for removal"},
		{"/graph", "auth-service"},
		{"/graph?prefix=pay", "payments"},
		{"/graph/" + sd.Entity, "Tokens expire when clocks drift"},
		{"/graph/" + sd.Entity + "?depth=2", "checkout"},
		{"/code", sd.Episode},
		{"/code/entities?repo=shop", "internal/auth/session.go::ValidateToken"},
		{"/code/entity?repo=shop&key=" + url.QueryEscape(sd.Key), "States"},
		{"/code/episodes/" + sd.Episode, "ValidateToken"},
		{"/code/episodes/" + sd.GatesEpisode, "Gate evaluations"},
		{"/health", "Retrieval index"},
		{"/health?doctor=1", "Every check passed"},
		{"/forget?kind=observation&id=" + sd.Observation, "will be erased"},
	} {
		p := s.get(t, tc.path)
		if p.status != http.StatusOK || !strings.Contains(p.body, tc.want) {
			t.Errorf("GET %s: %d, want 200 with %q\n%.2000s", tc.path, p.status, tc.want, p.body)
		}
		for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
			if p.header.Get(h) == "" {
				t.Errorf("GET %s: no %s header", tc.path, h)
			}
		}
		if csp := p.header.Get("Content-Security-Policy"); strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: CSP %q allows unsafe sources", tc.path, csp)
		}
		if strings.Contains(p.body, "style=") || strings.Contains(p.body, "<script>") {
			t.Errorf("GET %s: inline style or script would be refused by the CSP", tc.path)
		}
	}
	for _, a := range []struct{ path, ctype string }{{"/assets/style.css", "text/css"}, {"/assets/app.js", "javascript"}, {"/assets/cairn.svg", "image/svg+xml"}} {
		p := s.get(t, a.path)
		if p.status != 200 || !strings.Contains(p.header.Get("Content-Type"), a.ctype) {
			t.Errorf("GET %s: %d %s", a.path, p.status, p.header.Get("Content-Type"))
		}
	}
	// The tiers hold what they should: the pin (its record linked), the
	// session's running summary.
	tier := func(body, name string) string {
		m := regexp.MustCompile(`(?s)<h2>` + name + ` .*?</section>`).FindString(body)
		if m == "" {
			t.Errorf("no %s tier", name)
		}
		return m
	}
	p := s.get(t, "/search?q=session+clock+skew+token+tests&repo=github.com%2Facme%2Fshop")
	if pins := tier(p.body, "Pins"); !strings.Contains(pins, `href="/observations/obs_s2_09"`) || !strings.Contains(pins, "every webhook handler must be idempotent") {
		t.Errorf("the pins tier: %s", pins)
	}
	p = s.get(t, "/search?q=invoice+background+job&session=s3")
	if cur := tier(p.body, "Current summary"); !strings.Contains(cur, `<article class="card current">`) ||
		!strings.Contains(cur, "Running summary: <mark>invoice</mark> rendering") || !strings.Contains(cur, `href="/summaries/sum_`) {
		t.Errorf("the current summary tier: %s", cur)
	}
	if strings.Contains(p.body, "<h2>Pins ") {
		t.Error("a pins tier where no pin is in scope")
	}
	// The token budget cuts the candidates, and says so; pins stay.
	const cands = `class="card cand"`
	full := s.get(t, "/search?q=session+clock+skew+token+tests")
	cut := s.get(t, "/search?q=session+clock+skew+token+tests&budget=60")
	if n, m := strings.Count(full.body, cands), strings.Count(cut.body, cands); m == 0 || m >= n {
		t.Errorf("budget 60 shows %d candidates, no budget %d", m, n)
	}
	if strings.Contains(full.body, "cut to the token budget") || !strings.Contains(cut.body, "cut to the token budget") {
		t.Error("the page does not say when the budget cut the candidates")
	}
	if used := regexp.MustCompile(`<span>(\d+) tokens of 60</span>`).FindStringSubmatch(cut.body); used == nil || atoi(t, used[1]) > 60 {
		t.Errorf("the result bar under budget 60: %v", used)
	}
	if !strings.Contains(cut.body, "<h2>Pins ") {
		t.Error("the budget cut the pins")
	}
	// Past the first ten, a candidate's breakdown is one link away.
	p = s.get(t, "/search?q=session+clock+skew+token+tests")
	if !strings.Contains(p.body, "&amp;why=11#c11") || strings.Count(p.body, `<details class="why"`) != 10 {
		t.Errorf("breakdowns: %d inline\n%.500s", strings.Count(p.body, `<details class="why"`), p.body)
	}
	p = s.get(t, "/search?q=session+clock+skew+token+tests&why=11")
	if !strings.Contains(p.body, `<details class="why" open>`) || strings.Count(p.body, `<details class="why"`) != 11 {
		t.Errorf("why=11 does not open the 11th breakdown")
	}
	p = s.get(t, "/observations/obs_nope")
	if p.status != http.StatusNotFound || !strings.Contains(p.body, "not_found") {
		t.Errorf("unknown record: %d %.500s", p.status, p.body)
	}
	p = s.get(t, "/search?q=x&max=lots")
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "is not a whole number") {
		t.Errorf("bad number: %d %.500s", p.status, p.body)
	}
	p = s.get(t, "/search?q=x&max=5000")
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "out of range") {
		t.Errorf("out of range: %d %.500s", p.status, p.body)
	}
	if p = s.get(t, "/nowhere"); p.status != http.StatusNotFound {
		t.Errorf("unknown page: %d", p.status)
	}
	if p = s.do(t, "DELETE", "/timeline", nil); p.status != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d", p.status)
	}
}

// Memory text is untrusted: a stored <script> or event handler shows as
// text on every page that prints it, never as markup.
func TestStoredXSSIsEscaped(t *testing.T) {
	s := newSite(t, siteOptions{})
	sd := s.seeded
	pages := []string{
		"/search?q=customer+note+pasted",
		"/capsules/" + capsuleOf(t, s, sd.XSSObservation),
		"/observations/" + sd.XSSObservation,
		"/forget?kind=observation&id=" + sd.XSSObservation,
		"/thoughts",
		"/thoughts/" + sd.XSSThought,
		"/graph",
		"/graph/" + sd.XSSEntity,
		"/graph/" + sd.XSSEntity + "?depth=2",
	}
	for _, path := range pages {
		p := s.get(t, path)
		wantStatus(t, p, 200)
		if strings.Contains(p.body, "<script>document") || strings.Contains(p.body, "<img src=x") || strings.Contains(p.body, `onerror="document`) {
			t.Errorf("GET %s prints the stored markup unescaped", path)
		}
		if !strings.Contains(p.body, "&lt;script&gt;document.title=") && !strings.Contains(p.body, "&lt;script&gt;document.t…") && !strings.Contains(p.body, "&lt;script&gt;do") {
			t.Errorf("GET %s does not show the stored text", path)
		}
	}
	// In a query, the permalink and the form echo it escaped too.
	p := s.get(t, "/search?q="+url.QueryEscape(`"><script>alert(1)</script>`)+"&repo="+url.QueryEscape(`"><b>`))
	if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, `"><b>`) {
		t.Error("the query or a scope value is echoed unescaped")
	}
}

func capsuleOf(t *testing.T, s *site, obs string) string {
	t.Helper()
	pl, err := s.eng.Placement(ctx, obs)
	if err != nil || pl.CapsuleID == "" {
		t.Fatalf("placement of %s: %+v %v", obs, pl, err)
	}
	return pl.CapsuleID
}

// Every state-changing request needs the CSRF token of the visitor's
// cookie; without it, with another visitor's, or from another origin,
// nothing changes.
func TestCSRFRefusal(t *testing.T) {
	s := newSite(t, siteOptions{})
	obs := s.seeded.Observation
	recordPage := s.get(t, "/observations/"+obs)
	token := csrf(t, recordPage)
	pins := func() int {
		t.Helper()
		ps, err := s.eng.Pins(ctx, cairn.PinsRequest{TargetID: obs})
		if err != nil {
			t.Fatal(err)
		}
		return len(ps)
	}
	form := url.Values{"target": {obs}, "reason": {"root cause"}}
	for _, tc := range []struct {
		name   string
		form   url.Values
		header []string
		status int
	}{
		{"no token", form, nil, http.StatusForbidden},
		{"wrong token", with(form, "csrf", "AAAA"+token[4:]), nil, http.StatusForbidden},
		{"cross origin", with(form, "csrf", token), []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"cross site fetch", with(form, "csrf", token), []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
	} {
		p := s.do(t, "POST", "/pin", tc.form, tc.header...)
		if p.status != tc.status {
			t.Errorf("%s: %d; want %d", tc.name, p.status, tc.status)
		}
		if n := pins(); n != 0 {
			t.Fatalf("%s: a refused request pinned the record", tc.name)
		}
	}
	// Another visitor's token does not work with this visitor's cookie.
	other := newSiteClient(s)
	otherToken := csrf(t, other.get(t, "/observations/"+obs))
	if p := s.do(t, "POST", "/pin", with(form, "csrf", otherToken)); p.status != http.StatusForbidden {
		t.Errorf("another visitor's token: %d", p.status)
	}
	for _, path := range []string{"/forget", "/unpin", "/health/doctor", "/thoughts/" + s.seeded.Thought + "/mark", "/logout"} {
		if p := s.do(t, "POST", path, url.Values{"confirm": {"yes"}, "kind": {"observation"}, "id": {obs}}); p.status != http.StatusForbidden {
			t.Errorf("POST %s without a token: %d", path, p.status)
		}
	}
	if o, _ := s.eng.Observation(ctx, obs); o.Redacted {
		t.Fatal("a forget without a CSRF token erased the record")
	}
	p := s.do(t, "POST", "/pin", with(form, "csrf", token))
	if p.status != http.StatusSeeOther || pins() != 1 {
		t.Fatalf("with the token: %d, %d pins", p.status, pins())
	}
}

func newSiteClient(s *site) *site {
	jar, _ := cookiejar.New(nil)
	c := *s
	c.client = &http.Client{Jar: jar, CheckRedirect: s.client.CheckRedirect}
	return &c
}

func with(v url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// Pin, unpin, and forget with its confirmation: the flows change the
// store and say what they did.
func TestPinAndForget(t *testing.T) {
	s := newSite(t, siteOptions{})
	obs := s.seeded.Observation
	token := csrf(t, s.get(t, "/observations/"+obs))
	p := s.do(t, "POST", "/pin", url.Values{"csrf": {token}, "target": {obs}, "reason": {"the root cause"}, "ttl": {"7d"}})
	wantStatus(t, p, http.StatusSeeOther)
	loc := p.header.Get("Location")
	p = s.get(t, loc)
	if !strings.Contains(p.body, "Pinned.") || !strings.Contains(p.body, "the root cause") || !strings.Contains(p.body, "Unpin") {
		t.Fatalf("after pinning: %.3000s", p.body)
	}
	pins, _ := s.eng.Pins(ctx, cairn.PinsRequest{TargetID: obs})
	if len(pins) != 1 || pins[0].Pin.ExpiresAt == nil {
		t.Fatalf("pins %+v", pins)
	}
	if p = s.do(t, "POST", "/pin", url.Values{"csrf": {token}, "target": {obs}, "ttl": {"forever"}}); p.status != http.StatusBadRequest {
		t.Errorf("unknown ttl: %d", p.status)
	}
	p = s.do(t, "POST", "/unpin", url.Values{"csrf": {token}, "pin": {pins[0].Pin.ID}, "back": {"/observations/" + obs}})
	wantStatus(t, p, http.StatusSeeOther)
	if pins, _ = s.eng.Pins(ctx, cairn.PinsRequest{TargetID: obs}); len(pins) != 0 {
		t.Fatal("unpin left the pin")
	}
	if p = s.do(t, "POST", "/unpin", url.Values{"csrf": {token}, "pin": {"pin_nope"}}); p.status != http.StatusNotFound {
		t.Errorf("unknown pin: %d", p.status)
	}

	confirm := s.get(t, "/forget?kind=observation&id="+obs)
	if !strings.Contains(confirm.body, "Its text will be erased") || !strings.Contains(confirm.body, "cannot be undone") {
		t.Fatalf("confirmation page: %.3000s", confirm.body)
	}
	// Without the confirmation nothing is erased.
	p = s.do(t, "POST", "/forget", url.Values{"csrf": {token}, "kind": {"observation"}, "id": {obs}})
	wantStatus(t, p, http.StatusBadRequest)
	if o, _ := s.eng.Observation(ctx, obs); o.Redacted {
		t.Fatal("forgotten without confirmation")
	}
	p = s.do(t, "POST", "/forget", url.Values{"csrf": {csrf(t, confirm)}, "kind": {"observation"}, "id": {obs}, "confirm": {"yes"}})
	wantStatus(t, p, http.StatusSeeOther)
	o, _ := s.eng.Observation(ctx, obs)
	if !o.Redacted || o.Content != memory.RedactedContent {
		t.Fatalf("after forget: %+v", o)
	}
	p = s.get(t, p.header.Get("Location"))
	if !strings.Contains(p.body, "the text was erased") {
		t.Errorf("no word of the erasure: %.2000s", p.body)
	}
	// Thoughts: mark for removal, then forget.
	th := s.seeded.Thought
	p = s.do(t, "POST", "/thoughts/"+th+"/mark", url.Values{"csrf": {token}, "status": {"removal"}})
	wantStatus(t, p, http.StatusSeeOther)
	if got, _ := s.eng.Thought(ctx, th); got.Status != memory.StatusRemoval {
		t.Fatalf("thought status %s", got.Status)
	}
	p = s.do(t, "POST", "/forget", url.Values{"csrf": {token}, "kind": {"thought"}, "id": {th}, "confirm": {"yes"}})
	wantStatus(t, p, http.StatusSeeOther)
	if got, _ := s.eng.Thought(ctx, th); !got.Redacted {
		t.Fatal("thought not forgotten")
	}
	p = s.do(t, "POST", "/forget", url.Values{"csrf": {token}, "kind": {"entity"}, "id": {th}, "confirm": {"yes"}})
	wantStatus(t, p, http.StatusBadRequest)
}

// With a token the page asks for it; the session cookie is HttpOnly and
// SameSite=Strict; signing out ends it; the cookie grants nothing on the
// API.
func TestSignIn(t *testing.T) {
	const token = "s3cret-token-for-tests"
	s := newSite(t, siteOptions{token: token})
	p := s.get(t, "/timeline?repo=x")
	wantStatus(t, p, http.StatusSeeOther)
	if loc := p.header.Get("Location"); loc != "/login?next=%2Ftimeline%3Frepo%3Dx" {
		t.Fatalf("redirect to %q", loc)
	}
	login := s.get(t, "/login?next=%2Ftimeline%3Frepo%3Dx")
	wantStatus(t, login, 200)
	if strings.Contains(login.body, `href="/timeline"`) {
		t.Error("the sign-in page shows the menu")
	}
	if p = s.do(t, "POST", "/login", url.Values{"token": {token}, "next": {"/timeline"}}); p.status != http.StatusForbidden {
		t.Errorf("sign-in without CSRF: %d", p.status)
	}
	p = s.do(t, "POST", "/login", url.Values{"csrf": {csrf(t, login)}, "token": {"wrong"}, "next": {"/timeline"}})
	wantStatus(t, p, http.StatusUnauthorized)
	if p = s.do(t, "POST", "/pin", url.Values{"csrf": {csrf(t, login)}, "target": {s.seeded.Observation}}); p.status != http.StatusUnauthorized {
		t.Errorf("an action before sign-in: %d", p.status)
	}
	// Browsers drop tabs and line breaks from a URL, so "/\t/evil" is
	// "//evil", another site: every such next goes home instead.
	for _, next := range []string{"//evil.example/x", "/\t/evil.example/x", "/\n/evil.example/x", "/\r/evil.example/x", "/\x00/evil.example/x", "/\\evil.example/x"} {
		visitor := newSiteClient(s)
		form := visitor.get(t, "/login?next="+url.QueryEscape(next))
		if strings.Contains(form.body, "evil.example") {
			t.Errorf("the sign-in form carries next %q", next)
		}
		p = visitor.do(t, "POST", "/login", url.Values{"csrf": {csrf(t, form)}, "token": {token}, "next": {next}})
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.header.Get("Location"); loc != "/" {
			t.Errorf("sign-in with next %q sent the visitor to %q", next, loc)
		}
	}
	p = s.do(t, "POST", "/login", url.Values{"csrf": {csrf(t, login)}, "token": {token}, "next": {"/timeline"}})
	wantStatus(t, p, http.StatusSeeOther)
	if loc := p.header.Get("Location"); loc != "/timeline" {
		t.Errorf("sign-in sent the visitor to %q, not /timeline", loc)
	}
	var session *http.Cookie
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "cairn_session" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/" {
		t.Fatalf("session cookie %+v", session)
	}
	home := s.get(t, "/timeline")
	wantStatus(t, home, 200)
	if !strings.Contains(home.body, "Sign out") {
		t.Error("no sign-out button")
	}
	// The API still wants its bearer token.
	if p = s.get(t, "/v1/status"); p.status != http.StatusUnauthorized {
		t.Errorf("the page's cookie opened the API: %d", p.status)
	}
	p = s.do(t, "POST", "/logout", url.Values{"csrf": {csrf(t, home)}})
	wantStatus(t, p, http.StatusSeeOther)
	if p = s.get(t, "/timeline"); p.status != http.StatusSeeOther {
		t.Errorf("after sign-out: %d", p.status)
	}
	// Replaying the old session cookie after sign-out gets nothing.
	replay := newSiteClient(s)
	u, _ := url.Parse(s.srv.URL)
	replay.client.Jar.SetCookies(u, []*http.Cookie{{Name: "cairn_session", Value: session.Value}})
	if p = replay.get(t, "/timeline"); p.status != http.StatusSeeOther {
		t.Errorf("an ended session still works: %d", p.status)
	}
	// Wrong tokens are throttled.
	for i := range 12 {
		login = s.get(t, "/login")
		p = s.do(t, "POST", "/login", url.Values{"csrf": {csrf(t, login)}, "token": {"guess"}})
		if i >= 10 && p.status != http.StatusTooManyRequests {
			t.Fatalf("attempt %d: %d", i, p.status)
		}
	}
}

// A page asked for under a name other than localhost is refused (DNS
// rebinding), as the API is.
func TestHostCheck(t *testing.T) {
	s := newSite(t, siteOptions{})
	for _, host := range []string{"evil.example", "evil.example:80", "127.0.0.1.nip.io"} {
		if p := s.do(t, "GET", "/", nil, "Host", host); p.status != http.StatusForbidden {
			t.Errorf("Host %s: %d", host, p.status)
		}
	}
	if p := s.do(t, "GET", "/", nil, "Host", "localhost:4747"); p.status != http.StatusOK {
		t.Errorf("Host localhost: %d", p.status)
	}
}

// walkPages follows a list's "next" links from start and returns what re's
// first group matches on each page (each must appear on one page only)
// and how many pages there were.
func walkPages(t *testing.T, s *site, start string, re *regexp.Regexp) (map[string]bool, int) {
	t.Helper()
	seen := map[string]bool{}
	next, pages := start, 0
	for next != "" {
		p := s.get(t, next)
		wantStatus(t, p, 200)
		pages++
		for _, m := range re.FindAllStringSubmatch(p.body, -1) {
			if seen[m[1]] {
				t.Fatalf("%s on two pages (page %d: %s)", m[1], pages, next)
			}
			seen[m[1]] = true
		}
		next = ""
		if m := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(p.body); m != nil {
			next = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	return seen, pages
}

// Lists paginate: every capsule of the timeline, every thought and every
// observation of a capsule is reached once, page after page.
func TestPagination(t *testing.T) {
	s := newSite(t, siteOptions{})
	for i := range 120 {
		if _, err := s.eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{Intent: "bulk capsule " + itoa(i), ScopeIDs: memory.Scope{RepoID: "bulk"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.eng.Think(ctx, cairn.ThinkRequest{Content: "bulk thought " + itoa(i), ScopeIDs: memory.Scope{RepoID: "bulk"}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("timeline", func(t *testing.T) {
		seen, pages := walkPages(t, s, "/timeline?repo=bulk", regexp.MustCompile(`bulk capsule (\d+)`))
		if len(seen) != 120 || pages != 3 {
			t.Fatalf("%d capsules over %d pages", len(seen), pages)
		}
	})
	t.Run("thoughts", func(t *testing.T) {
		seen, pages := walkPages(t, s, "/thoughts?repo=bulk", regexp.MustCompile(`bulk thought (\d+)`))
		if len(seen) != 120 || pages != 3 {
			t.Fatalf("%d thoughts over %d pages", len(seen), pages)
		}
		// The second page's "newer" link leads back to the first.
		p := s.get(t, "/thoughts?repo=bulk")
		m := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(p.body)
		second := s.get(t, strings.ReplaceAll(m[1], "&amp;", "&"))
		if prev := regexp.MustCompile(`href="([^"]+)" rel="prev"`).FindStringSubmatch(second.body); prev == nil ||
			strings.ReplaceAll(prev[1], "&amp;", "&") != "/thoughts?repo=bulk" {
			t.Errorf("the second page leads back to %v", prev)
		}
	})
	t.Run("capsule observations", func(t *testing.T) {
		c, err := s.eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{Intent: "a long session", ScopeIDs: memory.Scope{SessionID: "long"}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 230 {
			if _, err := s.eng.Log(ctx, cairn.LogRequest{Kind: memory.KindMessage, Content: "bulk step " + itoa(i),
				ScopeIDs: memory.Scope{SessionID: "long"}}); err != nil {
				t.Fatal(err)
			}
		}
		seen, pages := walkPages(t, s, "/capsules/"+c.ID, regexp.MustCompile(`bulk step (\d+)`))
		if len(seen) != 230 || pages != 3 {
			t.Fatalf("%d observations over %d pages", len(seen), pages)
		}
		// In order, numbered by position.
		p := s.get(t, "/capsules/"+c.ID+"?from=100")
		if first := regexp.MustCompile(`bulk step (\d+)`).FindStringSubmatch(p.body); first == nil || first[1] != "100" {
			t.Errorf("the second page starts at %v", first)
		}
	})
}

// A repository's code entities are paged by key: all of them are
// reached, past the 10,000 one listing of the code_entities tool returns.
func TestCodeEntitiesPaging(t *testing.T) {
	s := newSite(t, siteOptions{})
	// Written through a second connection to the database, as another
	// process's index would: indexing this many functions takes long.
	st, err := sqlite.Open(s.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 10_050
	sum := sha256.Sum256([]byte("func F() {}"))
	art := memory.Artifact{Hash: hex.EncodeToString(sum[:]), Type: memory.ArtifactCode, Content: "func F() {}", CreatedAt: 1}
	change := memory.CodeChange{Artifacts: []memory.Artifact{art}}
	for i := range n {
		sym := fmt.Sprintf("F%05d", i)
		change.Entities = append(change.Entities, memory.CodeEntity{RepoID: "big", Key: "big.go::" + sym, Path: "big.go", Symbol: sym,
			Kind: "function", Language: "go", StartLine: i + 1, EndLine: i + 1, Method: "ast", State: memory.StateAuthoritative,
			ArtifactHash: art.Hash, UpdatedAt: 1})
	}
	if err := st.PutCodeRepo(ctx, memory.CodeRepo{ID: "big", Root: t.TempDir(), IndexedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyCode(ctx, change); err != nil {
		t.Fatal(err)
	}
	if tool, err := s.eng.CodeEntities(ctx, cairn.CodeEntitiesRequest{RepoID: "big", Limit: 10_000}); err != nil || len(tool.Entities) != 10_000 || tool.Total != n {
		t.Fatalf("the tool's listing: %d of %d, %v", len(tool.Entities), tool.Total, err)
	}
	first := s.get(t, "/code/entities?repo=big")
	wantStatus(t, first, 200)
	if !strings.Contains(first.body, "10050 entities") {
		t.Errorf("the first page does not count every entity:\n%.2000s", first.body)
	}
	seen, pages := walkPages(t, s, "/code/entities?repo=big", regexp.MustCompile(`<code>big\.go::F(\d{5})</code>`))
	if len(seen) != n || pages != (n+49)/50 {
		t.Fatalf("%d entities over %d pages; want %d over %d", len(seen), pages, n, (n+49)/50)
	}
	if !seen["10049"] {
		t.Error("the last entity was not reached")
	}
	if p := s.get(t, "/code"); !strings.Contains(p.body, "10050") {
		t.Errorf("the code page does not count big's entities:\n%.2000s", p.body)
	}
	// A forged cursor is refused; a filter keeps to its file.
	if p := s.get(t, "/code/entities?repo=big&after=bogus"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "invalid_params") {
		t.Errorf("a forged cursor: %d %.500s", p.status, p.body)
	}
	if p := s.get(t, "/code/entities?repo=big&path=other.go"); !strings.Contains(p.body, "0 entities in other.go") || strings.Contains(p.body, "big.go::") {
		t.Errorf("another file: %.1500s", p.body)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func slogNew(l *webui.ErrorLog) *slog.Logger { return slog.New(l.Handler(slog.DiscardHandler)) }

// "Run them and repair" on the health page repairs what the checks found
// and shows the result: a damaged retrieval index is rebuilt.
func TestDoctorRepair(t *testing.T) {
	s := newSite(t, siteOptions{})
	if _, err := s.eng.OptimizeIndex(ctx, true); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(s.db+"-index", "seg-*.cseg"))
	if len(segs) == 0 {
		t.Fatal("the retrieval index wrote no segment")
	}
	data, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{len(data) / 3, len(data) / 2, 2 * len(data) / 3} {
		data[at] ^= 0xff // inside its sections
	}
	if err := os.WriteFile(segs[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
	checks := s.get(t, "/health?doctor=1")
	wantStatus(t, checks, 200)
	if !strings.Contains(checks.body, "Some checks failed.") || strings.Contains(checks.body, "Repaired:") {
		t.Fatalf("the checks on a damaged index:\n%.4000s", checks.body)
	}
	p := s.do(t, "POST", "/health/doctor", url.Values{"csrf": {csrf(t, checks)}})
	wantStatus(t, p, 200)
	for _, want := range []string{"Every check passed after repairs.", "<li>Repaired: rebuilt the retrieval index</li>"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("after the repair the page lacks %q:\n%.4000s", want, p.body)
		}
	}
	// The repair is real: the checks pass on their own now.
	rep, err := s.eng.Doctor(ctx, cairn.DoctorRequest{})
	if err != nil || !rep.OK {
		t.Fatalf("doctor after the page's repair: %+v %v", rep, err)
	}
	if p = s.get(t, "/health?doctor=1"); !strings.Contains(p.body, "Every check passed.") {
		t.Errorf("the checks after the repair:\n%.4000s", p.body)
	}
}

// Without moderation the page neither shows nor serves it.
func TestModerationAbsent(t *testing.T) {
	s := newSite(t, siteOptions{})
	if p := s.get(t, "/"); strings.Contains(p.body, "/moderation") {
		t.Error("the menu offers moderation")
	}
	if p := s.get(t, "/moderation"); p.status != http.StatusNotFound {
		t.Errorf("/moderation: %d", p.status)
	}
}

// Recent warnings and errors are kept without their causes.
func TestErrorLog(t *testing.T) {
	l := webui.NewErrorLog(2)
	log := slogNew(l)
	log.Info("ignored")
	log.Warn("tool failed", "tool", "retrieve", "err", "SELECT secret FROM t")
	log.Error("page failed", "path", "/x", "detail", "dial tcp 10.0.0.1:11434")
	log.Error("third")
	got, total := l.Recent()
	if total != 3 || len(got) != 2 || got[0].Message != "third" || got[1].Message != "page failed" {
		t.Fatalf("%d %+v", total, got)
	}
	for _, e := range got {
		for _, a := range e.Attrs {
			if a.Key == "err" || a.Key == "detail" {
				t.Errorf("kept %s", a.Key)
			}
		}
	}
	s := newSite(t, siteOptions{errors: l})
	p := s.get(t, "/health")
	if !strings.Contains(p.body, "page failed") || strings.Contains(p.body, "10.0.0.1") {
		t.Errorf("health page errors: %.4000s", p.body)
	}
}
