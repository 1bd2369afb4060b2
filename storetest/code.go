package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// This file checks code memory: repositories, files, entities, the vault,
// the ledger, episodes, hydration rows and gate results.

func artifact(content string) memory.Artifact {
	sum := sha256.Sum256([]byte(content))
	return memory.Artifact{Hash: hex.EncodeToString(sum[:]), Type: memory.ArtifactCode, Content: content, CreatedAt: 1}
}

func codeEntity(repo, path, symbol string, state memory.CodeState, hash string) memory.CodeEntity {
	return memory.CodeEntity{RepoID: repo, Key: path + "::" + symbol, Path: path, Symbol: symbol, Kind: "function",
		Language: "go", StartLine: 1, EndLine: 3, Method: "ast", State: state, ArtifactHash: hash, UpdatedAt: 1}
}

func applyCode(t *testing.T, s memory.Store, c memory.CodeChange) {
	t.Helper()
	if err := s.ApplyCode(ctx, c); err != nil {
		t.Fatalf("ApplyCode: %v", err)
	}
}

func applyEpisode(t *testing.T, s memory.Store, c memory.EpisodeChange) memory.Episode {
	t.Helper()
	e, err := s.ApplyEpisode(ctx, c)
	if err != nil {
		t.Fatalf("ApplyEpisode %s: %v", c.Episode.ID, err)
	}
	return e
}

// codeSnapshot is the code memory of repository repo and of the episodes
// named, for checking that a failed write changed nothing.
func codeSnapshot(t *testing.T, s memory.Store, repo string, keys, hashes, episodes []string) string {
	t.Helper()
	var out []any
	add := func(v any, err error) {
		t.Helper()
		if err != nil && !memory.IsCode(err, memory.CodeNotFound) {
			t.Fatal(err)
		}
		out = append(out, v, memory.CodeOf(err))
	}
	add(s.CodeEntities(ctx, memory.CodeEntityFilter{}))
	add(s.CodeFiles(ctx, repo))
	for _, k := range keys {
		add(s.CodeLedger(ctx, repo, k))
		add(s.EntityHydrationRows(ctx, repo, k))
	}
	for _, h := range hashes {
		add(s.Artifact(ctx, h))
	}
	for _, id := range episodes {
		add(s.Episode(ctx, id))
		add(s.HydrationRows(ctx, id))
		add(s.GateResults(ctx, id))
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, st.CodeEntities, st.CodeEpisodes)
	return fmt.Sprintf("%+v", out)
}

func testCodeRepos(t *testing.T, s memory.Store) {
	_, err := s.CodeRepo(ctx, "nope")
	wantCode(t, err, memory.CodeNotFound)
	wantCode(t, s.PutCodeRepo(ctx, memory.CodeRepo{ID: "", Root: "/x"}), memory.CodeInvalidParams)
	for _, r := range []memory.CodeRepo{{ID: "b", Root: "/b", IndexedAt: 1}, {ID: "a", Root: "/a", IndexedAt: 2}, {ID: "b", Root: "/b2", IndexedAt: 3}} {
		if err := s.PutCodeRepo(ctx, r); err != nil {
			t.Fatalf("PutCodeRepo %s: %v", r.ID, err)
		}
	}
	got, err := s.CodeRepo(ctx, "b")
	if err != nil || got != (memory.CodeRepo{ID: "b", Root: "/b2", IndexedAt: 3}) {
		t.Fatalf("CodeRepo b = %+v, %v; want the update", got, err)
	}
	all, err := s.CodeRepos(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "CodeRepos", all, []memory.CodeRepo{{ID: "a", Root: "/a", IndexedAt: 2}, {ID: "b", Root: "/b2", IndexedAt: 3}})
}

