package code_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// repoSnapshot is everything an index writes for a repository: its
// entities (every state), file records, ledger length and indexed_at.
type repoSnapshot struct {
	entities  map[string]memory.CodeEntity
	files     map[string]memory.CodeFile
	ledger    int
	indexedAt int64
}

func snapshot(t *testing.T, f *fixture, repo string) repoSnapshot {
	t.Helper()
	s := repoSnapshot{entities: map[string]memory.CodeEntity{}, files: map[string]memory.CodeFile{}}
	ents, err := f.store.CodeEntities(f.ctx, memory.CodeEntityFilter{RepoID: repo})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		s.entities[e.Key] = e
		log, err := f.store.CodeLedger(f.ctx, repo, e.Key)
		if err != nil {
			t.Fatal(err)
		}
		s.ledger += len(log)
	}
	files, err := f.store.CodeFiles(f.ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, fl := range files {
		s.files[fl.Path] = fl
	}
	if r, err := f.store.CodeRepo(f.ctx, repo); err == nil {
		s.indexedAt = r.IndexedAt
	}
	return s
}

func (s repoSnapshot) equal(o repoSnapshot) bool {
	return maps.Equal(s.entities, o.entities) && maps.Equal(s.files, o.files) && s.ledger == o.ledger && s.indexedAt == o.indexedAt
}

// liveKeys lists the PROPOSED and AUTHORITATIVE entities' keys.
func (s repoSnapshot) liveKeys() []string {
	var out []string
	for k, e := range s.entities {
		if e.State == memory.StateProposed || e.State == memory.StateAuthoritative {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// twentyFiles is a repository of 20 files, f00.go to f19.go, one
// function each.
func twentyFiles() map[string]string {
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("f%02d.go", i)] = fmt.Sprintf("package p\n\nfunc F%d() int { return %d }\n", i, i)
	}
	return files
}

// editTree changes the tree a second index reads: ten files edited, five
// removed, five added. It returns the live keys a complete index of it
// holds.
func editTree(t *testing.T, f *fixture) []string {
	t.Helper()
	for i := range 10 {
		rel := fmt.Sprintf("f%02d.go", i)
		write(t, f.root, rel, fmt.Sprintf("package p\n\nfunc F%d() int { return %d * 2 }\n", i, i))
		touch(t, f.root, rel, time.Hour)
	}
	for i := 15; i < 20; i++ {
		if err := os.Remove(filepath.Join(f.root, fmt.Sprintf("f%02d.go", i))); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for i := range 5 {
		write(t, f.root, fmt.Sprintf("g%02d.go", i), fmt.Sprintf("package p\n\nfunc G%d() {}\n", i))
		want = append(want, fmt.Sprintf("g%02d.go::G%d", i, i))
	}
	for i := range 15 {
		want = append(want, fmt.Sprintf("f%02d.go::F%d", i, i))
	}
	slices.Sort(want)
	return want
}

// A job stopped at any point before its transaction commits, by a caller
// or by the server's shutdown, leaves every record of the repository as
// the last completed index left it; a job left to run leaves exactly the
// new tree's entities, all promoted.
func TestJobStoppedLeavesThePreviousIndex(t *testing.T) {
	stops := []struct {
		name  string
		phase string
		files int
		how   func(js *code.Jobs, id string)
		by    string
	}{
		{"cancel while reading", code.PhaseReading, 12, func(js *code.Jobs, id string) { js.Cancel(id) }, "caller"},
		{"cancel after the first file", code.PhaseReading, 1, func(js *code.Jobs, id string) { js.Cancel(id) }, "caller"},
		{"cancel while listing", code.PhaseListing, 0, func(js *code.Jobs, id string) { js.Cancel(id) }, "caller"},
		{"cancel as it commits", code.PhaseCommitting, 20, func(js *code.Jobs, id string) { js.Cancel(id) }, "caller"},
		{"shutdown while reading", code.PhaseReading, 7, func(js *code.Jobs, id string) { js.Shutdown() }, "shutdown"},
	}
	for _, tc := range stops {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, twentyFiles())
			if _, err := f.mem.Index(f.ctx, code.IndexRequest{Root: f.root, RepoID: "r"}); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, f, "r")
			after := editTree(t, f)
			var js *code.Jobs
			stopped := 0
			js = f.mem.NewJobs(code.JobOptions{Step: func(_ context.Context, id string, p code.IndexProgress) {
				if p.Phase == tc.phase && p.FilesDone == tc.files && stopped == 0 {
					stopped++
					tc.how(js, id)
				}
			}})
			defer js.Close()
			j, started, err := js.Start(f.ctx, code.IndexRequest{Root: f.root, RepoID: "r"})
			if err != nil || !started {
				t.Fatalf("start: %+v %v %v", j, started, err)
			}
			end, err := js.Wait(f.ctx, j.ID)
			if err != nil || end.State != code.JobCancelled || end.CancelledBy != tc.by || end.Result != nil || stopped != 1 {
				t.Fatalf("stopped job: %+v, %v (stopped %d times)", end, err, stopped)
			}
			if got := snapshot(t, f, "r"); !got.equal(before) {
				t.Fatalf("a stopped job changed the repository: live %v, before %v", got.liveKeys(), before.liveKeys())
			}
			if tc.by == "shutdown" {
				if _, _, err := js.Start(f.ctx, code.IndexRequest{Root: f.root, RepoID: "r"}); memory.CodeOf(err) != memory.CodeConflict {
					t.Fatalf("a job started after shutdown: %v", err)
				}
				return
			}
			j, _, err = js.Start(f.ctx, code.IndexRequest{Root: f.root, RepoID: "r"})
			if err != nil {
				t.Fatal(err)
			}
			end, err = js.Wait(f.ctx, j.ID)
			if err != nil || end.State != code.JobDone || end.Result == nil || end.Result.Entities != len(after) {
				t.Fatalf("job to its end: %+v, %v", end, err)
			}
			got := snapshot(t, f, "r")
			if !slices.Equal(got.liveKeys(), after) {
				t.Fatalf("live entities after the job: %v, want %v", got.liveKeys(), after)
			}
			for _, k := range after {
				if e := got.entities[k]; e.State != memory.StateAuthoritative {
					t.Errorf("%s is %s after the job, want AUTHORITATIVE", k, e.State)
				}
			}
			if got.indexedAt <= before.indexedAt || end.Progress.FilesDone != 20 || end.Progress.FilesTotal != 20 {
				t.Fatalf("indexed_at %d (before %d), progress %+v", got.indexedAt, before.indexedAt, end.Progress)
			}
		})
	}
}

