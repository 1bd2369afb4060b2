package code

import (
	"context"

	"github.com/cairnhq/cairn/memory"
)

// IndexResult is code_index's answer. When the index ran to its end in
// the call (the CLI, MCP over stdio, or wait), State is "done" and the
// report's fields say what it did. When it runs in the background (the
// network faces), State is the job's ("queued" or "running"), the
// report's counts are zero, Job is the job to follow with
// code_index_status and Repository the repository as its last completed
// index left it.
type IndexResult struct {
	IndexReport
	State      string     `json:"state"`
	Job        *Job       `json:"job,omitempty"`
	Repository *RepoState `json:"repository,omitempty"`
}

// JobRef names an index job.
type JobRef struct {
	JobID string `json:"job_id" jsonschema:"the job's id, as code_index returned it"`
}

// JobsRequest lists index jobs.
type JobsRequest struct {
	RepoID string `json:"repo_id,omitempty" jsonschema:"only this repository's jobs"`
}

// JobList lists the index jobs a server keeps, newest first.
type JobList struct {
	Jobs []Job `json:"jobs"`
}

// Answer starts indexing a repository in the background, or joins the
// job already indexing it, and answers at once with the job and the
// repository's state; with wait it waits for the job to end within ctx
// and answers as an index in the call would.
func (js *Jobs) Answer(ctx context.Context, in IndexRequest, wait bool) (IndexResult, error) {
	job, _, err := js.Start(ctx, in)
	if err != nil {
		return IndexResult{}, err
	}
	if wait {
		return js.WaitResult(ctx, job.ID)
	}
	repo, err := js.m.RepoState(ctx, job.RepoID)
	if err != nil {
		return IndexResult{}, err
	}
	return IndexResult{IndexReport: IndexReport{RepoID: job.RepoID, Root: job.Root, EpisodeID: job.EpisodeID,
		SkippedFiles: []SkippedFile{}, Fallbacks: []SkippedFile{}}, State: string(job.State), Job: &job, Repository: &repo}, nil
}

// WaitResult waits for a job within ctx and answers with its report, or
// with why it did not finish: its failure's code, conflict when it was
// cancelled, timeout when ctx's time limit passed first (the job goes on).
func (js *Jobs) WaitResult(ctx context.Context, id string) (IndexResult, error) {
	job, err := js.Wait(ctx, id)
	switch {
	case err != nil:
		return IndexResult{}, err
	case job.State == JobFailed:
		return IndexResult{}, memory.Errorf(job.Error.Code, "%s", job.Error.Message)
	case job.State == JobCancelled:
		return IndexResult{}, memory.Errorf(memory.CodeConflict, "index job %s was cancelled (by the %s) before its changes were written; the repository's index is as it was", id, job.CancelledBy)
	}
	return IndexResult{IndexReport: *job.Result, State: string(job.State), Job: &job}, nil
}

// CancelAndWait stops an index job and waits, within ctx, for it to end;
// the job comes back as it then stands (cancelled, or done when its
// transaction had committed first).
func (js *Jobs) CancelAndWait(ctx context.Context, id string) (Job, error) {
	job, err := js.Cancel(id)
	if err != nil || job.State.Final() {
		return job, err
	}
	if done, err := js.Wait(ctx, id); err == nil {
		return done, nil
	}
	return js.Get(id)
}
