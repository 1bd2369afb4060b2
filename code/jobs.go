package code

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/cairnhq/cairn/memory"
)

// JobState is where an index job stands.
type JobState string

// Job states. Queued and running jobs are active; the others are final.
const (
	JobQueued    JobState = "queued"
	JobRunning   JobState = "running"
	JobDone      JobState = "done"
	JobFailed    JobState = "failed"
	JobCancelled JobState = "cancelled"
)

// JobStates lists the states in order, for reports.
func JobStates() []JobState {
	return []JobState{JobQueued, JobRunning, JobDone, JobFailed, JobCancelled}
}

// Final reports whether s is a state a job never leaves.
func (s JobState) Final() bool { return s == JobDone || s == JobFailed || s == JobCancelled }

// Defaults of JobOptions.
const (
	DefaultJobsRunning = 2
	DefaultJobsActive  = 16
	DefaultJobsKept    = 64
)

// JobOptions bound the jobs. Zero values take the defaults.
type JobOptions struct {
	// Running is how many jobs index at once (default 2); the others
	// wait, queued, in the order they came.
	Running int
	// Active bounds the jobs queued or running (default 16): one more is
	// a conflict.
	Active int
	// Kept is how many finished jobs stay for their status (default 64,
	// the oldest forgotten first).
	Kept int
	// Step, when set, is called (outside every lock) each time a running
	// job advances, after its status has been updated, with the job's
	// context (done once the job is cancelled).
	Step func(ctx context.Context, jobID string, p IndexProgress)
}

// JobError is why a job failed: a stable code and a caller-safe message.
type JobError struct {
	Code    memory.Code `json:"code"`
	Message string      `json:"message"`
}

// Job is an index job as its status reports it. Times are Unix
// milliseconds; StartedAt and FinishedAt are 0 until then.
type Job struct {
	ID        string        `json:"job_id"`
	RepoID    string        `json:"repo_id"`
	Root      string        `json:"root"`
	EpisodeID string        `json:"episode_id"`
	State     JobState      `json:"state"`
	Progress  IndexProgress `json:"progress"`
	CreatedAt int64         `json:"created_at"`
	StartedAt int64         `json:"started_at,omitempty"`
	// FinishedAt is set in a final state.
	FinishedAt int64 `json:"finished_at,omitempty"`
	// Result is the index's report, when done.
	Result *IndexReport `json:"result,omitempty"`
	// Error says why the job failed.
	Error *JobError `json:"error,omitempty"`
	// CancelledBy says who stopped a job, "caller" or "shutdown": set when
	// the cancellation is asked, while the job is still running.
	CancelledBy string `json:"cancelled_by,omitempty"`
}

