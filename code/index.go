package code

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// IndexRequest asks to index a repository root.
type IndexRequest struct {
	// Root is the repository's directory; RepoID names it (default: the
	// directory's base name). A repository id registered with another
	// root is a conflict.
	Root, RepoID string
	// Approval is gate B's input for the entities this index proposes:
	// implicit (default: the user asked for their own disk to be indexed),
	// approved, or none (leave them PROPOSED for a later promote).
	Approval Approval
	// EpisodeID and SessionID record the gate evaluations; defaults: a new
	// episode in session "code-index:<repo>".
	EpisodeID, SessionID string
	// Progress, when set, is called after each file.
	Progress func(done, total int)
	// Whole, when set, writes nothing until every file is read and the
	// gates are evaluated, then writes it all (files, entities, ledger,
	// the episode's gate results, the repository and its indexed_at) in
	// one transaction: a run stopped before that leaves the repository as
	// it was. The run's changes are held in memory meanwhile. Unset, files
	// are committed in batches as they are read.
	Whole bool
	// Step, when set, is called as the run advances (see IndexProgress).
	Step func(IndexProgress)
}

// SkippedFile is a file the index did not resolve, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// IndexReport says what an index did.
type IndexReport struct {
	RepoID    string `json:"repo_id"`
	Root      string `json:"root"`
	EpisodeID string `json:"episode_id"`
	// Files counts the source files seen; Changed those read and resolved
	// again; Unchanged those skipped because size and modification time
	// were the same; Removed those gone since the last index.
	Files     int `json:"files"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`
	Skipped   int `json:"skipped"`
	// Entities counts the live entities of the repository after the index;
	// Proposed the new or changed ones; Regex those resolved by the regex
	// fallback; Tombstoned those that left the disk.
	Entities   int `json:"entities"`
	Proposed   int `json:"proposed"`
	Promoted   int `json:"promoted"`
	Rejected   int `json:"rejected"`
	Tombstoned int `json:"tombstoned"`
	Regex      int `json:"regex"`
	// SkippedFiles and Fallbacks list up to 100 files each.
	SkippedFiles []SkippedFile `json:"skipped_files"`
	Fallbacks    []SkippedFile `json:"fallbacks"`
}

const listCap = 100

// sourceFile is a file the walk found.
type sourceFile struct {
	rel  string
	skip string
}

// Index walks a repository root and records its entities: new and changed
// ones are PROPOSED with their text as a code artifact, vanished ones are
// TOMBSTONED, and unless Approval is none the gates are evaluated for the
// proposed ones in the index's episode. Files whose size and modification
// time are unchanged since the last index are not read again.
func (m *Memory) Index(ctx context.Context, in IndexRequest) (IndexReport, error) {
	rep, err := m.indexRepo(ctx, in)
	return rep, timedOut(ctx, err)
}

// indexRepo is Index, its errors as the steps report them.
func (m *Memory) indexRepo(ctx context.Context, in IndexRequest) (IndexReport, error) {
	root, err := CleanRoot(in.Root)
	if err != nil {
		return IndexReport{}, err
	}
	if err := m.checkIndexRequest(&in, root); err != nil {
		return IndexReport{}, err
	}
	prev, err := m.store.CodeRepo(ctx, in.RepoID)
	switch {
	case err == nil && prev.Root != root:
		return IndexReport{}, memory.Errorf(memory.CodeConflict, "repository %s is registered at %s; give another repo_id for %s", in.RepoID, prev.Root, root)
	case err != nil && !memory.IsCode(err, memory.CodeNotFound):
		return IndexReport{}, err
	}
	ep, err := m.episode(ctx, in.EpisodeID, in.SessionID, in.RepoID)
	if err != nil {
		return IndexReport{}, err
	}
	if !in.Whole {
		if err := m.store.PutCodeRepo(ctx, memory.CodeRepo{ID: in.RepoID, Root: root, IndexedAt: prev.IndexedAt}); err != nil {
			return IndexReport{}, err
		}
	}
	sc := &repoScan{m: m, root: root, repoID: in.RepoID, episode: ep.ID, batch: &memory.CodeChange{}, whole: in.Whole, step: in.Step,
		rep: IndexReport{RepoID: in.RepoID, Root: root, EpisodeID: ep.ID, SkippedFiles: []SkippedFile{}, Fallbacks: []SkippedFile{}}}
	if err := sc.run(ctx, in.Progress); err != nil {
		return sc.rep, err
	}
	if in.Whole {
		if err := m.commitWhole(ctx, sc, in.Approval, ep); err != nil {
			return sc.rep, err
		}
	} else if err := m.gateProposed(ctx, sc, in.Approval, ep); err != nil {
		return sc.rep, err
	}
	rep := sc.rep
	live, err := m.store.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: in.RepoID, States: []memory.CodeState{memory.StateProposed, memory.StateAuthoritative}})
	if err != nil {
		return rep, err
	}
	rep.Entities = len(live)
	if !in.Whole {
		if err := m.store.PutCodeRepo(ctx, memory.CodeRepo{ID: in.RepoID, Root: root, IndexedAt: m.nowMs()}); err != nil {
			return rep, err
		}
	}
	embedded := m.embedPending(ctx)
	m.writeIndex(ctx)
	m.log.Info("code index", "repo", in.RepoID, "files", rep.Files, "changed", rep.Changed, "unchanged", rep.Unchanged,
		"removed", rep.Removed, "skipped", rep.Skipped, "proposed", rep.Proposed, "promoted", rep.Promoted,
		"tombstoned", rep.Tombstoned, "regex", rep.Regex, "embedded", embedded)
	return rep, nil
}