func testCodeFiles(t *testing.T, s memory.Store) {
	f1 := memory.CodeFile{RepoID: "r", Path: "b.go", Size: 10, ModTime: 5, FileHash: "h1", Language: "go", Method: "ast", Entities: 2}
	f2 := memory.CodeFile{RepoID: "r", Path: "a.py", Size: 3, ModTime: 6, Language: "python", Method: "regex", Reason: "parse error", Entities: 1}
	f3 := memory.CodeFile{RepoID: "other", Path: "c.go", Method: "skipped", Reason: "too large"}
	applyCode(t, s, memory.CodeChange{Files: []memory.CodeFile{f1, f2, f3}})
	f1.Size = 11
	applyCode(t, s, memory.CodeChange{Files: []memory.CodeFile{f1}, DeleteFiles: []memory.CodeFile{{RepoID: "r", Path: "a.py"}}})
	got, err := s.CodeFiles(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "CodeFiles r", got, []memory.CodeFile{f1})
	applyCode(t, s, memory.CodeChange{Files: []memory.CodeFile{f2}})
	got, _ = s.CodeFiles(ctx, "r")
	sameJSON(t, "CodeFiles r", got, []memory.CodeFile{f2, f1})
	wantCode(t, s.ApplyCode(ctx, memory.CodeChange{Files: []memory.CodeFile{{RepoID: "r"}}}), memory.CodeInvalidParams)
}

func testCodeGuards(t *testing.T, s memory.Store) {
	a1, a2 := artifact("func F() {}"), artifact("func F() { return }")
	e := codeEntity("r", "f.go", "F", memory.StateProposed, a1.Hash)
	applyCode(t, s, memory.CodeChange{
		Artifacts:   []memory.Artifact{a1},
		Entities:    []memory.CodeEntity{e},
		Transitions: []memory.CodeTransition{{RepoID: "r", Key: e.Key, To: memory.StateProposed, ArtifactHash: a1.Hash, Reason: "indexed", At: 1}},
		Guards:      []memory.CodeGuard{{RepoID: "r", Key: e.Key}},
	})
	keys, hashes := []string{e.Key, "f.go::G"}, []string{a1.Hash, a2.Hash}
	before := codeSnapshot(t, s, "r", keys, hashes, nil)

	next := e
	next.State, next.ArtifactHash = memory.StateProposed, a2.Hash
	write := func(guards ...memory.CodeGuard) memory.CodeChange {
		return memory.CodeChange{
			Artifacts:   []memory.Artifact{a2},
			Entities:    []memory.CodeEntity{next, codeEntity("r", "f.go", "G", memory.StateProposed, a2.Hash)},
			Transitions: []memory.CodeTransition{{RepoID: "r", Key: e.Key, From: memory.StateProposed, To: memory.StateProposed, ArtifactHash: a2.Hash, At: 2}},
			Files:       []memory.CodeFile{{RepoID: "r", Path: "f.go", Method: "ast"}},
			Guards:      guards,
			Repo:        &memory.CodeRepo{ID: "r", Root: "/r", IndexedAt: 9},
		}
	}
	for name, g := range map[string]memory.CodeGuard{
		"must not exist": {RepoID: "r", Key: e.Key},
		"wrong state":    {RepoID: "r", Key: e.Key, State: memory.StateAuthoritative, ArtifactHash: a1.Hash},
		"wrong hash":     {RepoID: "r", Key: e.Key, State: memory.StateProposed, ArtifactHash: a2.Hash},
		"missing":        {RepoID: "r", Key: "f.go::Missing", State: memory.StateProposed, ArtifactHash: a1.Hash},
		"other repo":     {RepoID: "r2", Key: e.Key, State: memory.StateProposed, ArtifactHash: a1.Hash},
	} {
		ok := memory.CodeGuard{RepoID: "r", Key: "f.go::G"}
		err := s.ApplyCode(ctx, write(ok, g))
		wantCode(t, err, memory.CodeConflict)
		if !strings.Contains(memory.Public(err).Message, g.Key) {
			t.Errorf("%s: conflict %q does not name the key %s", name, err, g.Key)
		}
		if after := codeSnapshot(t, s, "r", keys, hashes, nil); after != before {
			t.Fatalf("%s: a failed guard wrote something:\n before %s\n after  %s", name, before, after)
		}
		if _, err := s.CodeRepo(ctx, "r"); !memory.IsCode(err, memory.CodeNotFound) {
			t.Fatalf("%s: a failed guard registered the change's repository: %v", name, err)
		}
	}
	applyCode(t, s, write(memory.CodeGuard{RepoID: "r", Key: e.Key, State: memory.StateProposed, ArtifactHash: a1.Hash},
		memory.CodeGuard{RepoID: "r", Key: "f.go::G"}))
	got, err := s.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "entities after the guarded write", got, []memory.CodeEntity{next, codeEntity("r", "f.go", "G", memory.StateProposed, a2.Hash)})
	if r, err := s.CodeRepo(ctx, "r"); err != nil || r != (memory.CodeRepo{ID: "r", Root: "/r", IndexedAt: 9}) {
		t.Fatalf("the change's repository: %+v, %v", r, err)
	}
	if _, err := s.Artifact(ctx, a2.Hash); err != nil {
		t.Fatalf("Artifact after the guarded write: %v", err)
	}
}