// job is a Job with what runs it.
type job struct {
	Job
	req    IndexRequest
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// Jobs runs index runs in the background, one per repository at a time,
// each writing its changes whole (IndexRequest.Whole): a job that fails,
// is cancelled or is stopped by Close leaves the repository as it was.
// Jobs live in the process: a restart forgets them. It is safe for
// concurrent use.
type Jobs struct {
	m    *Memory
	opts JobOptions
	// ctx ends every job on Close.
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	byID     map[string]*job
	byRepo   map[string]*job // the active job of each repository
	queue    []*job
	running  int
	finished []string // ids of finished jobs, oldest first
}

// ErrShutdown is the cause of the jobs Close stops.
var ErrShutdown = errors.New("the server is shutting down")

// errCancelled is the cause of a job cancelled by a caller.
var errCancelled = errors.New("cancelled by a caller")

// NewJobs returns a job runner over m.
func (m *Memory) NewJobs(o JobOptions) *Jobs {
	if o.Running <= 0 {
		o.Running = DefaultJobsRunning
	}
	if o.Active <= 0 {
		o.Active = DefaultJobsActive
	}
	if o.Kept <= 0 {
		o.Kept = DefaultJobsKept
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Jobs{m: m, opts: o, ctx: ctx, stop: stop, byID: map[string]*job{}, byRepo: map[string]*job{}}
}

// Start checks an index request as Index would and starts it as a job,
// or returns the repository's active job when it has one for the same
// root (started is then false, and the request's approval and episode are
// not used). Bad requests fail at once, with nothing queued.
func (js *Jobs) Start(ctx context.Context, in IndexRequest) (j Job, started bool, err error) {
	j, started, err = js.start(ctx, in)
	return j, started, timedOut(ctx, err)
}

// start is Start, its errors as the steps report them.
func (js *Jobs) start(ctx context.Context, in IndexRequest) (Job, bool, error) {
	root, err := CleanRoot(in.Root)
	if err != nil {
		return Job{}, false, err
	}
	if err := js.m.checkIndexRequest(&in, root); err != nil {
		return Job{}, false, err
	}
	if active, ok := js.active(in.RepoID); ok {
		if active.Root != root {
			return Job{}, false, memory.Errorf(memory.CodeConflict, "repository %s is being indexed from another root; give another repo_id for %s", in.RepoID, root)
		}
		return active, false, nil
	}
	prev, err := js.m.store.CodeRepo(ctx, in.RepoID)
	switch {
	case err == nil && prev.Root != root:
		return Job{}, false, memory.Errorf(memory.CodeConflict, "repository %s is registered at another root; give another repo_id for %s", in.RepoID, root)
	case err != nil && !memory.IsCode(err, memory.CodeNotFound):
		return Job{}, false, err
	}
	if _, err := js.m.episode(ctx, in.EpisodeID, in.SessionID, in.RepoID); err != nil {
		return Job{}, false, err
	}
	in.Root, in.Whole, in.Progress = root, true, nil
	return js.enqueue(in)
}

// active returns the repository's queued or running job.
func (js *Jobs) active(repoID string) (Job, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if j, ok := js.byRepo[repoID]; ok {
		return j.Job, true
	}
	return Job{}, false
}

// enqueue records a checked request as a queued job and runs it when a
// slot is free.
func (js *Jobs) enqueue(in IndexRequest) (Job, bool, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	switch {
	case js.closed:
		return Job{}, false, memory.Wrap(memory.CodeConflict, ErrShutdown, "the server is shutting down; index again once it is back")
	case js.byRepo[in.RepoID] != nil && js.byRepo[in.RepoID].Root != in.Root:
		return Job{}, false, memory.Errorf(memory.CodeConflict, "repository %s is being indexed from another root; give another repo_id for %s", in.RepoID, in.Root)
	case js.byRepo[in.RepoID] != nil:
		return js.byRepo[in.RepoID].Job, false, nil
	case len(js.byRepo) >= js.opts.Active:
		return Job{}, false, memory.Errorf(memory.CodeConflict, "%d index jobs are queued or running, the most this server keeps; try again when one has finished", js.opts.Active)
	}
	j := &job{Job: Job{ID: js.m.newID("job"), RepoID: in.RepoID, Root: in.Root, EpisodeID: in.EpisodeID, State: JobQueued,
		CreatedAt: js.m.nowMs()}, req: in, done: make(chan struct{})}
	js.byID[j.ID], js.byRepo[in.RepoID] = j, j
	js.queue = append(js.queue, j)
	js.m.log.Info("code index job queued", "job", j.ID, "repo", in.RepoID)
	js.dispatch()
	return j.Job, true, nil
}

// dispatch starts queued jobs while slots are free; js.mu is held.
func (js *Jobs) dispatch() {
	for js.running < js.opts.Running && len(js.queue) > 0 {
		j := js.queue[0]
		js.queue = js.queue[1:]
		ctx, cancel := context.WithCancelCause(js.ctx)
		j.cancel, j.State, j.StartedAt = cancel, JobRunning, js.m.nowMs()
		js.running++
		js.wg.Add(1)
		go js.run(ctx, j)
	}
}

// run indexes a job's repository and records how it ended.
func (js *Jobs) run(ctx context.Context, j *job) {
	defer js.wg.Done()
	req := j.req
	req.Step = func(p IndexProgress) {
		js.mu.Lock()
		j.Progress = p
		js.mu.Unlock()
		if js.opts.Step != nil {
			js.opts.Step(ctx, j.ID, p)
		}
	}
	rep, err := js.index(ctx, req)
	js.mu.Lock()
	defer js.mu.Unlock()
	j.cancel(nil)
	js.finish(j, rep, err, context.Cause(ctx))
	js.running--
	js.dispatch()
}

// index runs a job's index. A panic (a request's handler would have
// been recovered by the HTTP server) fails the job instead of ending the
// server.
func (js *Jobs) index(ctx context.Context, req IndexRequest) (rep IndexReport, err error) {
	defer func() {
		if r := recover(); r != nil {
			js.m.log.Error("code index job stopped by a panic", "repo", req.RepoID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = memory.Errorf(memory.CodeInternal, "the index stopped unexpectedly (the server's log says why); the repository's index is as it was unless its changes had been written")
		}
	}()
	return js.m.Index(ctx, req)
}

// finish records a job's end; js.mu is held.
func (js *Jobs) finish(j *job, rep IndexReport, err, cause error) {
	j.FinishedAt = js.m.nowMs()
	switch {
	case err == nil:
		j.State, j.Result = JobDone, &rep
	case errors.Is(cause, errCancelled) || errors.Is(cause, ErrShutdown):
		j.State = JobCancelled
	default:
		pub := memory.Public(err)
		j.State, j.Error = JobFailed, &JobError{Code: pub.Code, Message: pub.Message}
	}
	js.m.log.Info("code index job finished", "job", j.ID, "repo", j.RepoID, "state", j.State)
	delete(js.byRepo, j.RepoID)
	close(j.done)
	js.finished = append(js.finished, j.ID)
	for len(js.finished) > js.opts.Kept {
		delete(js.byID, js.finished[0])
		js.finished = js.finished[1:]
	}
}

// Get returns a job by id (not_found once forgotten or after a restart).
func (js *Jobs) Get(id string) (Job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.byID[id]
	if !ok {
		return Job{}, js.notFound(id)
	}
	return j.Job, nil
}

func (js *Jobs) notFound(id string) error {
	return memory.Errorf(memory.CodeNotFound, "no index job %q: the server that runs jobs keeps them until it restarts, the last %d finished ones only", id, js.opts.Kept)
}

// List returns the jobs kept, newest first; repoID, when set, keeps only
// that repository's.
func (js *Jobs) List(repoID string) []Job {
	js.mu.Lock()
	defer js.mu.Unlock()
	out := []Job{}
	for _, j := range js.byID {
		if repoID == "" || j.RepoID == repoID {
			out = append(out, j.Job)
		}
	}
	slices.SortFunc(out, func(a, b Job) int {
		return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), strings.Compare(b.ID, a.ID))
	})
	return out
}

// Cancel asks a job to stop and returns it as it stands: a queued one is
// cancelled at once and never runs; a running one stops at its next file
// (or its transaction rolls back) and reads cancelled once it has ended
// (Wait). Either leaves the repository as it was, unless the job's
// transaction had already committed: it then ends done. A job that
// already ended is returned unchanged.
func (js *Jobs) Cancel(id string) (Job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.byID[id]
	if !ok {
		return Job{}, js.notFound(id)
	}
	js.stopJob(j, errCancelled)
	return j.Job, nil
}

// stopJob cancels a queued or running job with cause; js.mu is held.
func (js *Jobs) stopJob(j *job, cause error) {
	by := "caller"
	if errors.Is(cause, ErrShutdown) {
		by = "shutdown"
	}
	switch j.State {
	case JobQueued:
		js.queue = slices.DeleteFunc(js.queue, func(q *job) bool { return q == j })
		j.CancelledBy = by
		js.finish(j, IndexReport{}, cause, cause)
	case JobRunning:
		if j.CancelledBy == "" {
			j.CancelledBy = by
		}
		j.cancel(cause)
	}
}

// Wait waits for a job to end, or for ctx: then it returns the job as it
// stands with ctx's error (timeout when ctx's time limit passed).
func (js *Jobs) Wait(ctx context.Context, id string) (Job, error) {
	js.mu.Lock()
	j, ok := js.byID[id]
	js.mu.Unlock()
	if !ok {
		return Job{}, js.notFound(id)
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		cur, _ := js.Get(id)
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return cur, memory.Wrap(memory.CodeTimeout, ctx.Err(), "the call ran past its time limit; index job %s goes on in the background (code_index_status follows it)", id)
		}
		return cur, memory.Wrap(memory.CodeInvalidParams, ctx.Err(), "the call was cancelled; index job %s goes on in the background", id)
	}
	return js.Get(id)
}