// checkIndexRequest checks a request's repository id and approval and
// sets the defaults.
func (m *Memory) checkIndexRequest(in *IndexRequest, root string) error {
	if in.RepoID == "" {
		in.RepoID = filepath.Base(root)
	}
	if !validID(in.RepoID) {
		return memory.Errorf(memory.CodeInvalidParams, "repo_id %q must be 1 to 128 letters, digits or _-.:@/", in.RepoID)
	}
	if in.Approval == "" {
		in.Approval = ApprovalImplicit
	}
	if !in.Approval.Valid() || in.Approval == ApprovalRejected {
		return memory.Errorf(memory.CodeInvalidParams, "approval %q is not one of implicit, approved, none", in.Approval)
	}
	if in.SessionID == "" {
		in.SessionID = "code-index:" + in.RepoID
	}
	if in.EpisodeID == "" {
		in.EpisodeID = m.newID("ep")
	}
	return nil
}

// gateProposed evaluates the gates for the entities the scan proposed,
// in batches, in episode ep (unless approval is none: then the episode
// is only recorded).
func (m *Memory) gateProposed(ctx context.Context, sc *repoScan, approval Approval, ep memory.Episode) error {
	proposed := sc.proposed
	if approval == ApprovalNone || len(proposed) == 0 {
		_, err := m.store.ApplyEpisode(ctx, memory.EpisodeChange{Episode: ep})
		return err
	}
	repo := memory.CodeRepo{ID: sc.repoID, Root: sc.root}
	for start := 0; start < len(proposed); start += 2000 {
		part := proposed[start:min(start+2000, len(proposed))]
		res, change, err := m.gate(repo, part, approval, ep.ID)
		if err != nil {
			return err
		}
		ep.UpdatedAt = m.nowMs()
		if ep, err = m.store.ApplyEpisode(ctx, memory.EpisodeChange{Episode: ep, Gates: res.Evaluated, Code: change}); err != nil {
			return err
		}
		sc.rep.Promoted += res.Promoted
		sc.rep.Rejected += res.Rejected
	}
	return nil
}

// repoScan is one pass of Index over a repository's files: what it
// reports, the change it writes in batches, the entities it proposed.
type repoScan struct {
	m        *Memory
	root     string
	repoID   string
	episode  string
	rep      IndexReport
	batch    *memory.CodeChange
	proposed []memory.CodeEntity
	// whole keeps every change in batch until the run ends (IndexRequest.Whole);
	// step follows the run and resolved counts the symbols read so far.
	whole    bool
	step     func(IndexProgress)
	resolved int
}

// run scans every file under the root, then tombstones the entities of
// files gone from the disk.
func (sc *repoScan) run(ctx context.Context, progress func(done, total int)) error {
	m := sc.m
	sc.advance(PhaseListing, 0, 0)
	files, err := walk(ctx, sc.root)
	if err != nil {
		return err
	}
	oldFiles, err := m.store.CodeFiles(ctx, sc.repoID)
	if err != nil {
		return err
	}
	known := map[string]memory.CodeFile{}
	for _, f := range oldFiles {
		known[f.Path] = f
	}
	ents, err := m.store.CodeEntities(ctx, memory.CodeEntityFilter{RepoID: sc.repoID})
	if err != nil {
		return err
	}
	byPath := map[string][]memory.CodeEntity{}
	for _, e := range ents {
		byPath[e.Path] = append(byPath[e.Path], e)
	}
	seen := map[string]bool{}
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			if sc.whole {
				return memory.Wrap(memory.CodeInvalidParams, err, "index interrupted after %d of %d files; nothing was written", i, len(files))
			}
			return memory.Wrap(memory.CodeInvalidParams, err, "index interrupted after %d of %d files; what was written is consistent, run it again to finish", i, len(files))
		}
		sc.rep.Files++
		seen[f.rel] = true
		if f.skip != "" {
			sc.rep.skip(f.rel, f.skip)
		} else if err := sc.file(f.rel, known[f.rel], byPath[f.rel]); err != nil {
			return err
		}
		if !sc.whole && (len(sc.batch.Entities) >= 2000 || len(sc.batch.Files) >= 256) {
			if err := sc.flush(ctx); err != nil {
				return err
			}
		}
		if progress != nil {
			progress(i+1, len(files))
		}
		sc.advance(PhaseReading, i+1, len(files))
	}
	if err := sc.removed(oldFiles, seen, byPath); err != nil {
		return err
	}
	if sc.whole {
		return nil
	}
	return sc.flush(ctx)
}

