package cairn

import (
	"context"
	"fmt"
	"github.com/cairnhq/cairn/internal/text"

	"github.com/cairnhq/cairn/index"
	"github.com/cairnhq/cairn/memory"
)

// IndexStatus is the retrieval index's state: where its files are, what
// they hold, and how far behind the database they are.
type IndexStatus struct {
	index.Status
	// Behind is how many changes of the database the files do not hold
	// yet: a new process replays them before its first answer.
	Behind int64 `json:"behind"`
}

// syncIndex brings the retrieval index up to the database.
func (e *Engine) syncIndex(ctx context.Context) error {
	return e.store.Snapshot(ctx, func(r memory.Reader) error { return e.index.Sync(ctx, r) })
}

// SizeText is the files' size for people ("53.8 MiB").
func (s IndexStatus) SizeText() string { return text.Bytes(s.Bytes) }

func (e *Engine) indexStatus() IndexStatus {
	st := e.index.Status()
	return IndexStatus{Status: st, Behind: st.Synced - st.Seq}
}

// IndexStatus syncs the retrieval index with the database and reports
// its state.
func (e *Engine) IndexStatus(ctx context.Context) (IndexStatus, error) {
	if err := e.syncIndex(ctx); err != nil {
		return IndexStatus{}, err
	}
	st := e.indexStatus()
	if remoteCaller(ctx) {
		st.Dir = e.hidePaths(st.Dir)
	}
	return st, nil
}

// RebuildIndex writes the retrieval index anew from the database (the
// progress function set at Open is told how far it is).
func (e *Engine) RebuildIndex(ctx context.Context) (IndexStatus, error) {
	err := e.store.Snapshot(ctx, func(r memory.Reader) error { return e.index.Rebuild(ctx, r) })
	if err != nil {
		return IndexStatus{}, err
	}
	return e.indexStatus(), nil
}

// VerifyIndex reads every file of the retrieval index and checks every
// checksum.
func (e *Engine) VerifyIndex(ctx context.Context) error {
	if err := e.syncIndex(ctx); err != nil {
		return err
	}
	return e.index.Verify()
}

// OptimizeIndex writes out what the database holds beyond the index's
// files and runs every merge that is due, however large. With wait it
// waits for another process's maintenance to end; without, it leaves the
// work to that process.
func (e *Engine) OptimizeIndex(ctx context.Context, wait bool) (IndexStatus, error) {
	err := e.store.Snapshot(ctx, func(r memory.Reader) error { return e.index.Flush(ctx, r, 0, wait) })
	if err != nil {
		return IndexStatus{}, err
	}
	return e.indexStatus(), nil
}

// IndexMaintenanceDue reports whether the retrieval index needs work this
// process leaves undone: a merge larger than a command's exit runs, or
// (read from the files alone, without opening the index) more changes in
// the database than the files hold than a new process should replay. A
// command that writes then starts cairn index optimize --background.
func (e *Engine) IndexMaintenanceDue(ctx context.Context) bool {
	if e.index.LargeMergeDue() {
		return true
	}
	var behind int64
	var ok bool
	err := e.store.Snapshot(ctx, func(r memory.Reader) error {
		var err error
		behind, ok, err = e.index.Behind(ctx, r)
		return err
	})
	return err == nil && ok && behind >= int64(e.index.FlushDocs())
}

// indexFinding checks the retrieval index: its files verify, this
// process could use them, and how far behind they are.
func (e *Engine) indexFinding(ctx context.Context, fix bool) (memory.Finding, []string, error) {
	f := memory.Finding{Check: "retrieval index", OK: true}
	var repaired []string
	err := e.VerifyIndex(ctx)
	if err != nil && fix && memory.CodeOf(err) == memory.CodeDBError {
		if _, rerr := e.RebuildIndex(ctx); rerr != nil {
			return f, nil, rerr
		}
		repaired = append(repaired, "rebuilt the retrieval index")
		err = e.VerifyIndex(ctx)
	}
	st := e.indexStatus()
	switch {
	case err != nil && memory.CodeOf(err) != memory.CodeDBError:
		return f, nil, err
	case err != nil:
		f.OK = false
		f.Detail = memory.Public(err).Message
		f.Fix = "run cairn doctor --fix (or cairn index rebuild): the index is derived from the database and is rebuilt from it"
	case st.InMemory && st.Dir != "":
		f.OK = false
		f.Detail = fmt.Sprintf("this process keeps the index in memory (%s), so each process rebuilds it", st.Reason)
		f.Fix = "upgrade cairn if the files are newer, or make " + st.Dir + " writable (or set CAIRN_INDEX_DIR)"
	case st.InMemory:
		f.Detail = "kept in each process's memory (CAIRN_INDEX_DIR=memory)"
	default:
		f.Detail = fmt.Sprintf("format %d, %s, %d documents (%d deleted), %s in %s; %d changes behind the database, merges pending: %v",
			st.Format, text.Plural(st.Segments, "segment"), st.Docs, st.Deleted, st.SizeText(), st.Dir, st.Behind, st.PendingMerges)
	}
	if st.LastError != "" && f.OK {
		f.Detail += "; last maintenance error: " + st.LastError
	}
	return f, repaired, nil
}
