package cairn_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
)

// Code entities are documents of the retrieval index beside the memories,
// but apart from them: indexing a repository whose code shares every word
// of the memories changes no retrieval (same candidates, same scores),
// and a repository id equal to a memory's scope brings no code into it.
// A fresh engine on the same database hydrates the code from the index's
// files.
func TestCodeEntitiesLeaveRetrievalAlone(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cairn.db")
	o := &cairn.Options{Embedder: embed.Hash{Dim: 64}}
	eng := openAt(t, db, o)
	texts := []string{
		"the webhook retried and wrote a duplicate invoice",
		"deploy failed because the webhook secret rotated",
		"invoice totals are computed in the billing service",
	}
	for _, s := range texts {
		if _, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindMessage, Content: s, ScopeIDs: memory.Scope{RepoID: "billing"}}); err != nil {
			t.Fatal(err)
		}
	}
	queries := []cairn.RetrieveRequest{
		{Query: "webhook duplicate invoice", ScopeIDs: memory.Scope{RepoID: "billing"}},
		{Query: "why did the deploy fail"},
		{Query: "invoice billing service secret"},
	}
	ask := func() []string {
		var out []string
		for _, q := range queries {
			res, err := eng.Retrieve(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res.Candidates)
			out = append(out, string(b))
		}
		return out
	}
	before := ask()

	root := filepath.Join(dir, "billing")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package billing\n\n// RetryWebhook retries the webhook and skips a duplicate invoice.\nfunc RetryWebhook(invoice string) bool { return invoice != \"\" }\n\n" +
		"// DeployFailed reports why the deploy failed: the secret rotated.\nfunc DeployFailed() string { return \"secret rotated\" }\n"
	if err := os.WriteFile(filepath.Join(root, "billing.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.IndexCode(ctx, cairn.CodeIndexRequest{Root: root, RepoID: "billing"}, nil); err != nil {
		t.Fatal(err)
	}
	after := ask()
	for i := range queries {
		if before[i] != after[i] {
			t.Errorf("query %q changed once code was indexed:\nbefore %s\nafter  %s", queries[i].Query, before[i], after[i])
		}
	}
	eng.Close()

	fresh := openAt(t, db, o)
	res, err := fresh.Hydrate(ctx, cairn.CodeHydrateRequest{Query: "retry the webhook without a duplicate invoice", EpisodeID: "e1", SessionID: "s1", RepoID: "billing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Blocks) == 0 || res.Blocks[0].EntityKey != "billing.go::RetryWebhook" || res.Blocks[0].Reason != "retrieved" {
		t.Fatalf("a fresh engine hydrated %+v", res.Blocks)
	}
	st, err := fresh.IndexStatus(ctx)
	if err != nil || st.Behind != 0 {
		t.Fatalf("index status %+v, %v: code index should leave the index written", st, err)
	}
}