func testCodeBadInput(t *testing.T, s memory.Store) {
	a := artifact("x")
	bad := map[string]memory.CodeChange{
		"short hash":       {Artifacts: []memory.Artifact{{Hash: "abc", Type: memory.ArtifactCode, Content: "x"}}},
		"upper hash":       {Artifacts: []memory.Artifact{{Hash: upper(a.Hash), Type: memory.ArtifactCode, Content: "x"}}},
		"artifact type":    {Artifacts: []memory.Artifact{{Hash: a.Hash, Type: "binary", Content: "x"}}},
		"entity key":       {Entities: []memory.CodeEntity{{RepoID: "r", State: memory.StateProposed}}},
		"entity repo":      {Entities: []memory.CodeEntity{{Key: "f.go::F", State: memory.StateProposed}}},
		"entity state":     {Entities: []memory.CodeEntity{codeEntity("r", "f.go", "F", "LIVE", a.Hash)}},
		"transition key":   {Transitions: []memory.CodeTransition{{RepoID: "r", To: memory.StateProposed}}},
		"transition state": {Transitions: []memory.CodeTransition{{RepoID: "r", Key: "k", To: "NEW"}}},
		"guard key":        {Guards: []memory.CodeGuard{{RepoID: "r"}}},
		"guard state":      {Guards: []memory.CodeGuard{{RepoID: "r", Key: "k", State: "GONE"}}},
		"delete file path": {DeleteFiles: []memory.CodeFile{{RepoID: "r"}}},
		"repo root":        {Repo: &memory.CodeRepo{ID: "r"}},
		"bad after good":   {Artifacts: []memory.Artifact{a}, Entities: []memory.CodeEntity{{RepoID: "r", Key: "k", State: ""}}},
		"content mismatch": {Artifacts: []memory.Artifact{{Hash: a.Hash, Type: memory.ArtifactCode, Content: "y"}}},
	}
	for name, c := range bad {
		if err := s.ApplyCode(ctx, c); !memory.IsCode(err, memory.CodeInvalidParams) {
			t.Errorf("%s: %v; want invalid_params", name, err)
		}
		if _, err := s.ApplyEpisode(ctx, memory.EpisodeChange{Episode: memory.Episode{ID: "e-" + name, SessionID: "s"}, Code: &c}); !memory.IsCode(err, memory.CodeInvalidParams) {
			t.Errorf("%s in an episode: %v; want invalid_params", name, err)
		}
	}
	if _, err := s.Artifact(ctx, a.Hash); !memory.IsCode(err, memory.CodeNotFound) {
		t.Fatalf("an invalid change stored its artifact: %v", err)
	}
	if eps, err := s.SessionEpisodes(ctx, "s"); err != nil || len(eps) != 0 {
		t.Fatalf("an invalid episode change stored episodes: %v, %v", eps, err)
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func testArtifactIdempotent(t *testing.T, s memory.Store) {
	_, err := s.Artifact(ctx, artifact("nothing").Hash)
	wantCode(t, err, memory.CodeNotFound)
	first := artifact("func F() {}")
	applyCode(t, s, memory.CodeChange{Artifacts: []memory.Artifact{first, first}})
	again := first
	again.Type, again.CreatedAt = memory.ArtifactDiff, 99
	applyCode(t, s, memory.CodeChange{Artifacts: []memory.Artifact{again}})
	got, err := s.Artifact(ctx, first.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if got != first {
		t.Fatalf("Artifact = %+v; want the first stored %+v", got, first)
	}
}

func testCodeEntityFilters(t *testing.T, s memory.Store) {
	h := artifact("x").Hash
	es := []memory.CodeEntity{
		codeEntity("r2", "a.go", "A", memory.StateAuthoritative, h),
		codeEntity("r1", "b.go", "B", memory.StateProposed, h),
		codeEntity("r1", "a.go", "Z", memory.StateTombstoned, h),
		codeEntity("r1", "a.go", "A", memory.StateAuthoritative, h),
		codeEntity("r1", "a.go", "S", memory.StateSuperseded, ""),
	}
	applyCode(t, s, memory.CodeChange{Entities: es})
	keys := func(got []memory.CodeEntity, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range got {
			out = append(out, e.RepoID+"/"+e.Key)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    memory.CodeEntityFilter
		want []string
	}{
		{"all", memory.CodeEntityFilter{}, []string{"r1/a.go::A", "r1/a.go::S", "r1/a.go::Z", "r1/b.go::B", "r2/a.go::A"}},
		{"repo", memory.CodeEntityFilter{RepoID: "r1"}, []string{"r1/a.go::A", "r1/a.go::S", "r1/a.go::Z", "r1/b.go::B"}},
		{"path", memory.CodeEntityFilter{Path: "a.go"}, []string{"r1/a.go::A", "r1/a.go::S", "r1/a.go::Z", "r2/a.go::A"}},
		{"repo and path", memory.CodeEntityFilter{RepoID: "r1", Path: "b.go"}, []string{"r1/b.go::B"}},
		{"states", memory.CodeEntityFilter{States: []memory.CodeState{memory.StateAuthoritative, memory.StateProposed}},
			[]string{"r1/a.go::A", "r1/b.go::B", "r2/a.go::A"}},
		{"keys", memory.CodeEntityFilter{Keys: []string{"a.go::A", "b.go::B", "nope"}}, []string{"r1/a.go::A", "r1/b.go::B", "r2/a.go::A"}},
		{"everything", memory.CodeEntityFilter{RepoID: "r1", Path: "a.go", States: []memory.CodeState{memory.StateTombstoned, memory.StateSuperseded},
			Keys: []string{"a.go::Z", "a.go::A"}}, []string{"r1/a.go::Z"}},
		{"none", memory.CodeEntityFilter{RepoID: "r3"}, nil},
	} {
		if got := keys(s.CodeEntities(ctx, tc.f)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v; want %v", tc.name, got, tc.want)
		}
	}
	if got := keys(s.CodeEntitiesByKey(ctx, "a.go::A")); !slices.Equal(got, []string{"r1/a.go::A", "r2/a.go::A"}) {
		t.Errorf("CodeEntitiesByKey: %v", got)
	}
	got, _ := s.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: "r1", Keys: []string{"a.go::A"}})
	sameJSON(t, "entity round trip", got, []memory.CodeEntity{es[3]})
	// An entity write replaces the whole row.
	moved := es[3]
	moved.Path, moved.StartLine, moved.EndLine, moved.Method, moved.State = "c.go", 10, 20, "regex", memory.StateProposed
	applyCode(t, s, memory.CodeChange{Entities: []memory.CodeEntity{moved}})
	got, _ = s.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: "r1", Keys: []string{"a.go::A"}})
	sameJSON(t, "replaced entity", got, []memory.CodeEntity{moved})
}

