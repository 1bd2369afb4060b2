package cairn

import (
	"context"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

type (
	// CodeIndexJobOptions bound the index jobs of a network engine.
	CodeIndexJobOptions = code.JobOptions
	// CodeIndexJob is an index job as code_index_status reports it.
	CodeIndexJob = code.Job
	// CodeIndexJobCounts are the jobs kept, by state, and the running
	// ones' progress.
	CodeIndexJobCounts = code.JobCounts
	// CodeIndexProgress is where an index job stands: its phase
	// ("listing", "reading", "gating", "committing"), files and entities.
	CodeIndexProgress = code.IndexProgress
	// CodeRepoState is a repository as its last completed index left it.
	CodeRepoState = code.RepoState
)

// CodeIndexJobStates lists the states of an index job in order: queued,
// running, done, failed, cancelled.
func CodeIndexJobStates() []code.JobState { return code.JobStates() }

// CodeIndexResult is code_index's answer. When the index ran to its end
// in the call (the CLI, MCP over stdio, or wait), State is "done" and the
// report's fields say what it did. When it runs in the background (the
// network faces), State is the job's ("queued" or "running"), the
// report's counts are zero, Job is the job to follow with
// code_index_status and Repository the repository as its last completed
// index left it.
type CodeIndexResult struct {
	code.IndexReport
	State      string         `json:"state"`
	Job        *CodeIndexJob  `json:"job,omitempty"`
	Repository *CodeRepoState `json:"repository,omitempty"`
}

// CodeIndexJobRef names an index job.
type CodeIndexJobRef struct {
	JobID string `json:"job_id" jsonschema:"the job's id, as code_index returned it"`
}

// CodeIndexJobsRequest lists index jobs.
type CodeIndexJobsRequest struct {
	RepoID string `json:"repo_id,omitempty" jsonschema:"only this repository's jobs"`
}

// CodeIndexJobList lists the index jobs a server keeps, newest first.
type CodeIndexJobList struct {
	Jobs []CodeIndexJob `json:"jobs"`
}

// codeIndex is the code_index tool: in the call on an engine without
// jobs, as a job on a network engine (waited for when asked).
func (e *Engine) codeIndex(ctx context.Context, in CodeIndexRequest) (CodeIndexResult, error) {
	if e.codeJobs == nil {
		rep, err := e.IndexCode(ctx, in, nil)
		if err != nil {
			return CodeIndexResult{}, err
		}
		return CodeIndexResult{IndexReport: rep, State: string(code.JobDone)}, nil
	}
	return e.StartCodeIndex(ctx, in)
}

// StartCodeIndex starts indexing a repository in the background, or joins
// the job already indexing it, and answers at once with the job and the
// repository's state; with in.Wait it waits for the job to end within
// ctx and answers as an index in the call would. Only engines serving
// the network faces run jobs: elsewhere it is feature_disabled.
func (e *Engine) StartCodeIndex(ctx context.Context, in CodeIndexRequest) (CodeIndexResult, error) {
	if e.codeJobs == nil {
		return CodeIndexResult{}, noCodeJobs()
	}
	root, err := code.AllowedRoot(in.Root, *e.codeRoots)
	if err != nil {
		return CodeIndexResult{}, err
	}
	job, _, err := e.codeJobs.Start(ctx, code.IndexRequest{Root: root, RepoID: in.RepoID, Approval: code.Approval(in.Approval),
		EpisodeID: in.EpisodeID, SessionID: in.SessionID})
	if err != nil {
		return CodeIndexResult{}, err
	}
	if in.Wait {
		return e.waitCodeIndex(ctx, job.ID)
	}
	repo, err := e.code.RepoState(ctx, job.RepoID)
	if err != nil {
		return CodeIndexResult{}, err
	}
	return CodeIndexResult{IndexReport: code.IndexReport{RepoID: job.RepoID, Root: job.Root, EpisodeID: job.EpisodeID,
		SkippedFiles: []code.SkippedFile{}, Fallbacks: []code.SkippedFile{}}, State: string(job.State), Job: &job, Repository: &repo}, nil
}

// waitCodeIndex waits for a job within ctx and answers with its report,
// or with why it did not finish: its failure's code, conflict when it was
// cancelled, timeout when ctx's time limit passed first (the job goes on).
func (e *Engine) waitCodeIndex(ctx context.Context, id string) (CodeIndexResult, error) {
	job, err := e.codeJobs.Wait(ctx, id)
	switch {
	case err != nil:
		return CodeIndexResult{}, err
	case job.State == code.JobFailed:
		return CodeIndexResult{}, memory.Errorf(job.Error.Code, "%s", job.Error.Message)
	case job.State == code.JobCancelled:
		return CodeIndexResult{}, memory.Errorf(memory.CodeConflict, "index job %s was cancelled (by the %s) before its changes were written; the repository's index is as it was", id, job.CancelledBy)
	}
	return CodeIndexResult{IndexReport: *job.Result, State: string(job.State), Job: &job}, nil
}

// CodeIndexStatus reports an index job: its state, progress, and its
// report once done or its error once failed.
func (e *Engine) CodeIndexStatus(ctx context.Context, in CodeIndexJobRef) (CodeIndexJob, error) {
	if e.codeJobs == nil {
		return CodeIndexJob{}, noCodeJobs()
	}
	return e.codeJobs.Get(in.JobID)
}

// CodeIndexJobs lists the index jobs the server keeps, newest first.
func (e *Engine) CodeIndexJobs(ctx context.Context, in CodeIndexJobsRequest) (CodeIndexJobList, error) {
	if e.codeJobs == nil {
		return CodeIndexJobList{}, noCodeJobs()
	}
	return CodeIndexJobList{Jobs: e.codeJobs.List(in.RepoID)}, nil
}

// CancelCodeIndex stops an index job and waits, within ctx, for it to
// end; the job comes back as it then stands (cancelled, or done when its
// transaction had committed first).
func (e *Engine) CancelCodeIndex(ctx context.Context, in CodeIndexJobRef) (CodeIndexJob, error) {
	if e.codeJobs == nil {
		return CodeIndexJob{}, noCodeJobs()
	}
	job, err := e.codeJobs.Cancel(in.JobID)
	if err != nil || job.State.Final() {
		return job, err
	}
	if done, err := e.codeJobs.Wait(ctx, in.JobID); err == nil {
		return done, nil
	}
	return e.codeJobs.Get(in.JobID)
}

// CodeIndexJobCounts reports the index jobs by state and the running
// ones' progress; false when the engine runs none.
func (e *Engine) CodeIndexJobCounts() (CodeIndexJobCounts, bool) {
	if e.codeJobs == nil {
		return CodeIndexJobCounts{}, false
	}
	return e.codeJobs.Counts(), true
}

// StopCodeIndexJobs stops every index job (each leaves its repository
// as it was, unless its transaction had committed) and waits for them to
// end; later code_index calls are refused. A server calls it as it shuts
// down, before letting requests in flight finish, so that a call waiting
// on a job answers at once. Close does it too.
func (e *Engine) StopCodeIndexJobs() {
	if e.codeJobs != nil {
		e.codeJobs.Close()
	}
}

func noCodeJobs() error {
	return memory.Errorf(memory.CodeFeatureDisabled, "index jobs run only in a server (cairn serve); here code_index runs to its end in the call")
}
