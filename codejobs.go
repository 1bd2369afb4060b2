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
	// CodeIndexResult is code_index's answer (see code.IndexResult).
	CodeIndexResult = code.IndexResult
	// CodeIndexJobRef names an index job.
	CodeIndexJobRef = code.JobRef
	// CodeIndexJobsRequest lists index jobs.
	CodeIndexJobsRequest = code.JobsRequest
	// CodeIndexJobList lists the index jobs a server keeps, newest first.
	CodeIndexJobList = code.JobList
)

// CodeIndexJobStates lists the states of an index job in order: queued,
// running, done, failed, cancelled.
func CodeIndexJobStates() []code.JobState { return code.JobStates() }

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
// the job already indexing it (code.Jobs.Answer); with in.Wait it waits
// for the job within ctx. Only engines serving the network faces run
// jobs: elsewhere it is feature_disabled.
func (e *Engine) StartCodeIndex(ctx context.Context, in CodeIndexRequest) (CodeIndexResult, error) {
	if e.codeJobs == nil {
		return CodeIndexResult{}, noCodeJobs()
	}
	root, err := code.AllowedRoot(in.Root, *e.codeRoots)
	if err != nil {
		return CodeIndexResult{}, err
	}
	return e.codeJobs.Answer(ctx, code.IndexRequest{Root: root, RepoID: in.RepoID, Approval: code.Approval(in.Approval),
		EpisodeID: in.EpisodeID, SessionID: in.SessionID}, in.Wait)
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
// end (code.Jobs.CancelAndWait).
func (e *Engine) CancelCodeIndex(ctx context.Context, in CodeIndexJobRef) (CodeIndexJob, error) {
	if e.codeJobs == nil {
		return CodeIndexJob{}, noCodeJobs()
	}
	return e.codeJobs.CancelAndWait(ctx, in.JobID)
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
// down, before letting requests in flight finish. Close does it too.
func (e *Engine) StopCodeIndexJobs() {
	if e.codeJobs != nil {
		e.codeJobs.Close()
	}
}

func noCodeJobs() error {
	return memory.Errorf(memory.CodeFeatureDisabled, "index jobs run only in a server (cairn serve); here code_index runs to its end in the call")
}
