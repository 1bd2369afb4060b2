package sqlstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// This file implements memory.CodeStore.

const codeEntityColumns = `e.repo_id, e.key, e.path, e.symbol, e.kind, e.language, e.start_line, e.end_line,
	e.method, e.state, e.artifact_hash, e.updated_at`

func scanCodeEntity(s Scanner) (memory.CodeEntity, error) {
	var e memory.CodeEntity
	err := s.Scan(&e.RepoID, &e.Key, &e.Path, &e.Symbol, &e.Kind, &e.Language, &e.StartLine, &e.EndLine,
		&e.Method, &e.State, &e.ArtifactHash, &e.UpdatedAt)
	return e, err
}

const codeFileColumns = "f.repo_id, f.path, f.size, f.mod_time, f.file_hash, f.language, f.method, f.reason, f.entities"

func scanCodeFile(s Scanner) (memory.CodeFile, error) {
	var f memory.CodeFile
	err := s.Scan(&f.RepoID, &f.Path, &f.Size, &f.ModTime, &f.FileHash, &f.Language, &f.Method, &f.Reason, &f.Entities)
	return f, err
}

const episodeColumns = `e.id, e.session_id, e.repo_id, e.seq, e.query, e.budget_tokens, e.budget_entities,
	e.total_tokens, e.rows, e.digest, e.created_at, e.updated_at`

func scanEpisode(s Scanner) (memory.Episode, error) {
	var e memory.Episode
	err := s.Scan(&e.ID, &e.SessionID, &e.RepoID, &e.Seq, &e.Query, &e.BudgetToken, &e.BudgetCount,
		&e.TotalTokens, &e.Rows, &e.Digest, &e.CreatedAt, &e.UpdatedAt)
	return e, err
}

const hydrationColumns = `h.episode_id, h.session_id, h.seq, h.repo_id, h.key, h.artifact_hash, h.reason, h.method,
	h.triggered_by, h.token_count, h.hydrated_at, h.checksum`

func scanHydrationRow(s Scanner) (memory.HydrationRow, error) {
	var r memory.HydrationRow
	err := s.Scan(&r.EpisodeID, &r.SessionID, &r.Seq, &r.RepoID, &r.Key, &r.ArtifactHash, &r.Reason, &r.Method,
		&r.TriggeredBy, &r.TokenCount, &r.HydratedAt, &r.Checksum)
	return r, err
}

const gateColumns = `g.episode_id, g.repo_id, g.key, g.artifact_hash, g.a_ok, g.a_reason, g.a_method, g.b_ok, g.b_reason,
	g.c_ok, g.c_reason, g.disk_exists, g.is_stale, g.decision, g.at`

func scanGate(s Scanner) (memory.GateResult, error) {
	var g memory.GateResult
	err := s.Scan(&g.EpisodeID, &g.RepoID, &g.Key, &g.ArtifactHash, &g.AOK, &g.AReason, &g.AMethod, &g.BOK, &g.BReason,
		&g.COK, &g.CReason, &g.DiskExists, &g.IsStale, &g.Decision, &g.At)
	return g, err
}

const transitionColumns = "l.seq, l.repo_id, l.key, l.from_state, l.to_state, l.artifact_hash, l.episode_id, l.reason, l.at"

func scanTransition(s Scanner) (memory.CodeTransition, error) {
	var t memory.CodeTransition
	err := s.Scan(&t.Seq, &t.RepoID, &t.Key, &t.From, &t.To, &t.ArtifactHash, &t.EpisodeID, &t.Reason, &t.At)
	return t, err
}

// isHash reports whether h is 64 lowercase hex digits.
func isHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// validateArtifact checks an artifact to store: its hash is the SHA-256
// of its content, unless (in an import) it is a forgotten one.
func validateArtifact(i int, a memory.Artifact, redactedOK bool) error {
	switch {
	case !isHash(a.Hash):
		return invalidParams("artifact %d: hash %q is not 64 lowercase hex digits", i, a.Hash)
	case !a.Type.Valid():
		return invalidParams("artifact %s: unknown type %q (code, diff, decision, user_paste)", a.Hash, a.Type)
	case a.Redacted && !redactedOK:
		return invalidParams("artifact %s: a forgotten artifact cannot be stored anew", a.Hash)
	case a.Redacted:
		return nil
	}
	if sum := sha256.Sum256([]byte(a.Content)); hex.EncodeToString(sum[:]) != a.Hash {
		return invalidParams("artifact %s: the hash is not the SHA-256 of its content", a.Hash)
	}
	return nil
}

