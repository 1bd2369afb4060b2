package cairn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// filesHolding lists the files under dir that hold needle.
func filesHolding(t *testing.T, dir, needle string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), needle) {
			out = append(out, filepath.Base(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestForgetErasesTextFromIndexFiles: forgetting an observation removes
// its words from the retrieval index's files, not only from the database.
func TestForgetErasesTextFromIndexFiles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	eng, err := cairn.Open(path, &cairn.Options{Now: func() time.Time { return time.UnixMilli(10_000_000) }})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	scope := memory.Scope{RepoID: "/src/shop"}
	for i := range 40 {
		if _, err := eng.Log(ctx, cairn.LogRequest{Kind: "message", Content: fmt.Sprintf("checkout note %d about the payment retry", i), ScopeIDs: scope}); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "hunter2x9zq"
	o, err := eng.Log(ctx, cairn.LogRequest{Kind: "command", Content: "export STRIPE_KEY=" + secret + " before the checkout retry", ScopeIDs: scope})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.OptimizeIndex(ctx, true); err != nil {
		t.Fatal(err)
	}
	dir := path + "-index"
	if got := filesHolding(t, dir, secret); len(got) == 0 {
		t.Fatal("the secret is in no index file before it is forgotten: the test would prove nothing")
	}
	if _, err := eng.Forget(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	if got := filesHolding(t, dir, secret); len(got) > 0 {
		t.Fatalf("after forget, the secret is still in %v", got)
	}
	res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: secret + " checkout retry", ScopeIDs: scope})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Candidates {
		if c.Entity.ID() == o.ID {
			t.Fatal("the forgotten observation is still a candidate")
		}
	}
}

// TestIndexFilesServeANewEngine: an engine opened on a database whose
// index another engine wrote answers from the files (no rebuild), alike.
func TestIndexFilesServeANewEngine(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	now := func() time.Time { return time.UnixMilli(10_000_000) }
	a, err := cairn.Open(path, &cairn.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		a.Log(ctx, cairn.LogRequest{Kind: "message", Content: fmt.Sprintf("deploy %d failed on staging: token expired", i), ScopeIDs: memory.Scope{SessionID: "s1"}})
	}
	req := cairn.RetrieveRequest{Query: "why did the staging deploy fail?"}
	want, err := a.Retrieve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.IndexStatus(ctx)
	if err != nil || st.InMemory || st.Segments == 0 {
		t.Fatalf("status %+v %v: want files", st, err)
	}
	a.Close()
	b, err := cairn.Open(path, &cairn.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.Retrieve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Fatalf("a new engine answers differently:\n%s\n%s", gj, wj)
	}
	st2, _ := b.IndexStatus(ctx)
	if st2.Generation != st.Generation {
		t.Fatalf("the new engine rewrote the index (generation %d → %d)", st.Generation, st2.Generation)
	}
}

// TestIndexInMemoryOption: CAIRN_INDEX_DIR=memory writes no files.
func TestIndexInMemoryOption(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	eng, err := cairn.Open(path, &cairn.Options{IndexDir: cairn.IndexInMemory})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	eng.Log(ctx, cairn.LogRequest{Kind: "message", Content: "hello memory"})
	if _, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "hello"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-index"); !os.IsNotExist(err) {
		t.Fatalf("an index directory was made: %v", err)
	}
	st, _ := eng.IndexStatus(ctx)
	if !st.InMemory {
		t.Fatalf("status %+v", st)
	}
}

// TestDoctorChecksTheIndex: doctor verifies the index's files, fails on
// a damaged one with a fix to run, and --fix rebuilds it.
func TestDoctorChecksTheIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	eng, err := cairn.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for i := range 50 {
		eng.Log(ctx, cairn.LogRequest{Kind: "message", Content: fmt.Sprintf("note %d on the payment retry budget", i)})
	}
	if _, err := eng.OptimizeIndex(ctx, true); err != nil {
		t.Fatal(err)
	}
	finding := func(rep cairn.DoctorReport) memory.Finding {
		for _, f := range rep.Findings {
			if f.Check == "retrieval index" {
				return f
			}
		}
		t.Fatal("doctor has no retrieval index check")
		return memory.Finding{}
	}
	rep, err := eng.Doctor(ctx, cairn.DoctorRequest{})
	if err != nil || !finding(rep).OK {
		t.Fatalf("a sound index: %+v %v", finding(rep), err)
	}
	segs, _ := filepath.Glob(filepath.Join(path+"-index", "seg-*.cseg"))
	if len(segs) == 0 {
		t.Fatal("no segment")
	}
	data, _ := os.ReadFile(segs[0])
	for _, at := range []int{len(data) / 3, len(data) / 2, 2 * len(data) / 3} {
		data[at] ^= 0xff // inside the sections
	}
	os.WriteFile(segs[0], data, 0o600)
	rep, err = eng.Doctor(ctx, cairn.DoctorRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if f := finding(rep); f.OK || f.Fix == "" || strings.Contains(f.Detail, path) {
		t.Fatalf("a damaged index: %+v", f)
	}
	rep, err = eng.Doctor(ctx, cairn.DoctorRequest{Fix: true})
	if err != nil {
		t.Fatal(err)
	}
	if f := finding(rep); !f.OK || !slices.Contains(rep.Repaired, "rebuilt the retrieval index") {
		t.Fatalf("after --fix: %+v, repaired %v", f, rep.Repaired)
	}
	res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "payment retry"})
	if err != nil || len(res.Candidates) == 0 {
		t.Fatalf("retrieve after the repair: %v %d", err, len(res.Candidates))
	}
}

