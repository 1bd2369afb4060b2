// Package uiseed fills a database with a small memory of every kind for
// the web page's tests and screenshots: the bundled sample sessions, a
// capsule holding a stored-XSS attempt, thoughts of every origin, a
// knowledge graph with candidates staged by inner_voice for moderation, a
// thought marked for removal, and code memory with a hydration and gate
// evaluations.
package uiseed

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/sample"
	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// XSS is the text of the hostile records: if a page ran it, the page's
// title would change.
const XSS = `<script>document.title="pwned"</script><img src=x onerror="document.title='pwned'">`

// XSSMarkup is hostile markup a thought quotes as code: the extractor
// stages no name from it, but the candidate named XSSName quotes the
// sentence that holds it.
const XSSMarkup = `<script>document.title="pwned"</script>`

// XSSName is the entity candidate staged from the sentence quoting
// XSSMarkup.
const XSSName = "Mallory"

// Seeded names what Seed wrote.
type Seeded struct {
	// Candidates are the staged candidates' ids by key (an entity's name
	// in lower case, "source -> relation -> target" for an edge);
	// CandidateThought is the thought checkout-api, Redis and Bob were
	// staged from; XSSCandidate is the entity candidate named XSSName (its
	// sentence quotes XSSMarkup).
	Candidates                     map[string]string
	CandidateThought, XSSCandidate string
	// MarkedThought is the thought marked for removal.
	MarkedThought string
	// XSSObservation and XSSThought hold XSS; XSSEntity is named with it.
	XSSObservation, XSSThought, XSSEntity string
	// Observation is an observation of the sample to pin and forget.
	Observation string
	// Thought is an ordinary thought; Entity the graph's best connected
	// entity (auth-service).
	Thought, Entity string
	// Repo, Key, Episode and GatesEpisode are code memory's repository,
	// an entity key, the episode that hydrated it and the one that
	// evaluated gates.
	Repo, Key, Episode, GatesEpisode string
}