func testCodeLedger(t *testing.T, s memory.Store) {
	h1, h2 := artifact("1").Hash, artifact("2").Hash
	tr := func(key string, from, to memory.CodeState, hash string, at int64) memory.CodeTransition {
		return memory.CodeTransition{Seq: 1000, RepoID: "r", Key: key, From: from, To: to, ArtifactHash: hash, EpisodeID: "ep", Reason: "r", At: at}
	}
	applyCode(t, s, memory.CodeChange{Transitions: []memory.CodeTransition{
		tr("k", "", memory.StateProposed, h1, 5),
		tr("other", "", memory.StateProposed, h1, 1),
		tr("k", memory.StateProposed, memory.StateAuthoritative, h1, 4),
	}})
	applyCode(t, s, memory.CodeChange{Transitions: []memory.CodeTransition{
		tr("k", memory.StateAuthoritative, memory.StateSuperseded, h1, 3),
		tr("k", memory.StateSuperseded, memory.StateProposed, h2, 3),
	}})
	got, err := s.CodeLedger(ctx, "r", "k")
	if err != nil {
		t.Fatal(err)
	}
	var to []memory.CodeState
	var last int64
	for _, e := range got {
		if e.Seq <= last {
			t.Fatalf("ledger seqs not increasing: %+v", got)
		}
		last = e.Seq
		to = append(to, e.To)
	}
	want := []memory.CodeState{memory.StateProposed, memory.StateAuthoritative, memory.StateSuperseded, memory.StateProposed}
	if !slices.Equal(to, want) {
		t.Fatalf("ledger order %v; want %v (append order, not time)", to, want)
	}
	first := got[0]
	first.Seq = 0
	if want := tr("k", "", memory.StateProposed, h1, 5); first != (memory.CodeTransition{RepoID: want.RepoID, Key: want.Key, To: want.To,
		ArtifactHash: want.ArtifactHash, EpisodeID: want.EpisodeID, Reason: want.Reason, At: want.At}) {
		t.Fatalf("ledger entry %+v", got[0])
	}
	if got, _ := s.CodeLedger(ctx, "r2", "k"); len(got) != 0 {
		t.Fatalf("ledger of another repo: %+v", got)
	}
}