// validateCodeChange checks c's records before anything is read or written.
func validateCodeChange(c memory.CodeChange) error {
	for i, a := range c.Artifacts {
		if err := validateArtifact(i, a, false); err != nil {
			return err
		}
	}
	for _, e := range c.Entities {
		switch {
		case e.RepoID == "" || e.Key == "":
			return invalidParams("a code entity needs a repo_id and an entity_key (got %q, %q)", e.RepoID, e.Key)
		case !e.State.Valid():
			return invalidParams("code entity %s: unknown state %q (PROPOSED, AUTHORITATIVE, SUPERSEDED, TOMBSTONED)", e.Key, e.State)
		case e.ArtifactHash != "" && !isHash(e.ArtifactHash):
			return invalidParams("code entity %s: artifact hash %q is not 64 lowercase hex digits", e.Key, e.ArtifactHash)
		}
	}
	for _, t := range c.Transitions {
		switch {
		case t.RepoID == "" || t.Key == "":
			return invalidParams("a ledger entry needs a repo_id and an entity_key (got %q, %q)", t.RepoID, t.Key)
		case !t.To.Valid():
			return invalidParams("ledger entry for %s: unknown to_state %q", t.Key, t.To)
		case t.From != "" && !t.From.Valid():
			return invalidParams("ledger entry for %s: unknown from_state %q", t.Key, t.From)
		case t.ArtifactHash != "" && !isHash(t.ArtifactHash):
			return invalidParams("ledger entry for %s: artifact hash %q is not 64 lowercase hex digits", t.Key, t.ArtifactHash)
		}
	}
	for _, f := range append(c.Files[:len(c.Files):len(c.Files)], c.DeleteFiles...) {
		if f.RepoID == "" || f.Path == "" {
			return invalidParams("a code file needs a repo_id and a path (got %q, %q)", f.RepoID, f.Path)
		}
	}
	for _, g := range c.Guards {
		switch {
		case g.RepoID == "" || g.Key == "":
			return invalidParams("a guard needs a repo_id and an entity_key (got %q, %q)", g.RepoID, g.Key)
		case g.State != "" && !g.State.Valid():
			return invalidParams("guard on %s: unknown state %q", g.Key, g.State)
		}
	}
	if r := c.Repo; r != nil && (r.ID == "" || r.Root == "") {
		return invalidParams("a code repository needs an id and a root (got %q, %q)", r.ID, r.Root)
	}
	return nil
}

// PutCodeRepo implements memory.CodeStore.
func (s *Store) PutCodeRepo(ctx context.Context, r memory.CodeRepo) error {
	if r.ID == "" || r.Root == "" {
		return invalidParams("a code repository needs an id and a root (got %q, %q)", r.ID, r.Root)
	}
	return s.b.Write(ctx, "storing a code repository", func(tx Querier) error {
		_, err := tx.Exec(ctx, upsertCodeRepo, r.ID, r.Root, r.IndexedAt)
		return err
	})
}

// CodeRepo implements memory.CodeStore.
func (s *Store) CodeRepo(ctx context.Context, id string) (memory.CodeRepo, error) {
	var r memory.CodeRepo
	err := s.b.Read(ctx, "reading a code repository", func(tx Querier) error {
		err := tx.QueryRow(ctx, "SELECT id, root, indexed_at FROM code_repos WHERE id = ?", id).Scan(&r.ID, &r.Root, &r.IndexedAt)
		if errors.Is(err, ErrNoRows) {
			return NotFound("code repository", id)
		}
		return err
	})
	return r, err
}

