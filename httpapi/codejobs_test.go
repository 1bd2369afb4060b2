package httpapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/httpapi"
)

// jobServer serves an engine of the network faces (code roots set) whose
// index jobs call hold at each step: hold may block (until the job's
// context ends, when the job is cancelled).
func jobServer(t *testing.T, opts *httpapi.Options, hold func(ctx context.Context, p cairn.CodeIndexProgress)) (*httptest.Server, string) {
	t.Helper()
	roots := t.TempDir()
	repo := filepath.Join(roots, "r")
	for i := range 10 {
		p := filepath.Join(repo, fmt.Sprintf("f%d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "package r\n\nfunc F%d() {}\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{CodeRootsOnly: true, CodeRoots: []string{roots},
		CodeIndexJobs: cairn.CodeIndexJobOptions{Step: func(ctx context.Context, _ string, p cairn.CodeIndexProgress) { hold(ctx, p) }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv := httptest.NewServer(httpapi.New(eng, opts))
	t.Cleanup(srv.Close)
	return srv, repo
}

type indexAnswer struct {
	State      string               `json:"state"`
	Files      int                  `json:"files"`
	Entities   int                  `json:"entities"`
	Job        *cairn.CodeIndexJob  `json:"job"`
	Repository *cairn.CodeRepoState `json:"repository"`
}

// Over HTTP, code_index answers at once with the job and the repository's
// last completed index; a second call joins the running job; the job's
// status, the list of jobs and /metrics follow it; wait: true answers
// with the report; DELETE cancels a running job and leaves the previous
// index as it was.
func TestCodeIndexRunsAsAJob(t *testing.T) {
	// A job holds after its fourth file: with hold 1 until it is released
	// or cancelled, with hold 2 until it is cancelled; with 0 it does not.
	const (
		noHold = iota
		untilReleased
		untilCancelled
	)
	var hold atomic.Int32
	hold.Store(untilReleased)
	reached, release := make(chan cairn.CodeIndexProgress, 1), make(chan struct{})
	srv, repo := jobServer(t, nil, func(ctx context.Context, p cairn.CodeIndexProgress) {
		if p.Phase != "reading" || p.FilesDone != 4 {
			return
		}
		switch hold.Load() {
		case untilReleased:
			reached <- p
			select {
			case <-release:
			case <-ctx.Done():
			}
		case untilCancelled:
			reached <- p
			<-ctx.Done()
		}
	})
	body := fmt.Sprintf(`{"root":%q,"repo_id":"r"}`, repo)
	var first indexAnswer
	r := do(t, srv, "POST", "/v1/code/index", body)
	r.decode(t, &first)
	if r.status != 200 || first.Job == nil || first.Repository == nil || first.Repository.Indexed || first.Files != 0 ||
		(first.State != "running" && first.State != "queued") || string(first.Job.State) != first.State {
		t.Fatalf("index answer: %d %s", r.status, r.body)
	}
	<-reached
	var again indexAnswer
	do(t, srv, "POST", "/v1/code/index", body).decode(t, &again)
	if again.Job == nil || again.Job.ID != first.Job.ID || again.State != "running" || again.Job.Progress.FilesDone != 4 || again.Job.Progress.FilesTotal != 10 {
		t.Fatalf("second call while the job runs: %+v", again)
	}
	var st cairn.CodeIndexJob
	r = do(t, srv, "GET", "/v1/code/index/jobs/"+first.Job.ID, "")
	r.decode(t, &st)
	if r.status != 200 || st.State != "running" || st.Progress.Phase != "reading" || st.Progress.Entities != 4 || st.Result != nil {
		t.Fatalf("status while running: %d %s", r.status, r.body)
	}
	m := string(do(t, srv, "GET", "/metrics", "").body)
	for _, want := range []string{`cairn_code_index_jobs{state="running"} 1`, `cairn_code_index_jobs{state="done"} 0`,
		`cairn_code_index_job_files{kind="done"} 4`, `cairn_code_index_job_files{kind="total"} 10`, `cairn_code_index_job_entities 4`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Released, the job runs to its end; wait: true joins it or, when it
	// has ended already, indexes again (nothing changed): either way the
	// answer is a report.
	hold.Store(noHold)
	close(release)
	var done indexAnswer
	r = do(t, srv, "POST", "/v1/code/index", strings.TrimSuffix(body, "}")+`,"wait":true}`)
	r.decode(t, &done)
	if r.status != 200 || done.State != "done" || done.Job == nil || done.Job.Result == nil {
		t.Fatalf("wait: %d %s", r.status, r.body)
	}
	r = do(t, srv, "GET", "/v1/code/index/jobs/"+first.Job.ID, "")
	r.decode(t, &st)
	if st.State != "done" || st.Result == nil || st.Result.Entities != 10 || st.Result.Promoted != 10 || st.FinishedAt == 0 {
		t.Fatalf("status once done: %s", r.body)
	}

	// A new tree, a job cancelled while it reads: the repository is as
	// the first job left it.
	for i := range 10 {
		p := filepath.Join(repo, fmt.Sprintf("f%d.go", i))
		os.WriteFile(p, fmt.Appendf(nil, "package r\n\nfunc G%d() {}\n", i), 0o644)
		later := time.Now().Add(time.Hour)
		os.Chtimes(p, later, later)
	}
	before := do(t, srv, "GET", "/v1/code/entities?repo_id=r", "").body
	hold.Store(untilCancelled)
	var second indexAnswer
	do(t, srv, "POST", "/v1/code/index", body).decode(t, &second)
	if second.Job == nil || second.Job.ID == first.Job.ID || second.Repository == nil || !second.Repository.Indexed ||
		second.Repository.Entities != 10 || second.Repository.Files != 10 || second.Repository.IndexedAt == 0 {
		t.Fatalf("second job's answer: %+v", second)
	}
	<-reached
	r = do(t, srv, "DELETE", "/v1/code/index/jobs/"+second.Job.ID, "")
	r.decode(t, &st)
	if r.status != 200 || st.State != "cancelled" || st.CancelledBy != "caller" {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	if after := do(t, srv, "GET", "/v1/code/entities?repo_id=r", "").body; string(after) != string(before) {
		t.Fatalf("a cancelled job changed the entities:\n%s\nwas\n%s", after, before)
	}
	var list cairn.CodeIndexJobList
	do(t, srv, "GET", "/v1/code/index/jobs?repo_id=r", "").decode(t, &list)
	if len(list.Jobs) < 2 || list.Jobs[0].ID != second.Job.ID || list.Jobs[0].State != "cancelled" {
		t.Fatalf("jobs of r: %+v", list)
	}
	if r := do(t, srv, "DELETE", "/v1/code/index/jobs/"+second.Job.ID, ""); r.status != 200 {
		t.Fatalf("cancelling a cancelled job: %d %s", r.status, r.body)
	}
	for _, p := range []string{"/v1/code/index/jobs/job_nope"} {
		if r := do(t, srv, "GET", p, ""); r.status != 404 || r.code() != "not_found" {
			t.Errorf("GET %s: %d %s", p, r.status, r.body)
		}
		if r := do(t, srv, "DELETE", p, ""); r.status != 404 || r.code() != "not_found" {
			t.Errorf("DELETE %s: %d %s", p, r.status, r.body)
		}
	}
}

// wait: true past the request's time limit answers 504 timeout, never
// db_error, and the job goes on until cancelled.
func TestCodeIndexWaitPastTheTimeLimit(t *testing.T) {
	srv, repo := jobServer(t, &httpapi.Options{RequestTimeout: 200 * time.Millisecond}, func(ctx context.Context, p cairn.CodeIndexProgress) {
		if p.Phase == "reading" && p.FilesDone == 2 {
			<-ctx.Done() // held until cancelled
		}
	})
	r := do(t, srv, "POST", "/v1/code/index", fmt.Sprintf(`{"root":%q,"repo_id":"r","wait":true}`, repo))
	if r.status != 504 || r.code() != "timeout" {
		t.Fatalf("wait past the time limit: %d %s; want 504 timeout", r.status, r.body)
	}
	var list cairn.CodeIndexJobList
	do(t, srv, "GET", "/v1/code/index/jobs", "").decode(t, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].State.Final() || !strings.Contains(string(r.body), list.Jobs[0].ID) {
		t.Fatalf("the job after the timeout: %+v (answer %s)", list, r.body)
	}
	var st cairn.CodeIndexJob
	r = do(t, srv, "DELETE", "/v1/code/index/jobs/"+list.Jobs[0].ID, "")
	r.decode(t, &st)
	if st.State != "cancelled" {
		t.Fatalf("cancel: %s", r.body)
	}
	if r := do(t, srv, "GET", "/v1/code/entities?repo_id=r", ""); r.status != 404 {
		t.Fatalf("a cancelled first job left the repository: %d %s", r.status, r.body)
	}
}