func episode(id, session string) memory.Episode {
	return memory.Episode{ID: id, SessionID: session, RepoID: "r", Query: "q " + id, BudgetToken: 100, BudgetCount: 5, CreatedAt: 10, UpdatedAt: 10}
}

func hrow(ep memory.Episode, seq int, key string, at int64) memory.HydrationRow {
	return memory.HydrationRow{EpisodeID: ep.ID, SessionID: ep.SessionID, Seq: seq, RepoID: "r", Key: key, ArtifactHash: artifact(key).Hash,
		Reason: "asked", Method: "ast", TriggeredBy: "query", TokenCount: 7, HydratedAt: at, Checksum: fmt.Sprintf("sum-%s-%d", ep.ID, seq)}
}

func testEpisodeSeq(t *testing.T, s memory.Store) {
	_, err := s.Episode(ctx, "nope")
	wantCode(t, err, memory.CodeNotFound)
	a1 := applyEpisode(t, s, memory.EpisodeChange{Episode: episode("a1", "A")})
	b1 := applyEpisode(t, s, memory.EpisodeChange{Episode: episode("b1", "B")})
	a2 := applyEpisode(t, s, memory.EpisodeChange{Episode: episode("a2", "A")})
	if a1.Seq != 1 || b1.Seq != 1 || a2.Seq != 2 {
		t.Fatalf("seqs a1 %d b1 %d a2 %d; want 1 1 2 (numbered per session)", a1.Seq, b1.Seq, a2.Seq)
	}
	stored, err := s.Episode(ctx, "a2")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "stored episode", stored, a2)

	// An update keeps Seq and CreatedAt and writes the other fields.
	upd := episode("a1", "A")
	upd.Seq, upd.CreatedAt, upd.UpdatedAt, upd.TotalTokens, upd.Rows, upd.Digest = 0, 99, 50, 42, 2, "digest"
	got := applyEpisode(t, s, memory.EpisodeChange{Episode: upd, Rows: []memory.HydrationRow{hrow(upd, 1, "k", 3), hrow(upd, 2, "k", 3)}})
	want := upd
	want.Seq, want.CreatedAt = 1, 10
	sameJSON(t, "updated episode", got, want)
	stored, _ = s.Episode(ctx, "a1")
	sameJSON(t, "stored updated episode", stored, want)
	upd.Seq = 7
	if got := applyEpisode(t, s, memory.EpisodeChange{Episode: upd}); got.Seq != 1 {
		t.Fatalf("an update with a Seq renumbered the episode: %d", got.Seq)
	}

	// An explicit Seq on a new episode is kept.
	a5 := episode("a5", "A")
	a5.Seq = 5
	if got := applyEpisode(t, s, memory.EpisodeChange{Episode: a5}); got.Seq != 5 {
		t.Fatalf("explicit seq: %d", got.Seq)
	}
	if got := applyEpisode(t, s, memory.EpisodeChange{Episode: episode("a6", "A")}); got.Seq != 6 {
		t.Fatalf("seq after an explicit 5: %d; want 6", got.Seq)
	}
	eps, err := s.SessionEpisodes(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range eps {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, []string{"a1", "a2", "a5", "a6"}) {
		t.Fatalf("SessionEpisodes A: %v", ids)
	}
	if eps, _ := s.SessionEpisodes(ctx, "none"); len(eps) != 0 {
		t.Fatalf("SessionEpisodes of an unknown session: %+v", eps)
	}
	_, err = s.ApplyEpisode(ctx, memory.EpisodeChange{Episode: memory.Episode{SessionID: "A"}})
	wantCode(t, err, memory.CodeInvalidParams)
}