// CodeRepos implements memory.CodeStore: every repository, by id.
func (s *Store) CodeRepos(ctx context.Context) ([]memory.CodeRepo, error) {
	var out []memory.CodeRepo
	err := s.b.Read(ctx, "listing code repositories", func(tx Querier) error {
		return EachRow(ctx, tx, "SELECT id, root, indexed_at FROM code_repos ORDER BY id", nil, func(s Scanner) error {
			var r memory.CodeRepo
			err := s.Scan(&r.ID, &r.Root, &r.IndexedAt)
			out = append(out, r)
			return err
		})
	})
	return out, err
}

// ApplyCode implements memory.CodeStore.
func (s *Store) ApplyCode(ctx context.Context, c memory.CodeChange) error {
	if err := validateCodeChange(c); err != nil {
		return err
	}
	return s.b.Write(ctx, "applying a code change", func(tx Querier) error { return s.applyCode(ctx, tx, c) })
}

// applyCode checks c's guards, then writes c; the caller validated it.
// Guards are compare-and-set: where writers do not take turns, the
// entities they name stay locked from the check to the commit, so two
// writers cannot both pass one.
func (s *Store) applyCode(ctx context.Context, tx Querier, c memory.CodeChange) error {
	keys := make([][2]string, len(c.Guards))
	for i, g := range c.Guards {
		keys[i] = [2]string{g.RepoID, g.Key}
	}
	if err := s.d.lockKeys(ctx, tx, "code entity", keys); err != nil {
		return err
	}
	for _, g := range c.Guards {
		if err := checkGuard(ctx, tx, g); err != nil {
			return err
		}
	}
	for _, a := range c.Artifacts {
		if _, err := tx.Exec(ctx, insertArtifact, a.Hash, string(a.Type), a.Content, a.CreatedAt, false); err != nil {
			return err
		}
	}
	for _, e := range c.Entities {
		if _, err := tx.Exec(ctx, upsertCodeEntity, e.RepoID, e.Key, e.Path, e.Symbol, e.Kind, e.Language, e.StartLine, e.EndLine,
			e.Method, string(e.State), e.ArtifactHash, e.UpdatedAt); err != nil {
			return err
		}
	}
	for _, t := range c.Transitions {
		if _, err := tx.Exec(ctx, insertTransition, t.RepoID, t.Key, string(t.From), string(t.To), t.ArtifactHash, t.EpisodeID, t.Reason, t.At); err != nil {
			return err
		}
	}
	for _, f := range c.Files {
		if _, err := tx.Exec(ctx, upsertCodeFile, f.RepoID, f.Path, f.Size, f.ModTime, f.FileHash, f.Language, f.Method, f.Reason, f.Entities); err != nil {
			return err
		}
	}
	for _, f := range c.DeleteFiles {
		if _, err := tx.Exec(ctx, "DELETE FROM code_files WHERE repo_id = ? AND path = ?", f.RepoID, f.Path); err != nil {
			return err
		}
	}
	if r := c.Repo; r != nil {
		if _, err := tx.Exec(ctx, upsertCodeRepo, r.ID, r.Root, r.IndexedAt); err != nil {
			return err
		}
	}
	return nil
}