// removed tombstones the entities of the files gone from the disk.
func (sc *repoScan) removed(oldFiles []memory.CodeFile, seen map[string]bool, byPath map[string][]memory.CodeEntity) error {
	batch := sc.batch
	for _, f := range oldFiles {
		if seen[f.Path] {
			continue
		}
		sc.rep.Removed++
		at := sc.m.nowMs()
		for _, e := range byPath[f.Path] {
			if e.State == memory.StateTombstoned {
				continue
			}
			batch.Guards = append(batch.Guards, guardOf(e))
			next, log, err := Update(e, e.ArtifactHash, memory.StateTombstoned, sc.episode, "file removed from disk", at)
			if err != nil {
				return err
			}
			batch.Entities = append(batch.Entities, next)
			batch.Transitions = append(batch.Transitions, log...)
			sc.rep.Tombstoned++
		}
		batch.DeleteFiles = append(batch.DeleteFiles, f)
	}
	return nil
}

// flush writes the batch, if it holds anything, and starts a new one.
func (sc *repoScan) flush(ctx context.Context) error {
	b := sc.batch
	if len(b.Entities)+len(b.Transitions)+len(b.Files)+len(b.DeleteFiles)+len(b.Artifacts) == 0 {
		return nil
	}
	err := sc.m.applyBatch(ctx, b)
	sc.batch = &memory.CodeChange{}
	return err
}

func (r *IndexReport) skip(path, reason string) {
	r.Skipped++
	if len(r.SkippedFiles) < listCap {
		r.SkippedFiles = append(r.SkippedFiles, SkippedFile{Path: path, Reason: reason})
	}
}

func guardOf(e memory.CodeEntity) memory.CodeGuard {
	return memory.CodeGuard{RepoID: e.RepoID, Key: e.Key, State: e.State, ArtifactHash: e.ArtifactHash}
}

// applyBatch writes one batch of a repository scan.
func (m *Memory) applyBatch(ctx context.Context, c *memory.CodeChange) error {
	return m.store.ApplyCode(ctx, *c)
}

// file resolves file rel when it changed (old is its last record, stored
// its entities) and adds what changed to the batch.
func (sc *repoScan) file(rel string, old memory.CodeFile, stored []memory.CodeEntity) error {
	m, rep := sc.m, &sc.rep
	abs, err := Confine(sc.root, rel)
	if err != nil {
		rep.skip(rel, message(err))
		return nil
	}
	st, err := os.Stat(abs)
	if err != nil {
		rep.skip(rel, pathProblem(err))
		return nil
	}
	size, mod := st.Size(), st.ModTime().UnixNano()
	if old.Path != "" && old.Size == size && old.ModTime == mod {
		if old.Method == "skipped" {
			rep.skip(rel, old.Reason)
		} else {
			rep.Unchanged++
		}
		return nil
	}
	file := memory.CodeFile{RepoID: sc.repoID, Path: rel, Size: size, ModTime: mod, Language: LanguageOf(rel)}
	src := m.readSource(abs, &file)
	rep.Changed++
	at := m.nowMs()
	var syms []Symbol
	if file.Method == "skipped" {
		rep.skip(rel, file.Reason)
	} else {
		syms = sc.resolve(rel, src, &file)
	}
	file.Entities = len(syms)
	sc.batch.Files = append(sc.batch.Files, file)
	cur := map[string]memory.CodeEntity{}
	for _, e := range stored {
		cur[e.Key] = e
	}
	now := sc.propose(file, syms, cur, at)
	return sc.tombstoneMissing(rel, cur, now, at)
}

// readSource reads a file that changed, unless it is too large,
// unreadable or binary: then file says it was skipped and why.
func (m *Memory) readSource(abs string, file *memory.CodeFile) []byte {
	if file.Size > m.maxBytes {
		file.Method, file.Reason = "skipped", "file is "+strconv.FormatInt(file.Size, 10)+" bytes, over the "+strconv.FormatInt(m.maxBytes, 10)+"-byte limit"
		return nil
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		file.Method, file.Reason = "skipped", "unreadable: "+pathProblem(err)
	} else if bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
		file.Method, file.Reason = "skipped", "binary file"
	}
	return src
}

