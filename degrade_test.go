package cairn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/internal/embedtest"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// logBirds writes the scenario's records and returns the ids of those the
// query matches by words.
func logBirds(t *testing.T, eng *cairn.Engine) []string {
	t.Helper()
	var ids []string
	for i, text := range embedtest.Birds {
		o, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindCommand, Content: text, ScopeIDs: memory.Scope{RepoID: embedtest.Repo}})
		if err != nil {
			t.Fatalf("a write failed with the embedder down: %v", err)
		}
		if i < embedtest.Matching {
			ids = append(ids, o.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// codeRepo is a one-file Go repository for code memory.
func codeRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := "package birds\n\n// Migrate moves the albatross colony.\nfunc Migrate(colony string) error { return nil }\n"
	if err := os.WriteFile(filepath.Join(dir, "birds.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The Engine against a real failing remote embedder: writes are kept,
// pending; the default retrieval degrades to words and recency and says
// so; inner_voice answers from words and says so; inner_voice_retrieve,
// reembed and doctor report embedder_unavailable;
// nothing any call returns shows the embedder's address, path or answer,
// or Go's error texts. The operator's debug log keeps the detail.
func TestFailingRemoteEmbedderEngine(t *testing.T) {
	for _, mode := range embedtest.Failing {
		t.Run(string(mode), func(t *testing.T) {
			srv := embedtest.Start(t, mode, 16)
			var logs bytes.Buffer
			eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Embedder: srv.Embedder(), InnerVoice: voiceOn(),
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			shows := func(what, text string) {
				t.Helper()
				if leaks := srv.Leaks(text); len(leaks) > 0 {
					t.Errorf("%s shows %q: %s", what, leaks, text)
				}
			}

			ids := logBirds(t, eng)
			if _, err := eng.Think(ctx, cairn.ThinkRequest{Content: "albatross migrations need a longer statement timeout"}); err != nil {
				t.Fatalf("a thought failed with the embedder down: %v", err)
			}
			if vs := vectorStatus(t, eng); vs.Pending != len(embedtest.Birds)+1 {
				t.Fatalf("vectors %+v; want every record stored and pending", vs)
			}

			res := search(t, eng, cairn.RetrieveRequest{Query: embedtest.Query, ScopeIDs: memory.Scope{RepoID: embedtest.Repo}})
			got := candidateIDs(res)
			slices.Sort(got)
			if !slices.Equal(got, ids) {
				t.Fatalf("degraded retrieval found %v; want the records sharing words with the query, %v", got, ids)
			}
			if res.Provenance.Degraded != memory.CodeEmbedderUnavailable || eng.DegradedRetrievals() != 1 {
				t.Fatalf("provenance degraded %q, counted %d; want embedder_unavailable, 1", res.Provenance.Degraded, eng.DegradedRetrievals())
			}
			for _, c := range res.Candidates {
				if c.Explanation.Degraded != memory.CodeEmbedderUnavailable || component(t, c, "semantic") != 0 || component(t, c, "lexical") <= 0 {
					t.Fatalf("candidate %s explained %+v; want degraded, no semantic signal, a lexical one", c.Entity.ID(), c.Explanation)
				}
			}
			b, _ := json.Marshal(res)
			shows("the retrieval", string(b))

			_, err := eng.InnerVoice(ctx, retrieve.InnerVoiceRequest{Query: embedtest.Query})
			if memory.CodeOf(err) != memory.CodeEmbedderUnavailable {
				t.Fatalf("inner voice: %v; want embedder_unavailable", err)
			}
			shows("the inner voice's error", err.Error())
			// inner_voice answers from words instead, and says so.
			ask, err := eng.Ask(ctx, cairn.AskRequest{Content: embedtest.Query, Save: new(false)})
			if err != nil || ask.Diagnostics.Degraded != string(memory.CodeEmbedderUnavailable) || len(ask.Sources) != 1 {
				t.Fatalf("inner_voice: %+v %v; want the one thought found by words, degraded", ask.Diagnostics, err)
			}
			b, _ = json.Marshal(ask)
			shows("inner_voice's answer", string(b))
			rep, err := eng.Reembed(ctx, cairn.ReembedRequest{}, nil)
			if memory.CodeOf(err) != memory.CodeEmbedderUnavailable || rep.Pending != len(embedtest.Birds)+1 {
				t.Fatalf("reembed: %+v %v; want embedder_unavailable, all pending", rep, err)
			}
			shows("reembed's error", err.Error())

			// Every tool, as the faces call them.
			root := codeRepo(t)
			idx, _ := json.Marshal(map[string]string{"root": root})
			for _, call := range []struct{ tool, args string }{
				{"retrieve", `{"query":"albatross migration"}`},
				{"inner_voice_retrieve", `{"query":"albatross migration"}`},
				{"inner_voice", `{"content":"albatross migration","save":false}`},
				{"reembed", `{}`},
				{"doctor", `{}`},
				{"code_index", string(idx)},
				{"code_hydrate", `{"query":"migrate the albatross colony","episode_id":"ep1","session_id":"s1"}`},
			} {
				out, err := eng.CallJSON(ctx, call.tool, []byte(call.args))
				if err != nil {
					shows(call.tool+"'s error", err.Error())
					continue
				}
				b, _ := json.Marshal(out)
				shows(call.tool+"'s result", strings.ReplaceAll(string(b), root, "<root>"))
			}

			// The log: what an operator sees by default is as safe as what
			// callers see; the debug lines hold the detail.
			var detail bool
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, "level=DEBUG") {
					detail = detail || strings.Contains(line, srv.URL+embedtest.Path)
					continue
				}
				shows("the log", line)
			}
			if !detail && mode != embedtest.WrongDim {
				t.Errorf("no debug line holds the embedder's address:\n%s", logs.String())
			}
		})
	}
}

// With a working remote embedder nothing says degraded.
func TestWorkingRemoteEmbedderEngine(t *testing.T) {
	srv := embedtest.Start(t, embedtest.Working, 16)
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Embedder: srv.Embedder(), InnerVoice: voiceOn()})
	ids := logBirds(t, eng)
	if _, err := eng.Think(ctx, cairn.ThinkRequest{Content: "albatross migrations need a longer statement timeout"}); err != nil {
		t.Fatal(err)
	}
	if vs := vectorStatus(t, eng); vs.Pending != 0 {
		t.Fatalf("vectors %+v; want none pending", vs)
	}
	res := search(t, eng, cairn.RetrieveRequest{Query: embedtest.Query, ScopeIDs: memory.Scope{RepoID: embedtest.Repo}})
	for _, id := range ids {
		c, ok := candidate(res, id)
		if !ok || component(t, c, "semantic") <= 0 || c.Explanation.Degraded != "" {
			t.Fatalf("candidate %s: %+v (found %v); want it with a semantic signal, not degraded", id, c.Explanation, ok)
		}
	}
	b, _ := json.Marshal(res)
	if res.Provenance.Degraded != "" || eng.DegradedRetrievals() != 0 || strings.Contains(string(b), "degraded") {
		t.Fatalf("a full answer says degraded: %s", b)
	}
	if _, err := eng.InnerVoice(ctx, retrieve.InnerVoiceRequest{Query: embedtest.Query}); err != nil {
		t.Fatalf("inner voice: %v", err)
	}
}

