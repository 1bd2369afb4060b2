package e2e

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/uiseed"
)

var docsImg = flag.Bool("docs-img", false, "also write the web page's screenshots to docs/img (ui-*.png)")

// chromiumPath finds Debian's Chromium (or another Chrome).
func chromiumPath() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH")
}

// browser drives one headless Chromium tab against a cairn server.
type browser struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
	// committed counts the documents the tab's main frame committed, as
	// the browser reports them, url is the last one's address, and
	// awaited counts those a step waited for (see load).
	committed, awaited int
	url                string
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	path, err := chromiumPath()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install Chromium (apt-get install -y chromium): %v", err)
		}
		t.Skipf("needs Chromium for the browser tests (apt-get install -y chromium): %v", err)
	}
	shots := os.Getenv("CAIRN_E2E_ARTIFACTS")
	if shots == "" {
		shots = filepath.Join(os.TempDir(), "cairn-e2e-screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots go to %s", shots)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000))
	ctx, cancelTab := chromedp.NewContext(alloc)
	// A safety net for the whole session, far above what Chromium needs
	// on a loaded machine; each wait for an element has its own.
	ctx, cancelTime := context.WithTimeout(ctx, 3*stuck)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, base: base, shots: shots}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting Chromium: %v", err)
	}
	// Listen sees the events in the order they arrive, before the reply
	// to a command that follows them returns.
	err = chromedp.Listen(ctx, func(ev any) {
		if nav, ok := ev.(*page.EventFrameNavigated); ok && nav.Frame.ParentID == "" {
			b.mu.Lock()
			b.committed++
			b.url = nav.Frame.URL
			b.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("listening to Chromium: %v", err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// do runs steps that stay on the page: none may make the tab load
// another document (use navigate for those).
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.still()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// still fails the test when the tab has committed a document that no
// step waited for: a step before ran something that navigates (a click
// on a link, a choice that submits its form) with do instead of
// navigate or follow, and what comes next would race that navigation.
func (b *browser) still() {
	b.t.Helper()
	b.mu.Lock()
	committed, awaited, url := b.committed, b.awaited, b.url
	b.mu.Unlock()
	if committed != awaited {
		b.t.Fatalf("the tab went to %s with no step waiting for it: a step that navigates must use navigate or follow", url)
	}
}

// load runs what starts exactly one navigation of the tab, waits until
// the document it leads to has loaded, and returns that document's
// response.
func (b *browser) load(what string, run func(context.Context) (*network.Response, error)) *network.Response {
	b.t.Helper()
	b.still()
	b.mu.Lock()
	before := b.committed
	b.mu.Unlock()
	resp, err := run(b.ctx)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	// The document's commit came before its load event, so the listener
	// has counted it by now.
	b.mu.Lock()
	committed, url := b.committed, b.url
	b.awaited = committed
	b.mu.Unlock()
	if committed != before+1 {
		b.t.Fatalf("%s: the tab committed %d documents (the last %s), not one: another navigation was under way", what, committed-before, url)
	}
	return resp
}

// open loads one of cairn's pages and waits for its content.
func (b *browser) open(path string) {
	b.t.Helper()
	b.visit(b.base+path, "main")
}

// visit loads the page at url and waits until sel is visible on it.
func (b *browser) visit(url, sel string) {
	b.t.Helper()
	b.load("opening "+url, func(ctx context.Context) (*network.Response, error) {
		return chromedp.Run(ctx, chromedp.NavigateResponse(url))
	})
	b.do(chromedp.WaitVisible(chromedp.CSS(sel)))
}

// navigate runs a step that makes the page load another document (a
// click on a link or a submit button, a choice that submits its form)
// and waits until that document, not an earlier one, has loaded.
func (b *browser) navigate(what string, step chromedp.Action[chromedp.Void]) *network.Response {
	b.t.Helper()
	return b.load(what, func(ctx context.Context) (*network.Response, error) {
		return chromedp.RunResponse(ctx, step)
	})
}

// follow clicks what sel finds and waits for the page it leads to.
func (b *browser) follow(sel string) {
	b.t.Helper()
	b.navigate("following "+sel, chromedp.Click(chromedp.CSS(sel)))
	b.do(chromedp.WaitVisible(chromedp.CSS("main")))
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	b.still()
	ctx, cancel := context.WithTimeout(b.ctx, stuck)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		body, _ := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("body")))
		loc, _ := chromedp.Run(b.ctx, chromedp.Location())
		b.t.Fatalf("reading %s on %s: %v\n%s", sel, loc, err, body)
	}
	return s
}

func evalJS[T any](b *browser, expr string) T {
	b.t.Helper()
	b.still()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func (b *browser) wantText(sel, want string) {
	b.t.Helper()
	if got := b.text(sel); !strings.Contains(got, want) {
		b.t.Fatalf("%s reads %q; want %q in it", sel, got, want)
	}
}

// shot saves a screenshot of the whole page to the artifacts, and (with
// -docs-img) one of the window to docs/img: from the top, or from the
// element at (a CSS selector) when given.
func (b *browser) shot(name string, at ...string) {
	b.t.Helper()
	b.still()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	if *docsImg {
		scroll := `window.scrollTo(0, 0)`
		if len(at) > 0 {
			// Below the sticky menu.
			scroll = `window.scrollTo(0, document.querySelector(` + strconv.Quote(at[0]) + `).getBoundingClientRect().top + window.scrollY - 64)`
		}
		// No blinking caret in the picture.
		b.do(chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(); ` + scroll))
		top, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			b.t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join("..", "docs", "img", "ui-"+name+".png"), top, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// noPageErrors fails on an exception or a refusal by the page's
// Content-Security-Policy seen so far.
func (b *browser) noPageErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.console {
		s := m.String()
		if m.IsException() || strings.Contains(s, "Content Security Policy") || strings.Contains(s, "Refused to") {
			b.t.Errorf("the page logged: %s", s)
		}
	}
}

// seededDB writes the web page's fixture into a new database.
func seededDB(t *testing.T) (string, uiseed.Seeded) {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "cairn.db")
	eng, err := cairn.Open(db, uiseed.Options(filepath.Join(dir, "archive")))
	if err != nil {
		t.Fatal(err)
	}
	s, err := uiseed.Seed(context.Background(), eng, filepath.Join(dir, "repo"))
	if cerr := eng.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return db, s
}

// The web page in a real browser: every page loads against a seeded
// store, the main flows work (search and a score's explanation, a
// summary's evidence, pin, forget with its confirmation, marking a thought
// for removal and back, approving a candidate and rejecting one with the
// blocklist, exporting and finalizing the removal queue, a repository's
// entities and their filter, a hydration, sign-in), a stored <script>
// stays text, a request without the CSRF token or from another origin is
// refused, and nothing breaks the Content-Security-Policy. Screenshots of
// every page go to $CAIRN_E2E_ARTIFACTS (and to docs/img with -docs-img).
func TestWebPageInChromium(t *testing.T) {
	if _, err := chromiumPath(); err != nil && os.Getenv("CI") == "" {
		t.Skipf("needs Chromium for the browser tests (apt-get install -y chromium): %v", err)
	}
	db, sd := seededDB(t)
	now := uiseed.Now.Format(time.RFC3339)
	archives := filepath.Join(t.TempDir(), "archive")
	base, _ := serveArgs(t, []string{"--db", db, "--now", now, "serve", "--addr", "127.0.0.1:0"},
		"SURR_ARCHIVE_DIR="+archives, "SURR_RETENTION_DAYS=0")
	b := newBrowser(t, base)

	t.Run("search and explanation", func(t *testing.T) {
		b.t = t
		b.open("/search?q=why+does+checkout+say+session+expired&repo=github.com%2Facme%2Fshop")
		b.wantText(".resultbar", "provider hybrid")
		b.do(chromedp.Click(chromedp.CSS("#c1 details.why > summary")), chromedp.WaitVisible(chromedp.CSS("#c1 table.explain")))
		ex := b.text("#c1 table.explain")
		for _, want := range []string{"Words", "Meaning", "Recency", "Score = the shares' sum"} {
			if !strings.Contains(ex, want) {
				t.Errorf("the explanation lacks %q:\n%s", want, ex)
			}
		}
		if n := evalJS[int](b, `document.querySelectorAll("article.cand").length`); n < 5 {
			t.Errorf("%d candidates shown", n)
		}
		b.open("/search?q=why+does+checkout+say+session+expired")
		b.do(chromedp.Click(chromedp.CSS("#c1 details.why > summary")), chromedp.WaitVisible(chromedp.CSS("#c1 table.explain")))
		b.shot("search")
		// The permalink reproduces the search.
		b.open("/search?q=why+does+checkout+say+session+expired&repo=github.com%2Facme%2Fshop")
		href := evalJS[string](b, `document.querySelector("a.permalink").href`)
		b.visit(href, "#c1")
		b.wantText("#c1", "Checkout")
		b.open("/")
		b.shot("home")
	})

	t.Run("timeline and capsule", func(t *testing.T) {
		b.t = t
		b.open("/timeline")
		b.wantText("main", "Render invoice PDFs in a background job")
		b.shot("timeline")
		b.follow(`article.capsule a.title[href="/capsules/cap_s1"]`)
		b.wantText("ol.steps", "TestValidateToken_ClockSkew")
		b.shot("capsule")
		// The capsule's summary, with its provenance and evidence.
		b.follow(`a[href="/summaries/sum_s1"]`)
		b.wantText("h1", "sum_s1")
		b.wantText(".text.big", "came from clock skew between the auth service and the API servers")
		b.wantText("table.kv", "confidence\t90.0%")
		for _, ev := range []string{"obs_s1_04", "obs_s1_06", "obs_s1_09"} {
			if n := evalJS[int](b, `document.querySelectorAll('table.kv a[href="/observations/`+ev+`"]').length`); n != 1 {
				t.Errorf("the summary's evidence does not link %s", ev)
			}
		}
		b.wantText("aside", "Not pinned")
		b.shot("summary")
		b.follow(`table.kv a[href="/observations/obs_s1_06"]`)
		b.wantText("h1", "obs_s1_06")
	})

	t.Run("pin", func(t *testing.T) {
		b.t = t
		b.open("/observations/" + sd.Observation)
		b.wantText("aside", "Not pinned")
		b.do(chromedp.SendKeys(chromedp.CSS(`input[name="reason"]`), "the root cause of the expiry"))
		b.follow(`form[action="/pin"] button[type="submit"]`)
		b.wantText(".flash", "Pinned.")
		b.wantText("aside", "the root cause of the expiry")
		b.shot("record")
	})

	t.Run("forget with confirmation", func(t *testing.T) {
		b.t = t
		b.open("/observations/" + sd.Observation)
		b.follow(`a.button.danger`)
		b.wantText(".confirm", "Its text will be erased")
		b.wantText(".confirm", "cannot be undone")
		b.shot("forget")
		b.follow(`form[action="/forget"] button.danger`)
		b.wantText(".flash", "the text was erased")
		b.wantText(".text.big", "[redacted]")
	})

	t.Run("stored XSS stays text", func(t *testing.T) {
		b.t = t
		for _, path := range []string{"/observations/" + sd.XSSObservation, "/thoughts", "/thoughts/" + sd.XSSThought,
			"/graph/" + sd.XSSEntity, "/search?q=customer+pasted+note", "/moderation"} {
			b.open(path)
			if title := evalJS[string](b, `document.title`); title == "pwned" {
				t.Fatalf("%s ran the stored script", path)
			}
			if n := evalJS[int](b, `document.querySelectorAll('img[src="x"], script:not([src])').length`); n != 0 {
				t.Fatalf("%s has %d injected elements", path, n)
			}
			if !strings.Contains(b.text("main"), `<script>document.title="pwned"</script>`) && !strings.Contains(b.text("main"), "<script>document.titl") {
				t.Fatalf("%s does not show the stored text as text", path)
			}
		}
		b.open("/observations/" + sd.XSSObservation)
		b.shot("xss")
	})

	t.Run("CSRF refusal", func(t *testing.T) {
		b.t = t
		b.open("/observations/obs_s1_00")
		// A post from the page's own origin without the token.
		status := evalJS[int](b, `fetch("/pin", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"},
			body: "target=obs_s1_00&reason=forged"}).then(r => r.status)`)
		if status != http.StatusForbidden {
			t.Errorf("a post without the CSRF token: %d", status)
		}
		// A form on another origin that knows a valid token still fails:
		// the browser says where it comes from.
		token := evalJS[string](b, `document.querySelector('input[name="csrf"]').value`)
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/pin"><input name="csrf" value="%s"><input name="target" value="obs_s1_00"><input name="reason" value="forged"><button id="go">Win a prize</button></form>`, base, token)
		}))
		defer evil.Close()
		b.visit(evil.URL, "#go")
		if resp := b.navigate("posting the other origin's form", chromedp.Click(chromedp.CSS("#go"))); resp.Status != http.StatusForbidden {
			t.Errorf("the cross-origin post: %d", resp.Status)
		}
		if body := b.text("body"); !strings.Contains(body, "cross-origin request refused") {
			t.Errorf("the cross-origin post got: %q", body)
		}
		b.open("/observations/obs_s1_00")
		b.wantText("aside", "Not pinned")
	})

	t.Run("thoughts and graph", func(t *testing.T) {
		b.t = t
		b.open("/thoughts")
		b.wantText("main", "Clock skew between auth")
		b.shot("thoughts")
		// A thought's page: its text, provenance and status.
		b.follow(`article.thought a.id[href="/thoughts/` + sd.Thought + `"]`)
		b.wantText(".text.big", "Clock skew between auth and the API servers breaks fresh tokens")
		kv := b.text("table.kv")
		for _, want := range []string{"human", "#auth", "#incident", "active", "shared", "0.9"} {
			if !strings.Contains(kv, want) {
				t.Errorf("the thought's provenance lacks %q:\n%s", want, kv)
			}
		}
		b.shot("thought")
		// Marking it for removal, then making it active again.
		b.follow(`form[action="/thoughts/` + sd.Thought + `/mark"] button[type="submit"]`)
		b.wantText("table.kv", "marked for removal")
		b.follow(`form[action="/thoughts/` + sd.Thought + `/mark"] button[type="submit"]`)
		b.wantText("aside", "Mark for removal")
		if kv := b.text("table.kv"); strings.Contains(kv, "marked for removal") {
			t.Errorf("the thought is still marked: %s", kv)
		}
		b.open("/graph")
		b.shot("entities")
		b.open("/graph/" + sd.Entity + "?depth=2")
		if n := evalJS[int](b, `document.querySelectorAll("svg.graph a.node").length`); n < 6 {
			t.Errorf("the graph draws %d entities", n)
		}
		b.wantText("ul.facts", "Tokens expire when clocks drift")
		b.shot("graph")
		b.follow(`svg.graph a.node.ring1[href] `)
		b.wantText("main", "Neighbourhood")
	})

	t.Run("reject with the blocklist", func(t *testing.T) {
		b.t = t
		b.open("/moderation")
		b.do(chromedp.Click(chromedp.CSS(`input[name="id"][value="` + sd.XSSCandidate + `"]`)))
		b.follow(`button[value="blocklist"]`)
		b.wantText(".flash", "Rejected 1 candidate; 1 blocklisted: never staged again.")
		b.wantText("#blocklist", strings.ToLower(uiseed.XSSName))
		if title := evalJS[string](b, `document.title`); title == "pwned" {
			t.Fatal("the blocklisted name ran as a script")
		}
		if n := evalJS[int](b, `document.querySelectorAll('input[name="id"][value="`+sd.XSSCandidate+`"]').length`); n != 0 {
			t.Error("the rejected candidate is still offered")
		}
		b.open("/moderation?status=rejected")
		b.wantText("#candidates", uiseed.XSSName)
		b.wantText("#candidates", "rejected")
		// Unblocking takes it off the list.
		b.open("/moderation")
		b.follow(`#blocklist form[action="/moderation/unblock"] button`)
		b.wantText(".flash", "Removed from the blocklist")
		if n := evalJS[int](b, `document.querySelectorAll("#blocklist").length`); n != 0 {
			t.Error("the blocklist is still shown")
		}
	})

	t.Run("approve a candidate", func(t *testing.T) {
		b.t = t
		b.open("/moderation")
		b.wantText("#candidates", "checkout-api")
		b.wantText("#candidates", "The checkout-api uses Redis for carts")
		b.wantText("#removals", "not exported yet")
		// Its source thought is one click away.
		b.follow(`tr[id="` + sd.Candidates["checkout-api"] + `"] a[href="/thoughts/` + sd.CandidateThought + `"]`)
		b.wantText(".text.big", "Bob maintains checkout-api")
		b.open("/moderation")
		for _, key := range []string{"checkout-api", "redis", "checkout-api -> uses -> redis"} {
			b.do(chromedp.Click(chromedp.CSS(`input[name="id"][value="` + sd.Candidates[key] + `"]`)))
		}
		b.do(chromedp.SendKeys(chromedp.CSS(`input[name="feedback"]`), "confirmed by Bob"))
		b.shot("moderation")
		b.follow(`button[value="approve"]`)
		b.wantText(".flash", "Approved 3 candidates into the knowledge graph (2 new entities created).")
		if n := evalJS[int](b, `document.querySelectorAll('input[name="id"][value="`+sd.Candidates["redis"]+`"]').length`); n != 0 {
			t.Error("an approved candidate is still offered")
		}
		// The graph has them now.
		b.open("/graph?prefix=checkout-api")
		b.follow(`main a[href^="/graph/ent_"]`)
		b.wantText("h1", "checkout-api")
		b.wantText("main", "uses")
		b.wantText("main", "Redis")
		// The approved list links to it.
		b.open("/moderation?status=approved")
		b.wantText("#candidates", "confirmed by Bob")
		b.follow(`tr[id="` + sd.Candidates["checkout-api"] + `"] a[href^="/graph/"]`)
		b.wantText("h1", "checkout-api")
	})

	t.Run("export and finalize the removal queue", func(t *testing.T) {
		b.t = t
		b.open("/moderation#removals")
		b.wantText(`tr[id="rm-`+sd.MarkedThought+`"]`, "not exported yet")
		b.do(chromedp.SetValue(chromedp.CSS(`select[name="format"]`), "jsonl"))
		b.follow(`form[action="/moderation/removals/export"] button`)
		b.wantText(".flash", "Exported 1 thought to a new archive.")
		b.wantText(`tr[id="rm-`+sd.MarkedThought+`"]`, "can be finalized")
		b.wantText("#archives", ".jsonl")
		b.shot("moderation-removals", "#removals")
		// Without the confirmation the browser does not send the form.
		b.do(chromedp.Click(chromedp.CSS(`input[name="id"][value="` + sd.MarkedThought + `"]`)))
		if valid := evalJS[bool](b, `document.querySelector('form[action="/moderation/removals/finalize"]').checkValidity()`); valid {
			t.Error("the finalize form is valid without the confirmation")
		}
		b.do(chromedp.Click(chromedp.CSS(`input[name="confirm"]`)))
		b.follow(`button[value="selected"]`)
		b.wantText(".flash", "Finalized 1 thought")
		b.wantText("#removals", "No thought is marked for removal.")
		b.open("/thoughts/" + sd.MarkedThought)
		b.wantText(".errorbox", "not_found")
	})

	t.Run("code memory and a hydration", func(t *testing.T) {
		b.t = t
		b.open("/code")
		b.shot("code")
		// A repository's entities, and one of them.
		b.follow(`a[href^="/code/entities?repo=shop"]`)
		b.wantText("h1", "shop")
		b.wantText(".pagehead", "entities")
		b.wantText("table.list", "internal/auth/session.go::ValidateToken")
		if n := evalJS[int](b, `document.querySelectorAll("table.list tbody tr").length`); n < 3 {
			t.Errorf("the repository lists %d entities", n)
		}
		b.shot("code-entities")
		// The button applies the filters.
		b.do(chromedp.SendKeys(chromedp.CSS(`input[name="path"]`), "internal/auth/session.go"))
		b.follow(`form.filters button[type="submit"]`)
		b.wantText(".pagehead", "in internal/auth/session.go")
		b.wantText("table.list", "internal/auth/session.go::ValidateToken")
		if n := evalJS[int](b, `[...document.querySelectorAll("table.list tbody tr code")].filter(c => !c.textContent.startsWith("internal/auth/session.go::")).length`); n != 0 {
			t.Errorf("%d entities of other files listed", n)
		}
		// Choosing a state applies it at once: the page's script submits
		// the form, so the choice is a navigation to wait for.
		b.navigate("choosing the state TOMBSTONED", chromedp.SetValue(chromedp.CSS(`select[name="state"]`), "TOMBSTONED"))
		b.do(chromedp.WaitVisible(chromedp.CSS("main")))
		if n := evalJS[int](b, `document.querySelectorAll("table.list tbody tr").length`); n != 0 {
			t.Errorf("%d tombstoned entities listed", n)
		}
		b.wantText(".pagehead", "in internal/auth/session.go in state TOMBSTONED")
		b.open("/code")
		b.follow(`a[href="/code/episodes/` + sd.Episode + `"]`)
		b.wantText("table.hydration", "ValidateToken")
		b.wantText("table.hydration", "query mention")
		b.shot("hydration")
		b.open("/code/episodes/" + sd.GatesEpisode)
		b.wantText("table.gates", "AUTHORITATIVE")
		b.wantText("table.gates", "REJECTED")
		b.shot("gates")
		b.follow(`table.gates a[href*="ValidateToken"]`)
		b.wantText("main", "States")
		b.shot("code-entity")
	})

	t.Run("health", func(t *testing.T) {
		b.t = t
		b.open("/health?doctor=1")
		b.wantText("#doctor", "Every check passed")
		b.shot("health")
		if n := evalJS[int](b, `document.querySelectorAll('header nav a[href="/moderation"]').length`); n != 1 {
			t.Error("the menu does not offer moderation")
		}
	})
	b.t = t
	b.noPageErrors()

	t.Run("sign in", func(t *testing.T) {
		db2, _ := seededDB(t)
		base2, _ := serveArgs(t, []string{"--db", db2, "--now", now, "serve", "--addr", "127.0.0.1:0"}, "CAIRN_TOKEN=e2e-token-0123456789")
		b2 := newBrowser(t, base2)
		b2.open("/timeline")
		b2.do(chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)))
		b2.shot("login")
		b2.do(chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), "wrong"))
		b2.follow(`form[action="/login"] button`)
		b2.wantText(".problem", "not this server's token")
		b2.do(chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), "e2e-token-0123456789"))
		b2.follow(`form[action="/login"] button`)
		b2.wantText("h1", "Timeline")
		cookies, err := chromedp.Call(b2.ctx, network.GetCookies, network.GetCookiesParams{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range cookies.Cookies {
			if c.Name == "cairn_session" {
				found = true
				if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict {
					t.Errorf("session cookie %+v", c)
				}
			}
		}
		if !found {
			t.Fatal("no session cookie")
		}
		if js := evalJS[string](b2, `document.cookie`); strings.Contains(js, "cairn_session") {
			t.Error("scripts can read the session cookie")
		}
		b2.noPageErrors()
	})
}