// resolve finds a file's symbols and says in file how; a file the regex
// fallback resolved is reported.
func (sc *repoScan) resolve(rel string, src []byte, file *memory.CodeFile) []Symbol {
	m, rep := sc.m, &sc.rep
	file.FileHash = fileHash(src)
	res := Resolve(rel, src)
	file.Method, file.Reason = res.Method, res.Warning
	syms := res.Symbols
	sc.resolved += len(syms)
	if res.Method == "regex" {
		rep.Regex += len(syms)
		if len(rep.Fallbacks) < listCap {
			rep.Fallbacks = append(rep.Fallbacks, SkippedFile{Path: rel, Reason: res.Warning})
		}
		m.log.Warn(res.Warning, "repo", sc.repoID, "path", rel)
	}
	m.verifier.Prime(sc.root, rel, file.Size, file.ModTime, syms)
	return syms
}

// propose proposes the file's symbols whose text is new or changed and
// refreshes where the others sit; it returns the keys of the symbols.
func (sc *repoScan) propose(file memory.CodeFile, syms []Symbol, cur map[string]memory.CodeEntity, at int64) map[string]bool {
	batch := sc.batch
	now := map[string]bool{}
	for _, s := range syms {
		key := Key(file.Path, s.Name)
		now[key] = true
		art := NewArtifact(memory.ArtifactCode, s.Text, at)
		next := memory.CodeEntity{
			RepoID: sc.repoID, Key: key, Path: file.Path, Symbol: s.Name, Kind: s.Kind, Language: file.Language,
			StartLine: s.StartLine, EndLine: s.EndLine, Method: file.Method, ArtifactHash: art.Hash, UpdatedAt: at,
		}
		c := cur[key]
		e, log, guard, changed := propose(c, next, sc.episode, "indexed from disk ("+file.Method+")", at)
		if !changed {
			// Same text: keep the state, refresh where it sits in the file.
			if c.StartLine != next.StartLine || c.EndLine != next.EndLine || c.Method != next.Method {
				c.StartLine, c.EndLine, c.Method, c.Kind = next.StartLine, next.EndLine, next.Method, next.Kind
				batch.Guards = append(batch.Guards, guard)
				batch.Entities = append(batch.Entities, c)
			}
			continue
		}
		batch.Guards = append(batch.Guards, guard)
		batch.Artifacts = append(batch.Artifacts, art)
		batch.Entities = append(batch.Entities, e)
		batch.Transitions = append(batch.Transitions, log...)
		sc.proposed = append(sc.proposed, e)
		sc.rep.Proposed++
	}
	return now
}

// tombstoneMissing tombstones the file's entities whose symbol is no
// longer in it (now holds the keys still there), in key order.
func (sc *repoScan) tombstoneMissing(rel string, cur map[string]memory.CodeEntity, now map[string]bool, at int64) error {
	keys := make([]string, 0, len(cur))
	for k := range cur {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e := cur[k]
		if now[k] || e.State == memory.StateTombstoned {
			continue
		}
		sc.batch.Guards = append(sc.batch.Guards, guardOf(e))
		next, log, err := Update(e, e.ArtifactHash, memory.StateTombstoned, sc.episode, "symbol no longer in "+rel, at)
		if err != nil {
			return err
		}
		sc.batch.Entities = append(sc.batch.Entities, next)
		sc.batch.Transitions = append(sc.batch.Transitions, log...)
		sc.rep.Tombstoned++
	}
	return nil
}

// walk lists the source files under root in lexical order, skipping
// hidden directories and node_modules. Symlinked files are kept only when
// they resolve inside root.
func walk(ctx context.Context, root string) ([]sourceFile, error) {
	var out []sourceFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if err != nil {
			if p == root {
				return err
			}
			if d != nil && d.IsDir() {
				out = append(out, sourceFile{rel: rel, skip: "directory unreadable: " + pathProblem(err)})
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		if LanguageOf(name) == "" {
			return nil
		}
		f := sourceFile{rel: rel}
		if d.Type()&fs.ModeSymlink != 0 {
			if _, err := Confine(root, rel); err != nil {
				f.skip = message(err)
			} else if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				f.skip = "symlink to something other than a file"
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		out = append(out, f)
		return nil
	})
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, memory.Wrap(memory.CodeInvalidParams, err, "index interrupted while listing files; nothing was written")
		}
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "listing %s: %s", root, pathProblem(err))
	}
	return out, nil
}