const (
	upsertCodeRepo = `INSERT INTO code_repos (id, root, indexed_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET root = excluded.root, indexed_at = excluded.indexed_at`
	insertCodeEntity = `INSERT INTO code_entities (repo_id, key, path, symbol, kind, language, start_line, end_line,
		method, state, artifact_hash, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	upsertCodeEntity = insertCodeEntity + `
		ON CONFLICT (repo_id, key) DO UPDATE SET path = excluded.path, symbol = excluded.symbol, kind = excluded.kind,
		language = excluded.language, start_line = excluded.start_line, end_line = excluded.end_line, method = excluded.method,
		state = excluded.state, artifact_hash = excluded.artifact_hash, updated_at = excluded.updated_at`
	insertCodeFile = `INSERT INTO code_files (repo_id, path, size, mod_time, file_hash, language, method, reason, entities)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	upsertCodeFile = insertCodeFile + `
		ON CONFLICT (repo_id, path) DO UPDATE SET size = excluded.size, mod_time = excluded.mod_time, file_hash = excluded.file_hash,
		language = excluded.language, method = excluded.method, reason = excluded.reason, entities = excluded.entities`
	insertTransition = `INSERT INTO code_ledger (repo_id, key, from_state, to_state, artifact_hash, episode_id, reason, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
)

// checkGuard returns a conflict unless the stored entity matches g.
func checkGuard(ctx context.Context, tx Querier, g memory.CodeGuard) error {
	var state, hash string
	err := tx.QueryRow(ctx, "SELECT state, artifact_hash FROM code_entities WHERE repo_id = ? AND key = ?",
		g.RepoID, g.Key).Scan(&state, &hash)
	switch {
	case errors.Is(err, ErrNoRows):
		if g.State == "" {
			return nil
		}
		return memory.Errorf(memory.CodeConflict, "code entity %s of repository %s changed meanwhile: expected %s with artifact %s, found none",
			g.Key, g.RepoID, g.State, shortHash(g.ArtifactHash))
	case err != nil:
		return err
	case g.State == "":
		return memory.Errorf(memory.CodeConflict, "code entity %s of repository %s changed meanwhile: expected none, found %s with artifact %s",
			g.Key, g.RepoID, state, shortHash(hash))
	case memory.CodeState(state) != g.State || hash != g.ArtifactHash:
		return memory.Errorf(memory.CodeConflict, "code entity %s of repository %s changed meanwhile: expected %s with artifact %s, found %s with artifact %s",
			g.Key, g.RepoID, g.State, shortHash(g.ArtifactHash), state, shortHash(hash))
	}
	return nil
}

func shortHash(h string) string {
	if h == "" {
		return "(none)"
	}
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// CodeFiles implements memory.CodeStore: a repository's files, by path.
func (s *Store) CodeFiles(ctx context.Context, repoID string) ([]memory.CodeFile, error) {
	var out []memory.CodeFile
	err := s.b.Read(ctx, "listing code files", func(tx Querier) error {
		return EachRow(ctx, tx, "SELECT "+codeFileColumns+" FROM code_files f WHERE f.repo_id = ? ORDER BY f.path",
			[]any{repoID}, func(s Scanner) error {
				f, err := scanCodeFile(s)
				out = append(out, f)
				return err
			})
	})
	return out, err
}

// CodeEntities implements memory.CodeStore.
func (s *Store) CodeEntities(ctx context.Context, f memory.CodeEntityFilter) ([]memory.CodeEntity, error) {
	var out []memory.CodeEntity
	err := s.b.Read(ctx, "listing code entities", func(tx Querier) error {
		q := s.d.NewQuery("")
		if len(f.Names) == 0 || f.RepoID == "" {
			s.codeEntitiesWhere(q, "", f)
		} else {
			s.namedBy(q, f)
		}
		q.Add(" ORDER BY 1, 2")
		return EachRow(ctx, tx, q.SQL(), q.Args(), func(s Scanner) error {
			e, err := scanCodeEntity(s)
			out = append(out, e)
			return err
		})
	})
	return out, err
}

// codeEntitiesWhere appends the SELECT of the entities f keeps (but its
// Names), reading the table through index when it is set.
func (s *Store) codeEntitiesWhere(q *Query, index string, f memory.CodeEntityFilter) {
	q.Add("SELECT " + codeEntityColumns + " FROM code_entities e")
	if index != "" && s.d.IndexedBy != nil {
		q.Add(s.d.IndexedBy(index))
	}
	q.Add(" WHERE true")
	if f.RepoID != "" {
		q.Add(" AND e.repo_id = ?", f.RepoID)
	}
	if f.Path != "" {
		q.Add(" AND e.path = ?", f.Path)
	}
	states := make([]string, len(f.States))
	for i, st := range f.States {
		states[i] = string(st)
	}
	q.In("e.state", states)
	q.In("e.key", f.Keys)
	if f.Readable {
		q.Add(" AND EXISTS (SELECT 1 FROM code_artifacts a WHERE a.hash = e.artifact_hash AND a.redacted = false)")
	}
}

// maxNames bounds the words a CodeEntities filter names entities by.
const maxNames = 64

// namedBy appends the SELECT of the entities of f's repository that one
// of f.Names may name: the word is the symbol or its last dotted segment
// (the name column), or its base name is the path's (the file column;
// the caller tells a path's exact end). Each is a query of its own
// through the column's index (with the repository's), their union the
// answer.
func (s *Store) namedBy(q *Query, f memory.CodeEntityFilter) {
	words := f.Names[:min(len(f.Names), maxNames)]
	bases := make([]string, len(words))
	for i, w := range words {
		bases[i] = w[strings.LastIndexByte(w, '/')+1:]
	}
	for i, c := range []struct {
		index, col string
		vs         []string
	}{{"code_entities_symbol", "e.symbol", words}, {"code_entities_name", "e.name", words}, {"code_entities_file", "e.file", bases}} {
		if i > 0 {
			q.Add(" UNION ")
		}
		s.codeEntitiesWhere(q, c.index, f)
		q.In(c.col, c.vs)
	}
}

// CodeEntitiesByKey implements memory.CodeStore: by repository.
func (s *Store) CodeEntitiesByKey(ctx context.Context, key string) ([]memory.CodeEntity, error) {
	var out []memory.CodeEntity
	err := s.b.Read(ctx, "finding code entities", func(tx Querier) error {
		return EachRow(ctx, tx, "SELECT "+codeEntityColumns+" FROM code_entities e WHERE e.key = ? ORDER BY e.repo_id",
			[]any{key}, func(s Scanner) error {
				e, err := scanCodeEntity(s)
				out = append(out, e)
				return err
			})
	})
	return out, err
}

// insertArtifact stores an artifact (hash, type, content, created_at,
// redacted). Content-addressed: a hash already stored is the same text and
// is kept, unless it was forgotten and the text comes again, which
// restores it.
const insertArtifact = `INSERT INTO code_artifacts (hash, type, content, created_at, redacted) VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (hash) DO UPDATE SET content = excluded.content, redacted = false
	WHERE code_artifacts.redacted = true AND excluded.redacted = false`

const artifactColumns = "a.hash, a.type, a.content, a.created_at, a.redacted"

func scanArtifact(s Scanner) (memory.Artifact, error) {
	var a memory.Artifact
	err := s.Scan(&a.Hash, &a.Type, &a.Content, &a.CreatedAt, &a.Redacted)
	return a, err
}

func getArtifact(ctx context.Context, q Querier, hash string) (memory.Artifact, error) {
	a, err := scanArtifact(q.QueryRow(ctx, "SELECT "+artifactColumns+" FROM code_artifacts a WHERE a.hash = ?", hash))
	if errors.Is(err, ErrNoRows) {
		return a, NotFound("artifact", hash)
	}
	return a, err
}

// Artifact implements memory.CodeStore.
func (s *Store) Artifact(ctx context.Context, hash string) (memory.Artifact, error) {
	var a memory.Artifact
	err := s.b.Read(ctx, "reading an artifact", func(tx Querier) error {
		var err error
		a, err = getArtifact(ctx, tx, hash)
		return err
	})
	return a, err
}

// Artifacts implements memory.CodeStore.
func (s *Store) Artifacts(ctx context.Context, hashes []string) (map[string]memory.Artifact, error) {
	out := make(map[string]memory.Artifact, len(hashes))
	if len(hashes) == 0 {
		return out, nil
	}
	err := s.b.Read(ctx, "reading artifacts", func(tx Querier) error {
		clear(out)
		q := s.d.NewQuery("SELECT " + artifactColumns + " FROM code_artifacts a WHERE true")
		q.In("a.hash", hashes)
		return EachRow(ctx, tx, q.SQL(), q.Args(), func(sc Scanner) error {
			a, err := scanArtifact(sc)
			out[a.Hash] = a
			return err
		})
	})
	return out, err
}

// RedactArtifact implements memory.CodeStore.
func (s *Store) RedactArtifact(ctx context.Context, hash string, at int64) (memory.Artifact, error) {
	var a memory.Artifact
	err := s.b.Erase(ctx, "forgetting an artifact", func(tx Querier) error {
		var err error
		if a, err = getArtifact(ctx, tx, hash); err != nil || a.Redacted {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE code_artifacts SET content = ?, redacted = true WHERE hash = ?", memory.RedactedContent, hash); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM embeddings WHERE kind = 'code_entity'
			AND ref IN (SELECT id FROM code_entities WHERE artifact_hash = ?)`, hash); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE code_repos SET indexed_at = `+s.d.Greatest+`(?, indexed_at + 1)
			WHERE id IN (SELECT repo_id FROM code_entities WHERE artifact_hash = ?)`, at, hash); err != nil {
			return err
		}
		a, err = getArtifact(ctx, tx, hash)
		return err
	})
	return a, err
}

// CodeLedger implements memory.CodeStore.
func (s *Store) CodeLedger(ctx context.Context, repoID, key string) ([]memory.CodeTransition, error) {
	var out []memory.CodeTransition
	err := s.b.Read(ctx, "reading the code ledger", func(tx Querier) error {
		return EachRow(ctx, tx, "SELECT "+transitionColumns+" FROM code_ledger l WHERE l.repo_id = ? AND l.key = ? ORDER BY l.seq",
			[]any{repoID, key}, func(s Scanner) error {
				t, err := scanTransition(s)
				out = append(out, t)
				return err
			})
	})
	return out, err
}

// ApplyEpisode implements memory.CodeStore. Rows and gates that leave their
// episode (and session) id empty take the episode's; ones naming another
// episode are invalid_params.
func (s *Store) ApplyEpisode(ctx context.Context, c memory.EpisodeChange) (memory.Episode, error) {
	ep := c.Episode
	rows, gates, err := episodeParts(c)
	if err != nil {
		return ep, err
	}
	var stored memory.Episode
	err = s.b.Write(ctx, "storing an episode", func(tx Querier) error {
		// Writers of one session's episodes take turns: its next number
		// and an episode's row count are read and written under the lock.
		if err := s.d.lockKeys(ctx, tx, "episode", [][2]string{{ep.SessionID, ""}, {"", ep.ID}}); err != nil {
			return err
		}
		e, err := s.putEpisode(ctx, tx, ep, len(rows))
		if err != nil {
			return err
		}
		if err := s.addHydration(ctx, tx, e.ID, rows, gates); err != nil {
			return err
		}
		if c.Code != nil {
			if err := s.applyCode(ctx, tx, *c.Code); err != nil {
				return err
			}
		}
		stored = e
		return nil
	})
	if err != nil {
		return memory.Episode{}, err
	}
	return stored, nil
}

// episodeParts checks an episode change before anything is read or
// written, and returns its hydration rows and gate results with their
// episode (and session) ids filled in.
func episodeParts(c memory.EpisodeChange) ([]memory.HydrationRow, []memory.GateResult, error) {
	ep := c.Episode
	if ep.ID == "" {
		return nil, nil, invalidParams("an episode needs an id")
	}
	if ep.Seq < 0 {
		return nil, nil, invalidParams("episode %s: seq %d is negative", ep.ID, ep.Seq)
	}
	rows := make([]memory.HydrationRow, len(c.Rows))
	for i, r := range c.Rows {
		if r.EpisodeID == "" {
			r.EpisodeID = ep.ID
		}
		if r.SessionID == "" {
			r.SessionID = ep.SessionID
		}
		if r.EpisodeID != ep.ID || r.SessionID != ep.SessionID {
			return nil, nil, invalidParams("hydration row %d names episode %q of session %q, not %q of %q", r.Seq, r.EpisodeID, r.SessionID, ep.ID, ep.SessionID)
		}
		rows[i] = r
	}
	gates := make([]memory.GateResult, len(c.Gates))
	for i, g := range c.Gates {
		if g.EpisodeID == "" {
			g.EpisodeID = ep.ID
		}
		if g.EpisodeID != ep.ID {
			return nil, nil, invalidParams("gate result %d names episode %q, not %q", i, g.EpisodeID, ep.ID)
		}
		gates[i] = g
	}
	if c.Code != nil {
		if err := validateCodeChange(*c.Code); err != nil {
			return nil, nil, err
		}
	}
	return rows, gates, nil
}

// putEpisode inserts a new episode (numbered next in its session when it
// has no number) or updates an existing one, which must still hold the
// hydration rows the change started from (its Rows less the added ones).
// It returns the episode as stored.
func (s *Store) putEpisode(ctx context.Context, tx Querier, e memory.Episode, added int) (memory.Episode, error) {
	var session string
	var seq, createdAt int64
	var rows int
	err := tx.QueryRow(ctx, "SELECT session_id, seq, created_at, rows FROM code_episodes WHERE id = ?", e.ID).Scan(&session, &seq, &createdAt, &rows)
	switch {
	case errors.Is(err, ErrNoRows):
		if e.Seq == 0 {
			if err := tx.QueryRow(ctx, "SELECT coalesce(max(seq), 0) + 1 FROM code_episodes WHERE session_id = ?",
				e.SessionID).Scan(&e.Seq); err != nil {
				return e, err
			}
		}
		_, err = tx.Exec(ctx, insertEpisode, e.ID, e.SessionID, e.RepoID, e.Seq, e.Query, e.BudgetToken, e.BudgetCount, e.TotalTokens,
			e.Rows, e.Digest, e.CreatedAt, e.UpdatedAt)
		if s.d.IsUnique(err) {
			return e, memory.Wrap(memory.CodeConflict, err, "session %q already has an episode number %d", e.SessionID, e.Seq)
		}
		return e, err
	case err != nil:
		return e, err
	case session != e.SessionID:
		return e, memory.Errorf(memory.CodeConflict, "episode id %q already belongs to another session", e.ID)
	case rows != e.Rows-added:
		return e, memory.Wrap(memory.CodeConflict, memory.ErrEpisodeChanged,
			"episode %q holds %d hydration rows, not the %d this change started from: it changed meanwhile; retry", e.ID, rows, e.Rows-added)
	}
	e.Seq, e.CreatedAt = seq, createdAt
	_, err = tx.Exec(ctx, `UPDATE code_episodes SET repo_id = ?, query = ?, budget_tokens = ?, budget_entities = ?,
		total_tokens = ?, rows = ?, digest = ?, updated_at = ? WHERE id = ?`,
		e.RepoID, e.Query, e.BudgetToken, e.BudgetCount, e.TotalTokens, e.Rows, e.Digest, e.UpdatedAt, e.ID)
	return e, err
}

// addHydration writes an episode's new hydration rows and gate results,
// the gates numbered after its existing ones.
func (s *Store) addHydration(ctx context.Context, tx Querier, episode string, rows []memory.HydrationRow, gates []memory.GateResult) error {
	for _, r := range rows {
		err := insertHydrationRow(ctx, tx, r)
		if s.d.IsUnique(err) {
			return memory.Wrap(memory.CodeConflict, err, "episode %q already has a hydration row %d", episode, r.Seq)
		}
		if err != nil {
			return err
		}
	}
	if len(gates) == 0 {
		return nil
	}
	var next int64
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(ordinal), 0) + 1 FROM code_gates WHERE episode_id = ?", episode).Scan(&next); err != nil {
		return err
	}
	for i, g := range gates {
		if err := insertGate(ctx, tx, g, next+int64(i)); err != nil {
			return err
		}
	}
	return nil
}

const insertEpisode = `INSERT INTO code_episodes (id, session_id, repo_id, seq, query, budget_tokens,
	budget_entities, total_tokens, rows, digest, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func insertHydrationRow(ctx context.Context, tx Querier, r memory.HydrationRow) error {
	_, err := tx.Exec(ctx, `INSERT INTO code_hydration (episode_id, seq, session_id, repo_id, key, artifact_hash,
		reason, method, triggered_by, token_count, hydrated_at, checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.EpisodeID, r.Seq, r.SessionID, r.RepoID, r.Key, r.ArtifactHash, r.Reason, r.Method, r.TriggeredBy,
		r.TokenCount, r.HydratedAt, r.Checksum)
	return err
}

func insertGate(ctx context.Context, tx Querier, g memory.GateResult, ordinal int64) error {
	_, err := tx.Exec(ctx, `INSERT INTO code_gates (episode_id, ordinal, repo_id, key, artifact_hash, a_ok, a_reason,
		a_method, b_ok, b_reason, c_ok, c_reason, disk_exists, is_stale, decision, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.EpisodeID, ordinal, g.RepoID, g.Key, g.ArtifactHash, g.AOK, g.AReason, g.AMethod, g.BOK, g.BReason,
		g.COK, g.CReason, g.DiskExists, g.IsStale, g.Decision, g.At)
	return err
}

// Episode implements memory.CodeStore.
func (s *Store) Episode(ctx context.Context, id string) (memory.Episode, error) {
	var e memory.Episode
	err := s.b.Read(ctx, "reading an episode", func(tx Querier) error {
		var err error
		e, err = scanEpisode(tx.QueryRow(ctx, "SELECT "+episodeColumns+" FROM code_episodes e WHERE e.id = ?", id))
		if errors.Is(err, ErrNoRows) {
			return NotFound("episode", id)
		}
		return err
	})
	return e, err
}

// CodeSessions implements memory.CodeStore.
func (s *Store) CodeSessions(ctx context.Context) ([]string, error) {
	var out []string
	err := s.b.Read(ctx, "listing sessions", func(tx Querier) error {
		return EachRow(ctx, tx, "SELECT DISTINCT session_id FROM code_episodes ORDER BY session_id", nil, func(s Scanner) error {
			var id string
			err := s.Scan(&id)
			out = append(out, id)
			return err
		})
	})
	return out, err
}

// SessionEpisodes implements memory.CodeStore.
func (s *Store) SessionEpisodes(ctx context.Context, sessionID string) ([]memory.Episode, error) {
	var out []memory.Episode
	err := s.b.Read(ctx, "listing episodes", func(tx Querier) error {
		return EachRow(ctx, tx, "SELECT "+episodeColumns+" FROM code_episodes e WHERE e.session_id = ? ORDER BY e.seq",
			[]any{sessionID}, func(s Scanner) error {
				e, err := scanEpisode(s)
				out = append(out, e)
				return err
			})
	})
	return out, err
}

func (s *Store) hydrationRows(ctx context.Context, what, q string, args ...any) ([]memory.HydrationRow, error) {
	var out []memory.HydrationRow
	err := s.b.Read(ctx, what, func(tx Querier) error {
		return EachRow(ctx, tx, q, args, func(s Scanner) error {
			r, err := scanHydrationRow(s)
			out = append(out, r)
			return err
		})
	})
	return out, err
}

// HydrationRows implements memory.CodeStore.
func (s *Store) HydrationRows(ctx context.Context, episodeID string) ([]memory.HydrationRow, error) {
	return s.hydrationRows(ctx, "reading hydration rows",
		"SELECT "+hydrationColumns+" FROM code_hydration h WHERE h.episode_id = ? ORDER BY h.seq", episodeID)
}

// SessionHydrationRows implements memory.CodeStore.
func (s *Store) SessionHydrationRows(ctx context.Context, sessionID string) ([]memory.HydrationRow, error) {
	return s.hydrationRows(ctx, "reading a session's hydration rows",
		"SELECT "+hydrationColumns+` FROM code_hydration h JOIN code_episodes e ON e.id = h.episode_id
		WHERE e.session_id = ? ORDER BY e.seq, h.seq`, sessionID)
}

// EntityHydrationRows implements memory.CodeStore: by hydration time, then
// episode and row number.
func (s *Store) EntityHydrationRows(ctx context.Context, repoID, key string) ([]memory.HydrationRow, error) {
	return s.hydrationRows(ctx, "reading an entity's hydration rows",
		"SELECT "+hydrationColumns+` FROM code_hydration h JOIN code_episodes e ON e.id = h.episode_id
		WHERE h.repo_id = ? AND h.key = ? ORDER BY h.hydrated_at, e.seq, e.id, h.seq`, repoID, key)
}

// GateResults implements memory.CodeStore.
func (s *Store) GateResults(ctx context.Context, episodeID string) ([]memory.GateResult, error) {
	var out []memory.GateResult
	err := s.b.Read(ctx, "reading gate results", func(tx Querier) error {
		return EachRow(ctx, tx, "SELECT "+gateColumns+" FROM code_gates g WHERE g.episode_id = ? ORDER BY g.ordinal",
			[]any{episodeID}, func(s Scanner) error {
				g, err := scanGate(s)
				out = append(out, g)
				return err
			})
	})
	return out, err
}