func testEpisodeOtherSession(t *testing.T, s memory.Store) {
	e := episode("e1", "A")
	e.Rows = 1
	applyEpisode(t, s, memory.EpisodeChange{Episode: e, Rows: []memory.HydrationRow{hrow(e, 1, "k", 1)}})
	before := codeSnapshot(t, s, "r", []string{"k"}, nil, []string{"e1"})
	other := episode("e1", "B")
	_, err := s.ApplyEpisode(ctx, memory.EpisodeChange{Episode: other, Rows: []memory.HydrationRow{hrow(other, 2, "k", 2)},
		Gates: []memory.GateResult{{RepoID: "r", Key: "k"}}})
	wantCode(t, err, memory.CodeConflict)
	if after := codeSnapshot(t, s, "r", []string{"k"}, nil, []string{"e1"}); after != before {
		t.Fatalf("a conflicting episode wrote something:\n before %s\n after  %s", before, after)
	}
	if eps, _ := s.SessionEpisodes(ctx, "B"); len(eps) != 0 {
		t.Fatalf("session B has episodes: %+v", eps)
	}
	// A row number used twice in one episode is a conflict too.
	e.Rows = 2
	_, err = s.ApplyEpisode(ctx, memory.EpisodeChange{Episode: e, Rows: []memory.HydrationRow{hrow(e, 1, "k", 3)}})
	wantCode(t, err, memory.CodeConflict)
	// A change prepared from a stale read of the episode (it counted no
	// rows; one is stored) is a conflict the caller can recognise and redo.
	stale := episode("e1", "A")
	stale.Rows = 1
	_, err = s.ApplyEpisode(ctx, memory.EpisodeChange{Episode: stale, Rows: []memory.HydrationRow{hrow(stale, 2, "j", 3)}})
	if !memory.IsCode(err, memory.CodeConflict) || !errors.Is(err, memory.ErrEpisodeChanged) {
		t.Fatalf("a change from a stale read: %v; want a conflict wrapping ErrEpisodeChanged", err)
	}
	stale.Rows = 0
	_, err = s.ApplyEpisode(ctx, memory.EpisodeChange{Episode: stale})
	if !errors.Is(err, memory.ErrEpisodeChanged) {
		t.Fatalf("an update that would reset the seal: %v; want ErrEpisodeChanged", err)
	}
	// A row naming another episode is invalid.
	_, err = s.ApplyEpisode(ctx, memory.EpisodeChange{Episode: e, Rows: []memory.HydrationRow{hrow(other, 9, "k", 3)}})
	if !memory.IsCode(err, memory.CodeInvalidParams) && !memory.IsCode(err, memory.CodeConflict) {
		t.Fatalf("a row of another session: %v", err)
	}
	if after := codeSnapshot(t, s, "r", []string{"k"}, nil, []string{"e1"}); after != before {
		t.Fatalf("a failed episode write wrote something:\n before %s\n after  %s", before, after)
	}
}