// JobCounts are the jobs kept, by state, and the files and entities the
// running ones have read so far.
type JobCounts struct {
	ByState      map[JobState]int
	FilesDone    int
	FilesTotal   int
	EntitiesRead int
}

// Counts reports the jobs kept, by state, and the running ones' progress.
func (js *Jobs) Counts() JobCounts {
	js.mu.Lock()
	defer js.mu.Unlock()
	c := JobCounts{ByState: map[JobState]int{}}
	for _, s := range JobStates() {
		c.ByState[s] = 0
	}
	for _, j := range js.byID {
		c.ByState[j.State]++
		if j.State == JobRunning {
			c.FilesDone += j.Progress.FilesDone
			c.FilesTotal += j.Progress.FilesTotal
			c.EntitiesRead += j.Progress.Entities
		}
	}
	return c
}

// Close stops every job (each leaves its repository as it was, unless
// its transaction had already committed) and waits for them to end.
// Later Starts are refused.
func (js *Jobs) Close() {
	js.shutdown()
	js.wg.Wait()
	js.stop()
}

// shutdown refuses new jobs and stops every active one, without waiting.
func (js *Jobs) shutdown() {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.closed = true
	for _, j := range slices.Clone(js.queue) {
		js.stopJob(j, ErrShutdown)
	}
	for _, j := range js.byRepo {
		js.stopJob(j, ErrShutdown)
	}
}