// Clock returns a clock that starts at start and moves on by step at
// every reading, so records written one after the other have distinct,
// plausible times.
func Clock(start time.Time, step time.Duration) func() time.Time {
	t := start
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

// Start is where a seeding clock starts: two days before the sample's
// "now".
var Start = time.UnixMilli(sample.Now).Add(-48 * time.Hour).UTC()

// Now is the clock reading pages are shown against.
var Now = time.UnixMilli(sample.Now).UTC()

// Options are the options of an engine Seed writes with: a clock from
// Start, the inner voice on (Seed stages candidates with inner_voice),
// and the removal lifecycle's archives in archiveDir (kept 30 days).
func Options(archiveDir string) *cairn.Options {
	iv := retrieve.DefaultInnerVoiceConfig()
	iv.Enabled = true
	return &cairn.Options{Now: Clock(Start, time.Minute), InnerVoice: &iv,
		Maintenance: &maintain.Config{RetentionDays: maintain.DefaultRetentionDays, ArchiveDir: archiveDir, Format: maintain.FormatParquet}}
}

// Seed writes the memory into eng; repoDir receives a small Go
// repository for code memory.
func Seed(ctx context.Context, eng *cairn.Engine, repoDir string) (Seeded, error) {
	var s Seeded
	if _, err := eng.Import(ctx, bytes.NewReader(sample.AgentSessions), cairn.ImportOptions{}); err != nil {
		return s, fmt.Errorf("importing the sample: %w", err)
	}
	s.Observation = "obs_s1_05"
	for _, step := range []func(context.Context, *cairn.Engine, *Seeded) error{
		seedCapsule,
		// Older than the other thoughts: the thoughts page opens on those.
		thinkArchitecture,
		seedThoughts,
		seedGraph,
		stage,
		func(ctx context.Context, eng *cairn.Engine, s *Seeded) error { return seedCode(ctx, eng, s, repoDir) },
	} {
		if err := step(ctx, eng, &s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// seedCapsule opens a capsule in session s3 with a few records, one of
// them hostile, and its running summary.
func seedCapsule(ctx context.Context, eng *cairn.Engine, s *Seeded) error {
	scope := memory.Scope{SessionID: "s3", RepoID: "github.com/acme/shop", AgentID: "claude-code"}
	c, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{ScopeIDs: scope, Intent: "Render invoice PDFs in a background job"})
	if err != nil {
		return err
	}
	for _, l := range []cairn.LogRequest{
		{Kind: memory.KindMessage, Content: "user: Invoice PDFs time out for large orders; move rendering to a background job."},
		{Kind: memory.KindToolCall, Content: "grep -rn RenderInvoice internal/ -> internal/billing/invoice.go:41 renders synchronously in the request"},
		{Kind: memory.KindMessage, Content: "user pasted a customer's note: " + XSS},
		{Kind: memory.KindCommand, Content: "go test ./internal/billing/... -> ok (9 tests)"},
	} {
		l.ScopeIDs = scope
		o, err := eng.Log(ctx, l)
		if err != nil {
			return err
		}
		if l.Content[:4] == "user" && s.XSSObservation == "" && bytes.Contains([]byte(l.Content), []byte("<script>")) {
			s.XSSObservation = o.ID
		}
	}
	if _, err := eng.SetSummary(ctx, cairn.SummaryRequest{CapsuleID: c.ID, SummaryInput: cairn.SummaryInput{
		Content: "Running summary: invoice rendering moves to a background job; tests pass.", Confidence: ptr(0.7)}}); err != nil {
		return err
	}
	return nil
}

// seedThoughts writes thoughts of every origin (one private, one hostile,
// one marked for removal).
func seedThoughts(ctx context.Context, eng *cairn.Engine, s *Seeded) error {
	for _, t := range []cairn.ThinkRequest{
		{Content: "Clock skew between auth and the API servers breaks fresh tokens; a 5 s leeway fixes it.", Origin: memory.OriginHuman, Tags: []string{"auth", "incident"}, Significance: ptr(0.9), ScopeIDs: memory.Scope{RepoID: "github.com/acme/shop"}},
		{Content: "Webhook handlers must be idempotent, keyed by the provider's event id.", Origin: memory.OriginModel, Tags: []string{"payments", "decision"}, ScopeIDs: memory.Scope{RepoID: "github.com/acme/shop"}},
		{Content: "The migrator role owns schema changes; the app role cannot ALTER tables.", Origin: memory.OriginTool, Tags: []string{"database"}},
		{Content: "Alice prefers reviews in the morning (private note).", Origin: memory.OriginHuman, IsPrivate: true, Tags: []string{"team"}},
		{Content: "A quoted page said: " + XSS, Origin: memory.OriginLogged, Tags: []string{"untrusted"}},
		{Content: "Old idea: cache tokens for an hour. Superseded by the leeway fix.", Origin: memory.OriginModel, Tags: []string{"auth"}},
	} {
		th, err := eng.Think(ctx, t)
		if err != nil {
			return err
		}
		switch {
		case s.Thought == "":
			s.Thought = th.ID
		case t.Origin == memory.OriginLogged:
			s.XSSThought = th.ID
		case t.Content[:8] == "Old idea":
			s.MarkedThought = th.ID
			if _, err := eng.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: th.ID, Status: memory.StatusRemoval}); err != nil {
				return err
			}
		}
	}
	return nil
}

// seedGraph writes the knowledge graph: entities (one hostile), their
// observations and edges.
func seedGraph(ctx context.Context, eng *cairn.Engine, s *Seeded) error {
	ents := map[string]string{}
	for _, e := range [][2]string{{"auth-service", "service"}, {"api-gateway", "service"}, {"ntp", "daemon"}, {"payments", "service"},
		{"postgres", "database"}, {"alice", "person"}, {"checkout", "service"}, {XSS, "person"}} {
		ent, err := eng.CreateEntity(ctx, cairn.EntityRequest{Name: e[0], Type: e[1], ScopeIDs: memory.Scope{RepoID: "github.com/acme/shop"}})
		if err != nil {
			return err
		}
		ents[e[0]] = ent.ID
	}
	s.Entity, s.XSSEntity = ents["auth-service"], ents[XSS]
	for _, f := range [][2]string{
		{"auth-service", "Tokens expire when clocks drift by more than 5 s."},
		{"auth-service", "Issues tokens for the web shop and the mobile app."},
		{"payments", "Retries webhooks up to 5 times with backoff."},
		{"postgres", "Schema changes run as the migrator role."},
	} {
		if _, err := eng.Observe(ctx, cairn.ObserveRequest{EntityID: ents[f[0]], Content: f[1]}); err != nil {
			return err
		}
	}
	for _, e := range [][3]string{
		{"api-gateway", "calls", "auth-service"}, {"auth-service", "depends_on", "ntp"}, {"auth-service", "stores_in", "postgres"},
		{"checkout", "calls", "api-gateway"}, {"checkout", "calls", "payments"}, {"payments", "stores_in", "postgres"},
		{"alice", "owns", "auth-service"}, {XSS, "edits", "checkout"},
	} {
		if _, err := eng.CreateEdge(ctx, cairn.EdgeRequest{Source: ents[e[0]], Relation: e[1], Target: ents[e[2]]}); err != nil {
			return err
		}
	}
	return nil
}

// seedCode writes a repository in repoDir, indexes it, hydrates an
// episode and proposes a fix that passes the gates (and one the disk does
// not hold).
func seedCode(ctx context.Context, eng *cairn.Engine, s *Seeded, repoDir string) error {
	if err := writeRepo(repoDir); err != nil {
		return err
	}
	s.Repo = "shop"
	if _, err := eng.IndexCode(ctx, cairn.CodeIndexRequest{Root: repoDir, RepoID: s.Repo}, nil); err != nil {
		return err
	}
	s.Episode, s.GatesEpisode = "ep-checkout-1", "ep-checkout-2"
	s.Key = "internal/auth/session.go::ValidateToken"
	if _, err := eng.Hydrate(ctx, cairn.CodeHydrateRequest{Query: "why does ValidateToken in session.go reject fresh tokens?",
		EpisodeID: s.Episode, SessionID: "s1", RepoID: s.Repo}); err != nil {
		return err
	}
	// The fix, written to disk and proposed: gates A, B and C pass. A
	// proposal the disk does not hold fails gate C.
	fixed := "// ValidateToken accepts tokens issued up to leeway ahead of now.\nfunc ValidateToken(issuedAt, now time.Time) error {\n\tif issuedAt.After(now.Add(leeway)) {\n\t\treturn ErrSessionExpired\n\t}\n\treturn nil\n}"
	src, err := os.ReadFile(filepath.Join(repoDir, "internal/auth/session.go"))
	if err != nil {
		return err
	}
	old := "// ValidateToken rejects tokens issued in the future.\nfunc ValidateToken(issuedAt, now time.Time) error {\n\tif issuedAt.After(now) {\n\t\treturn ErrSessionExpired\n\t}\n\treturn nil\n}"
	if !bytes.Contains(src, []byte(old)) {
		return fmt.Errorf("session.go does not hold ValidateToken as written")
	}
	if err := os.WriteFile(filepath.Join(repoDir, "internal/auth/session.go"), bytes.Replace(src, []byte(old), []byte(fixed), 1), 0o644); err != nil {
		return err
	}
	for _, p := range []cairn.CodeProposeRequest{
		{EntityKey: s.Key, Content: fixed},
		{EntityKey: "internal/billing/invoice.go::RenderInvoice", Content: "// RenderInvoice queues an invoice for rendering.\nfunc RenderInvoice(inv Invoice) ([]byte, error) {\n\treturn nil, queue(inv)\n}"},
	} {
		p.EpisodeID, p.SessionID, p.RepoID = s.GatesEpisode, "s1", s.Repo
		if _, err := eng.ProposeCode(ctx, p); err != nil {
			return err
		}
	}
	if _, err := eng.PromoteCode(ctx, cairn.CodePromoteRequest{EpisodeID: s.GatesEpisode, SessionID: "s1", RepoID: s.Repo, Approval: "approved"}); err != nil {
		return err
	}
	return nil
}

func ptr(f float64) *float64 { return &f }

// thinkArchitecture writes thoughts about the shop's architecture, which
// stage reads.
func thinkArchitecture(ctx context.Context, eng *cairn.Engine, s *Seeded) error {
	repo := memory.Scope{RepoID: "github.com/acme/shop"}
	for _, t := range []cairn.ThinkRequest{
		{Content: "A pasted deploy log from " + XSSName + " ran `" + XSSMarkup + "` before the release.", Origin: memory.OriginLogged},
		{Content: "Invoice rendering moved to a background job: the invoice-worker reads from RabbitMQ and writes to Postgres.", Origin: memory.OriginModel},
		{Content: "The checkout-api uses Redis for carts; Bob maintains checkout-api.", Origin: memory.OriginModel},
	} {
		t.Tags, t.ScopeIDs = []string{"architecture"}, repo
		th, err := eng.Think(ctx, t)
		if err != nil {
			return err
		}
		s.CandidateThought = th.ID // the last one's
	}
	return nil
}

// stage has inner_voice stage the entities and edges it finds in the
// architecture thoughts, for moderation (after the graph is written, so
// what it has is not staged).
func stage(ctx context.Context, eng *cairn.Engine, s *Seeded) error {
	no, all, k := false, 0.0, 10
	res, err := eng.Ask(ctx, cairn.AskRequest{Content: "How is the shop's architecture put together?", StageKG: true, Save: &no,
		SimThresh: &all, TopK: &k, IncludeTags: []string{"architecture"}, Mode: "none"})
	if err != nil {
		return fmt.Errorf("staging candidates (open the engine with uiseed.Options): %w", err)
	}
	list, err := eng.Candidates(ctx, cairn.CandidatesRequest{})
	if err != nil {
		return err
	}
	s.Candidates = map[string]string{}
	for _, c := range list.Candidates {
		s.Candidates[c.Key()] = c.ID
		if c.Name == XSSName {
			s.XSSCandidate = c.ID
		}
	}
	for _, key := range []string{"checkout-api", "redis", "bob", "checkout-api -> uses -> redis", "invoice-worker -> writes_to -> postgres"} {
		if s.Candidates[key] == "" {
			return fmt.Errorf("inner_voice did not stage %q (staged %d: %v)", key, res.Staged.PendingEntities+res.Staged.PendingRelationships, s.Candidates)
		}
	}
	if s.XSSCandidate == "" {
		return fmt.Errorf("inner_voice did not stage the candidate quoting hostile markup (staged %v)", s.Candidates)
	}
	return nil
}

// writeRepo writes a small Go repository.
func writeRepo(dir string) error {
	files := map[string]string{
		"internal/auth/session.go": `package auth

import (
	"errors"
	"time"
)

// ErrSessionExpired is returned for a token that cannot be valid yet.
var ErrSessionExpired = errors.New("session expired")

// leeway is how far ahead of now a token may claim to be issued.
const leeway = 5 * time.Second

// ValidateToken rejects tokens issued in the future.
func ValidateToken(issuedAt, now time.Time) error {
	if issuedAt.After(now) {
		return ErrSessionExpired
	}
	return nil
}
`,
		"internal/billing/invoice.go": `package billing

// Invoice is an order's bill.
type Invoice struct {
	OrderID string
	Lines   []string
}

// RenderInvoice renders an invoice as a PDF.
func RenderInvoice(inv Invoice) ([]byte, error) {
	return []byte(inv.OrderID), nil
}
`,
		"internal/payments/webhook.go": `package payments

// HandleWebhook records a provider's event once.
func HandleWebhook(eventID string, seen map[string]bool) bool {
	if seen[eventID] {
		return false
	}
	seen[eventID] = true
	return true
}
`,
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