// A whole job writes what a batched index of the same tree writes.
func TestJobWritesWhatIndexWrites(t *testing.T) {
	batched, whole := newFixture(t, twentyFiles()), newFixture(t, twentyFiles())
	js := whole.mem.NewJobs(code.JobOptions{})
	defer js.Close()
	for round := range 2 {
		rep, err := batched.mem.Index(batched.ctx, code.IndexRequest{Root: batched.root, RepoID: "r"})
		if err != nil {
			t.Fatal(err)
		}
		j, _, err := js.Start(whole.ctx, code.IndexRequest{Root: whole.root, RepoID: "r"})
		if err != nil {
			t.Fatal(err)
		}
		end, err := js.Wait(whole.ctx, j.ID)
		if err != nil || end.State != code.JobDone {
			t.Fatalf("round %d: %+v %v", round, end, err)
		}
		got := *end.Result
		got.Root, got.EpisodeID, rep.Root, rep.EpisodeID = "", "", "", ""
		if fmt.Sprint(got) != fmt.Sprint(rep) {
			t.Fatalf("round %d: job reported %+v, index %+v", round, got, rep)
		}
		a, b := snapshot(t, batched, "r"), snapshot(t, whole, "r")
		if !slices.Equal(a.liveKeys(), b.liveKeys()) || a.ledger != b.ledger {
			t.Fatalf("round %d: batched %v (%d ledger), whole %v (%d)", round, a.liveKeys(), a.ledger, b.liveKeys(), b.ledger)
		}
		for k, e := range a.entities {
			if o := b.entities[k]; o.State != e.State || o.ArtifactHash != e.ArtifactHash {
				t.Fatalf("round %d: %s batched %s %s, whole %s %s", round, k, e.State, e.ArtifactHash, o.State, o.ArtifactHash)
			}
		}
		if round == 0 {
			editTree(t, batched)
			editTree(t, whole)
		}
	}
}