// RepoState is a repository as its last completed index left it.
type RepoState struct {
	RepoID string `json:"repo_id"`
	// Indexed says an index of it has completed; IndexedAt is when (Unix
	// milliseconds; 0 when never).
	Indexed   bool  `json:"indexed"`
	IndexedAt int64 `json:"indexed_at"`
	// Files counts its file records; Entities its PROPOSED and
	// AUTHORITATIVE entities.
	Files    int `json:"files"`
	Entities int `json:"entities"`
}

// RepoState reads a repository's state; one never indexed is reported
// with Indexed false and zero counts.
func (m *Memory) RepoState(ctx context.Context, repoID string) (RepoState, error) {
	st, err := m.repoState(ctx, repoID)
	return st, timedOut(ctx, err)
}

// repoState is RepoState, its errors as the store reports them.
func (m *Memory) repoState(ctx context.Context, repoID string) (RepoState, error) {
	st := RepoState{RepoID: repoID}
	r, err := m.store.CodeRepo(ctx, repoID)
	switch {
	case memory.IsCode(err, memory.CodeNotFound):
		return st, nil
	case err != nil:
		return st, err
	}
	st.IndexedAt, st.Indexed = r.IndexedAt, r.IndexedAt > 0
	files, err := m.store.CodeFiles(ctx, repoID)
	if err != nil {
		return st, err
	}
	live, err := m.store.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: repoID, States: []memory.CodeState{memory.StateProposed, memory.StateAuthoritative}})
	if err != nil {
		return st, err
	}
	st.Files, st.Entities = len(files), len(live)
	return st, nil
}