func testHydrationOrder(t *testing.T, s memory.Store) {
	e1, e2, x := episode("e1", "S"), episode("e2", "S"), episode("x", "T")
	// e1 is created first (number 1 of S), then rows arrive out of order.
	// (Episode.Rows counts the rows stored with each change.)
	applyEpisode(t, s, memory.EpisodeChange{Episode: e1})
	e2.Rows = 2
	applyEpisode(t, s, memory.EpisodeChange{Episode: e2, Rows: []memory.HydrationRow{hrow(e2, 2, "k", 5), hrow(e2, 1, "j", 5)}})
	e1.Rows = 2
	applyEpisode(t, s, memory.EpisodeChange{Episode: e1, Rows: []memory.HydrationRow{hrow(e1, 2, "k", 9), hrow(e1, 1, "k", 9)}})
	e1.Rows = 3
	applyEpisode(t, s, memory.EpisodeChange{Episode: e1, Rows: []memory.HydrationRow{hrow(e1, 3, "j", 1)}})
	x.Rows = 1
	applyEpisode(t, s, memory.EpisodeChange{Episode: x, Rows: []memory.HydrationRow{hrow(x, 1, "k", 5)}})

	names := func(rows []memory.HydrationRow, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, fmt.Sprintf("%s/%d", r.EpisodeID, r.Seq))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"HydrationRows e1", names(s.HydrationRows(ctx, "e1")), []string{"e1/1", "e1/2", "e1/3"}},
		{"HydrationRows none", names(s.HydrationRows(ctx, "nope")), nil},
		{"SessionHydrationRows S", names(s.SessionHydrationRows(ctx, "S")), []string{"e1/1", "e1/2", "e1/3", "e2/1", "e2/2"}},
		{"SessionHydrationRows T", names(s.SessionHydrationRows(ctx, "T")), []string{"x/1"}},
		// By hydration time, then episode seq (at time 5, x is number 1
		// of its session and e2 number 2), then row seq.
		{"EntityHydrationRows k", names(s.EntityHydrationRows(ctx, "r", "k")), []string{"x/1", "e2/2", "e1/1", "e1/2"}},
		{"EntityHydrationRows j", names(s.EntityHydrationRows(ctx, "r", "j")), []string{"e1/3", "e2/1"}},
		{"EntityHydrationRows other repo", names(s.EntityHydrationRows(ctx, "r2", "k")), nil},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %v; want %v", tc.name, tc.got, tc.want)
		}
	}
	rows, _ := s.HydrationRows(ctx, "e2")
	sameJSON(t, "hydration row round trip", rows[0], hrow(e2, 1, "j", 5))
}

func testGateResults(t *testing.T, s memory.Store) {
	e := episode("e", "S")
	g := func(key string, ok bool) memory.GateResult {
		return memory.GateResult{EpisodeID: "e", RepoID: "r", Key: key, ArtifactHash: artifact(key).Hash, AOK: ok, AReason: "a",
			AMethod: "ast", BOK: !ok, BReason: "b", COK: ok, CReason: "c", DiskExists: true, IsStale: !ok, Decision: "promote", At: 3}
	}
	gates := []memory.GateResult{g("z", true), g("a", false), g("m", true)}
	applyEpisode(t, s, memory.EpisodeChange{Episode: e, Gates: gates[:2]})
	applyEpisode(t, s, memory.EpisodeChange{Episode: e, Gates: gates[2:]})
	got, err := s.GateResults(ctx, "e")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "gate results in evaluation order", got, gates)
	if got, _ := s.GateResults(ctx, "nope"); len(got) != 0 {
		t.Fatalf("gate results of an unknown episode: %+v", got)
	}
}

