package code_test

import (
	"strings"
	"testing"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// hydrated reports whether a hydration mentions key anywhere (a block,
// pruned or stale) and whether any block's text holds word.
func hydrated(res code.HydrateResult, key, word string) (mentioned, text bool) {
	for _, b := range res.Blocks {
		mentioned = mentioned || b.EntityKey == key
		text = text || strings.Contains(b.Content, word)
	}
	for _, l := range append(res.Pruned, res.Stale...) {
		mentioned = mentioned || l.EntityKey == key
	}
	return mentioned, text
}

// TestForgetArtifact: a forgotten artifact's text is never hydrated again,
// by this process or by another that had already built its search index;
// its entity is neither searched nor anchored; the ledger keeps naming it;
// forgetting twice changes nothing; storing the text again restores it.
func TestForgetArtifact(t *testing.T) {
	const secret = "zqsecretword"
	src := "package a\n\n// Alpha holds the " + secret + " key.\nfunc Alpha() string {\n\treturn \"" + secret + "\"\n}\n\n// Beta does its part.\nfunc Beta() int {\n\treturn 4\n}\n"
	f := newFixture(t, map[string]string{"a.go": src})
	f.index(code.ApprovalImplicit)
	alpha := f.entity("a.go::Alpha")
	if alpha.State != memory.StateAuthoritative {
		t.Fatalf("a.go::Alpha is %s; want AUTHORITATIVE", alpha.State)
	}
	if _, text := hydrated(f.hydrate("ep1", secret, 0, 0), "a.go::Alpha", secret); !text {
		t.Fatal("the secret is not hydrated before it is forgotten: the test would prove nothing")
	}
	// Another process over the same database, its search index built.
	other := code.New(f.store, code.Options{Now: f.clock.now, NewID: func(p string) string { return p + "_other" }})
	if _, err := other.Hydrate(f.ctx, code.HydrateRequest{Query: secret, EpisodeID: "o1", SessionID: "s9"}); err != nil {
		t.Fatal(err)
	}

	got, err := f.mem.ForgetArtifact(f.ctx, alpha.ArtifactHash)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Redacted || got.Content != memory.RedactedContent || got.Hash != alpha.ArtifactHash {
		t.Fatalf("forgotten artifact %+v", got)
	}
	// The same session: tracked from episode 1, now reported, not hydrated.
	res := f.hydrate("ep2", secret+" a.go Alpha", 0, 0)
	if _, text := hydrated(res, "a.go::Alpha", secret); text {
		t.Fatalf("the forgotten text is hydrated again: %+v", res.Blocks)
	}
	if _, ok := blockOf(res.Blocks, "a.go::Alpha"); ok {
		t.Fatal("the entity of a forgotten artifact is hydrated")
	}
	if _, ok := blockOf(res.Blocks, "a.go::Beta"); !ok {
		t.Fatalf("a.go::Beta, named by the query, is missing: %v", keys(res.Blocks))
	}
	// Another session of the other process: not even mentioned.
	res2, err := other.Hydrate(f.ctx, code.HydrateRequest{Query: secret + " Alpha", EpisodeID: "o2", SessionID: "s8"})
	if err != nil {
		t.Fatal(err)
	}
	if mentioned, text := hydrated(res2, "a.go::Alpha", secret); mentioned || text {
		t.Fatalf("another process still finds the forgotten artifact: %+v", res2)
	}
	// The ledger and the entity still name the hash.
	if e := f.entity("a.go::Alpha"); e.ArtifactHash != alpha.ArtifactHash {
		t.Fatalf("entity after forget: %+v", e)
	}
	v, err := f.mem.InspectEntity(f.ctx, "repo", "a.go::Alpha")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.StateHistory) == 0 || v.StateHistory[len(v.StateHistory)-1].ArtifactHash != alpha.ArtifactHash {
		t.Fatalf("ledger after forget: %+v", v.StateHistory)
	}
	// Idempotent; bad and unknown hashes.
	again, err := f.mem.ForgetArtifact(f.ctx, alpha.ArtifactHash)
	if err != nil || again != got {
		t.Fatalf("forgetting twice: %+v, %v", again, err)
	}
	_, err = f.mem.ForgetArtifact(f.ctx, strings.Repeat("0", 64))
	wantCode(t, err, memory.CodeNotFound)
	for _, bad := range []string{"", "xyz", strings.ToUpper(alpha.ArtifactHash), alpha.ArtifactHash + "0"} {
		_, err := f.mem.ForgetArtifact(f.ctx, bad)
		wantCode(t, err, memory.CodeInvalidParams)
	}
	// Proposing the same text again stores it again.
	art := "func Alpha() string {\n\treturn \"" + secret + "\"\n}"
	p, err := f.mem.Propose(f.ctx, code.ProposeRequest{Key: "a.go::Alpha", Content: art, EpisodeID: "ep3", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := f.store.Artifact(f.ctx, p.Artifact); err != nil || a.Redacted || a.Content != art {
		t.Fatalf("artifact proposed again: %+v, %v", a, err)
	}
}