// A request with a deadline and an embedder that never answers within it
// (its own timeout far longer): the embedder gets half the time, and the
// answer degrades within the deadline instead of failing; the next
// retrieval degrades at once, without asking the embedder again.
func TestDegradeWithinTheDeadline(t *testing.T) {
	srv := embedtest.Start(t, embedtest.Hang, 16)
	slow := embed.NewOllama(embed.Remote{BaseURL: srv.URL, Model: embedtest.Model, Dim: 16, Timeout: time.Hour, Retries: -1})
	eng := openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Embedder: slow, SkipEmbedOnWrite: true})
	ids := logBirds(t, eng)
	for i := range 2 {
		dctx, cancel := context.WithTimeout(ctx, 4*time.Second)
		res, err := eng.Retrieve(dctx, cairn.RetrieveRequest{Query: embedtest.Query, ScopeIDs: memory.Scope{RepoID: embedtest.Repo}})
		cancel()
		if err != nil {
			t.Fatalf("retrieval %d: %v; want a degraded answer", i+1, err)
		}
		got := candidateIDs(res)
		slices.Sort(got)
		if !slices.Equal(got, ids) || res.Provenance.Degraded != memory.CodeEmbedderUnavailable {
			t.Fatalf("retrieval %d: %v degraded %q; want %v, degraded", i+1, got, res.Provenance.Degraded, ids)
		}
		if n := srv.Calls.Load(); n != 1 {
			t.Fatalf("after retrieval %d the embedder was asked %d times; want once (then left alone)", i+1, n)
		}
	}
}