func testEpisodeCodeGuard(t *testing.T, s memory.Store) {
	a1, a2 := artifact("v1"), artifact("v2")
	ent := codeEntity("r", "f.go", "F", memory.StateProposed, a1.Hash)
	e := episode("e", "S")
	applyEpisode(t, s, memory.EpisodeChange{Episode: e, Code: &memory.CodeChange{
		Artifacts: []memory.Artifact{a1}, Entities: []memory.CodeEntity{ent},
		Transitions: []memory.CodeTransition{{RepoID: "r", Key: ent.Key, To: memory.StateProposed, ArtifactHash: a1.Hash, EpisodeID: "e", At: 1}},
		Guards:      []memory.CodeGuard{{RepoID: "r", Key: ent.Key}},
	}})
	keys, hashes, eps := []string{ent.Key}, []string{a1.Hash, a2.Hash}, []string{"e", "e2"}
	before := codeSnapshot(t, s, "r", keys, hashes, eps)
	next := ent
	next.State, next.ArtifactHash = memory.StateAuthoritative, a2.Hash
	upd := e
	upd.Rows, upd.Digest, upd.UpdatedAt = 1, "d", 99
	for _, ep := range []memory.Episode{upd, episode("e2", "S")} {
		_, err := s.ApplyEpisode(ctx, memory.EpisodeChange{
			Episode: ep,
			Rows:    []memory.HydrationRow{hrow(ep, 1, ent.Key, 2)},
			Gates:   []memory.GateResult{{RepoID: "r", Key: ent.Key, Decision: "promote"}},
			Code: &memory.CodeChange{
				Artifacts:   []memory.Artifact{a2},
				Entities:    []memory.CodeEntity{next},
				Transitions: []memory.CodeTransition{{RepoID: "r", Key: ent.Key, From: memory.StateProposed, To: memory.StateAuthoritative, ArtifactHash: a2.Hash}},
				Files:       []memory.CodeFile{{RepoID: "r", Path: "f.go"}},
				// Stale: the stored entity is PROPOSED with a1.
				Guards: []memory.CodeGuard{{RepoID: "r", Key: ent.Key, State: memory.StateProposed, ArtifactHash: a2.Hash}},
			},
		})
		wantCode(t, err, memory.CodeConflict)
		if after := codeSnapshot(t, s, "r", keys, hashes, eps); after != before {
			t.Fatalf("episode %s: a failed code guard wrote something:\n before %s\n after  %s", ep.ID, before, after)
		}
	}
	if eps, _ := s.SessionEpisodes(ctx, "S"); len(eps) != 1 {
		t.Fatalf("session S has %d episodes; want 1", len(eps))
	}
	// The same change with the right guard applies everything.
	ep := applyEpisode(t, s, memory.EpisodeChange{
		Episode: upd,
		Rows:    []memory.HydrationRow{hrow(upd, 1, ent.Key, 2)},
		Code: &memory.CodeChange{
			Artifacts: []memory.Artifact{a2}, Entities: []memory.CodeEntity{next},
			Guards: []memory.CodeGuard{{RepoID: "r", Key: ent.Key, State: memory.StateProposed, ArtifactHash: a1.Hash}},
		},
	})
	if ep.Seq != 1 || ep.Digest != "d" {
		t.Fatalf("stored episode %+v", ep)
	}
	got, _ := s.CodeEntitiesByKey(ctx, ent.Key)
	sameJSON(t, "entity after the episode", got, []memory.CodeEntity{next})
	if rows, _ := s.HydrationRows(ctx, "e"); len(rows) != 1 {
		t.Fatalf("rows after the episode: %+v", rows)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.CodeEntities != 1 || st.CodeEpisodes != 1 {
		t.Fatalf("stats: %d code entities, %d episodes; want 1, 1", st.CodeEntities, st.CodeEpisodes)
	}
}