// One job per repository: a second request for it returns the running
// job; past Running jobs the rest queue; past Active a request is a
// conflict; a queued job cancelled never runs.
func TestJobsPerRepositoryAndBounds(t *testing.T) {
	f := newFixture(t, twentyFiles())
	other := t.TempDir()
	write(t, other, "o.go", "package o\n\nfunc O() {}\n")
	third := t.TempDir()
	write(t, third, "t.go", "package t\n\nfunc T() {}\n")
	release, reached := make(chan struct{}), make(chan string, 1)
	js := f.mem.NewJobs(code.JobOptions{Running: 1, Active: 2, Step: func(_ context.Context, id string, p code.IndexProgress) {
		if p.Phase == code.PhaseListing && len(reached) == 0 {
			select {
			case reached <- id:
				<-release
			default:
			}
		}
	}})
	defer js.Close()
	first, started, err := js.Start(f.ctx, code.IndexRequest{Root: f.root, RepoID: "r"})
	if err != nil || !started {
		t.Fatal(first, err)
	}
	if id := <-reached; id != first.ID {
		t.Fatalf("hook saw %s, want %s", id, first.ID)
	}
	again, started, err := js.Start(f.ctx, code.IndexRequest{Root: f.root, RepoID: "r", Approval: "none"})
	if err != nil || started || again.ID != first.ID || again.State != code.JobRunning {
		t.Fatalf("second request for the repository: %+v started=%v %v", again, started, err)
	}
	queued, started, err := js.Start(f.ctx, code.IndexRequest{Root: other, RepoID: "o"})
	if err != nil || !started || queued.State != code.JobQueued {
		t.Fatalf("second repository past Running: %+v %v", queued, err)
	}
	if _, _, err := js.Start(f.ctx, code.IndexRequest{Root: third, RepoID: "t"}); memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("third repository past Active: %v; want conflict", err)
	}
	if _, _, err := js.Start(f.ctx, code.IndexRequest{Root: other, RepoID: "r"}); memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("another root under the id of a repository being indexed: %v; want conflict", err)
	}
	c, err := js.Cancel(queued.ID)
	if err != nil || c.State != code.JobCancelled || c.CancelledBy != "caller" || c.StartedAt != 0 {
		t.Fatalf("cancelling a queued job: %+v %v", c, err)
	}
	counts := js.Counts()
	if counts.ByState[code.JobRunning] != 1 || counts.ByState[code.JobCancelled] != 1 || counts.ByState[code.JobQueued] != 0 {
		t.Fatalf("counts while r runs: %+v", counts)
	}
	close(release)
	end, err := js.Wait(f.ctx, first.ID)
	if err != nil || end.State != code.JobDone {
		t.Fatalf("first job: %+v %v", end, err)
	}
	if _, err := f.store.CodeRepo(f.ctx, "o"); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("the cancelled queued job registered its repository: %v", err)
	}
	list := js.List("")
	if len(list) != 2 || list[0].ID != queued.ID || list[1].ID != first.ID {
		t.Fatalf("list, newest first: %+v", list)
	}
	if l := js.List("r"); len(l) != 1 || l[0].ID != first.ID {
		t.Fatalf("list of r: %+v", l)
	}
	if _, err := js.Get("job_nope"); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("unknown job: %v", err)
	}
}