// TestApproximateFromSetting: CAIRN_INDEX_APPROXIMATE_FROM makes the
// semantic side approximate from a number of vectors; by default it stays
// exact, also on files whose centroids another process trained, and
// answers as an index that never had centroids.
func TestApproximateFromSetting(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == cairn.EnvIndexApproxFrom {
				return v
			}
			return ""
		}
	}
	for v, want := range map[string]int{"": 0, "never": 0, " Never ": 0, "5000": 5000, "1_000_000": 1_000_000} {
		s, err := cairn.SettingsFromEnv(env(v))
		if err != nil || s.IndexApproximateFrom != want {
			t.Errorf("%q: %d %v, want %d", v, s.IndexApproximateFrom, err, want)
		}
	}
	for _, v := range []string{"12", "-5", "lots", "1e6"} {
		if _, err := cairn.SettingsFromEnv(env(v)); memory.CodeOf(err) != memory.CodeInvalidParams || !strings.Contains(err.Error(), cairn.EnvIndexApproxFrom) {
			t.Errorf("%q: %v, want invalid_params naming the variable", v, err)
		}
	}

	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	now := func() time.Time { return time.UnixMilli(10_000_000) }
	a, err := cairn.Open(path, &cairn.Options{Now: now, IndexApproximateFrom: 1000})
	if err != nil {
		t.Fatal(err)
	}
	topics := []string{"deploy", "token", "schema", "cache", "retry", "parser", "login", "billing"}
	for i := range 1200 {
		content := fmt.Sprintf("%s note %d: the %s step failed after the %s change", topics[i%8], i, topics[(i/8)%8], topics[(i/64)%8])
		if _, err := a.Log(ctx, cairn.LogRequest{Kind: "message", Content: content, ScopeIDs: memory.Scope{SessionID: fmt.Sprintf("s%d", i%5)}}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := a.OptimizeIndex(ctx, true)
	if err != nil || len(st.Approximate) == 0 {
		t.Fatalf("status %+v %v: want the observations searched approximately from 1000 vectors", st, err)
	}
	a.Close()

	exact, err := cairn.Open(path, &cairn.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer exact.Close()
	if st, err := exact.IndexStatus(ctx); err != nil || len(st.Approximate) != 0 {
		t.Fatalf("by default: status %+v %v, want no approximate group", st, err)
	}
	ref, err := cairn.Open(path, &cairn.Options{Now: now, IndexDir: cairn.IndexInMemory})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for _, q := range []string{"why did the deploy fail?", "billing retry", "what changed in the parser schema"} {
		n := 40
		req := cairn.RetrieveRequest{Query: q, MaxCandidates: &n}
		got, err := exact.Retrieve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.Retrieve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Fatalf("%q: the files searched exactly answer unlike an index without centroids:\n%s\n%s", q, gj, wj)
		}
	}
}