// Bad requests fail at once, with nothing queued; a job that fails says
// why with a stable code; waiting past a deadline is timeout while the
// job goes on.
func TestJobErrors(t *testing.T) {
	f := newFixture(t, twentyFiles())
	release := make(chan struct{})
	var js *code.Jobs
	js = f.mem.NewJobs(code.JobOptions{Step: func(_ context.Context, id string, p code.IndexProgress) {
		if p.Phase != code.PhaseCommitting {
			return
		}
		<-release
		// Another writer proposes new text for an entity the job read:
		// the job's guard on it fails and nothing of the job is written.
		if _, err := f.mem.Propose(f.ctx, code.ProposeRequest{RepoID: "r", Key: "f03.go::F3", Content: "func F3() int { return -3 }",
			EpisodeID: "p1", SessionID: "s"}); err != nil {
			t.Errorf("propose: %v", err)
		}
	}})
	defer js.Close()
	for _, bad := range []code.IndexRequest{
		{Root: filepath.Join(f.root, "missing"), RepoID: "r"},
		{Root: f.root, RepoID: "bad id!"},
		{Root: f.root, RepoID: "r", Approval: "rejected"},
	} {
		if _, _, err := js.Start(f.ctx, bad); memory.CodeOf(err) != memory.CodeInvalidParams && memory.CodeOf(err) != memory.CodeNotFound {
			t.Fatalf("%+v: %v; want invalid_params or not_found", bad, err)
		}
	}
	if len(js.List("")) != 0 {
		t.Fatalf("bad requests left jobs: %+v", js.List(""))
	}
	if _, err := f.mem.Index(f.ctx, code.IndexRequest{Root: f.root, RepoID: "r"}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, f, "r")
	editTree(t, f)
	j, _, err := js.Start(f.ctx, code.IndexRequest{Root: f.root, RepoID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	past, cancel := context.WithDeadline(f.ctx, time.Now().Add(-time.Second))
	defer cancel()
	if _, _, err := js.Start(past, code.IndexRequest{Root: f.root, RepoID: "other"}); memory.CodeOf(err) != memory.CodeTimeout {
		t.Fatalf("starting a job past the call's deadline: %v; want timeout", err)
	}
	cur, err := js.Wait(past, j.ID)
	if memory.CodeOf(err) != memory.CodeTimeout || cur.State.Final() {
		t.Fatalf("waiting past a deadline: %+v %v; want timeout, the job still active", cur, err)
	}
	close(release)
	end, err := js.Wait(f.ctx, j.ID)
	if err != nil || end.State != code.JobFailed || end.Error == nil || end.Error.Code != memory.CodeConflict {
		t.Fatalf("job whose guard failed: %+v %v; want failed with conflict", end, err)
	}
	got := snapshot(t, f, "r")
	if !slices.Equal(got.liveKeys(), before.liveKeys()) || got.entities["f00.go::F0"] != before.entities["f00.go::F0"] {
		t.Fatalf("the failed job wrote: live %v, before %v", got.liveKeys(), before.liveKeys())
	}
	if _, err := os.Stat(filepath.Join(f.root, "g00.go")); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.entities["g00.go::G0"]; ok {
		t.Fatal("the failed job wrote a new file's entity")
	}
}

// panickyStore panics when the index lists a repository's files.
type panickyStore struct{ memory.CodeStore }

func (panickyStore) CodeFiles(context.Context, string) ([]memory.CodeFile, error) {
	panic("listing files")
}

// A job that panics fails with internal_error, and the jobs go on.
func TestJobPanicFailsTheJob(t *testing.T) {
	ps := &panickyStore{}
	f := newFixture(t, twentyFiles(), func(s *setup) { s.store = ps })
	ps.CodeStore = f.store
	js := f.mem.NewJobs(code.JobOptions{})
	defer js.Close()
	j, _, err := js.Start(f.ctx, code.IndexRequest{Root: f.root, RepoID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	end, err := js.Wait(f.ctx, j.ID)
	if err != nil || end.State != code.JobFailed || end.Error.Code != memory.CodeInternal || strings.Contains(end.Error.Message, "listing files") {
		t.Fatalf("a panicking job: %+v %v", end, err)
	}
	if c := js.Counts(); c.ByState[code.JobFailed] != 1 || c.ByState[code.JobRunning] != 0 {
		t.Fatalf("counts: %+v", c)
	}
}
