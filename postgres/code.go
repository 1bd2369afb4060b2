package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/cairnhq/cairn/memory"
	"github.com/jackc/pgx/v5"
)

// This file implements memory.CodeStore.

const codeEntityColumns = `e.repo_id, e.key, e.path, e.symbol, e.kind, e.language, e.start_line, e.end_line,
	e.method, e.state, e.artifact_hash, e.updated_at`

func scanCodeEntity(s scanner) (memory.CodeEntity, error) {
	var e memory.CodeEntity
	err := s.Scan(&e.RepoID, &e.Key, &e.Path, &e.Symbol, &e.Kind, &e.Language, &e.StartLine, &e.EndLine,
		&e.Method, &e.State, &e.ArtifactHash, &e.UpdatedAt)
	return e, err
}

const codeFileColumns = "f.repo_id, f.path, f.size, f.mod_time, f.file_hash, f.language, f.method, f.reason, f.entities"

func scanCodeFile(s scanner) (memory.CodeFile, error) {
	var f memory.CodeFile
	err := s.Scan(&f.RepoID, &f.Path, &f.Size, &f.ModTime, &f.FileHash, &f.Language, &f.Method, &f.Reason, &f.Entities)
	return f, err
}

const episodeColumns = `e.id, e.session_id, e.repo_id, e.seq, e.query, e.budget_tokens, e.budget_entities,
	e.total_tokens, e.rows, e.digest, e.created_at, e.updated_at`

func scanEpisode(s scanner) (memory.Episode, error) {
	var e memory.Episode
	err := s.Scan(&e.ID, &e.SessionID, &e.RepoID, &e.Seq, &e.Query, &e.BudgetToken, &e.BudgetCount,
		&e.TotalTokens, &e.Rows, &e.Digest, &e.CreatedAt, &e.UpdatedAt)
	return e, err
}

const hydrationColumns = `h.episode_id, h.session_id, h.seq, h.repo_id, h.key, h.artifact_hash, h.reason, h.method,
	h.triggered_by, h.token_count, h.hydrated_at, h.checksum`

func scanHydrationRow(s scanner) (memory.HydrationRow, error) {
	var r memory.HydrationRow
	err := s.Scan(&r.EpisodeID, &r.SessionID, &r.Seq, &r.RepoID, &r.Key, &r.ArtifactHash, &r.Reason, &r.Method,
		&r.TriggeredBy, &r.TokenCount, &r.HydratedAt, &r.Checksum)
	return r, err
}

const gateColumns = `g.episode_id, g.repo_id, g.key, g.artifact_hash, g.a_ok, g.a_reason, g.a_method, g.b_ok, g.b_reason,
	g.c_ok, g.c_reason, g.disk_exists, g.is_stale, g.decision, g.at`

func scanGate(s scanner) (memory.GateResult, error) {
	var g memory.GateResult
	err := s.Scan(&g.EpisodeID, &g.RepoID, &g.Key, &g.ArtifactHash, &g.AOK, &g.AReason, &g.AMethod, &g.BOK, &g.BReason,
		&g.COK, &g.CReason, &g.DiskExists, &g.IsStale, &g.Decision, &g.At)
	return g, err
}

const transitionColumns = "l.seq, l.repo_id, l.key, l.from_state, l.to_state, l.artifact_hash, l.episode_id, l.reason, l.at"

func scanTransition(s scanner) (memory.CodeTransition, error) {
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
	return nil
}

// PutCodeRepo implements memory.CodeStore.
func (db *DB) PutCodeRepo(ctx context.Context, r memory.CodeRepo) error {
	if r.ID == "" || r.Root == "" {
		return invalidParams("a code repository needs an id and a root (got %q, %q)", r.ID, r.Root)
	}
	return db.write(ctx, "storing a code repository", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO code_repos (id, root, indexed_at) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET root = excluded.root, indexed_at = excluded.indexed_at`, r.ID, r.Root, r.IndexedAt)
		return err
	})
}

// CodeRepo implements memory.CodeStore.
func (db *DB) CodeRepo(ctx context.Context, id string) (memory.CodeRepo, error) {
	var r memory.CodeRepo
	err := db.read(ctx, "reading a code repository", func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, "SELECT id, root, indexed_at FROM code_repos WHERE id = $1", id).Scan(&r.ID, &r.Root, &r.IndexedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("code repository", id)
		}
		return err
	})
	return r, err
}

// CodeRepos implements memory.CodeStore: every repository, by id.
func (db *DB) CodeRepos(ctx context.Context) ([]memory.CodeRepo, error) {
	var out []memory.CodeRepo
	err := db.read(ctx, "listing code repositories", func(tx pgx.Tx) error {
		return eachRow(ctx, tx, "SELECT id, root, indexed_at FROM code_repos ORDER BY id", nil, func(s scanner) error {
			var r memory.CodeRepo
			err := s.Scan(&r.ID, &r.Root, &r.IndexedAt)
			out = append(out, r)
			return err
		})
	})
	return out, err
}

// ApplyCode implements memory.CodeStore.
func (db *DB) ApplyCode(ctx context.Context, c memory.CodeChange) error {
	if err := validateCodeChange(c); err != nil {
		return err
	}
	return db.write(ctx, "applying a code change", func(tx pgx.Tx) error { return applyCode(ctx, tx, c) })
}

// applyCode checks c's guards, then writes c; the caller validated it.
func applyCode(ctx context.Context, tx pgx.Tx, c memory.CodeChange) error {
	// Guards are compare-and-set: the entities they name stay locked from
	// the check to the commit, so two servers cannot both pass one.
	keys := make([][2]string, len(c.Guards))
	for i, g := range c.Guards {
		keys[i] = [2]string{g.RepoID, g.Key}
	}
	if err := lockKeys(ctx, querier{tx}, "code entity", keys); err != nil {
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
		if _, err := tx.Exec(ctx, `INSERT INTO code_entities (repo_id, key, path, symbol, kind, language,
			start_line, end_line, method, state, artifact_hash, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (repo_id, key) DO UPDATE SET path = excluded.path, symbol = excluded.symbol, kind = excluded.kind,
			language = excluded.language, start_line = excluded.start_line, end_line = excluded.end_line, method = excluded.method,
			state = excluded.state, artifact_hash = excluded.artifact_hash, updated_at = excluded.updated_at`,
			e.RepoID, e.Key, e.Path, e.Symbol, e.Kind, e.Language, e.StartLine, e.EndLine, e.Method, string(e.State),
			e.ArtifactHash, e.UpdatedAt); err != nil {
			return err
		}
	}
	for _, t := range c.Transitions {
		if _, err := tx.Exec(ctx, `INSERT INTO code_ledger (repo_id, key, from_state, to_state, artifact_hash, episode_id, reason, at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, t.RepoID, t.Key, string(t.From), string(t.To), t.ArtifactHash, t.EpisodeID, t.Reason, t.At); err != nil {
			return err
		}
	}
	for _, f := range c.Files {
		if _, err := tx.Exec(ctx, `INSERT INTO code_files (repo_id, path, size, mod_time, file_hash, language,
			method, reason, entities) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (repo_id, path) DO UPDATE SET size = excluded.size, mod_time = excluded.mod_time, file_hash = excluded.file_hash,
			language = excluded.language, method = excluded.method, reason = excluded.reason, entities = excluded.entities`,
			f.RepoID, f.Path, f.Size, f.ModTime, f.FileHash, f.Language, f.Method, f.Reason, f.Entities); err != nil {
			return err
		}
	}
	for _, f := range c.DeleteFiles {
		if _, err := tx.Exec(ctx, "DELETE FROM code_files WHERE repo_id = $1 AND path = $2", f.RepoID, f.Path); err != nil {
			return err
		}
	}
	return nil
}

// checkGuard returns a conflict unless the stored entity matches g.
func checkGuard(ctx context.Context, tx pgx.Tx, g memory.CodeGuard) error {
	var state, hash string
	err := tx.QueryRow(ctx, "SELECT state, artifact_hash FROM code_entities WHERE repo_id = $1 AND key = $2",
		g.RepoID, g.Key).Scan(&state, &hash)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
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
func (db *DB) CodeFiles(ctx context.Context, repoID string) ([]memory.CodeFile, error) {
	var out []memory.CodeFile
	err := db.read(ctx, "listing code files", func(tx pgx.Tx) error {
		return eachRow(ctx, tx, "SELECT "+codeFileColumns+" FROM code_files f WHERE f.repo_id = $1 ORDER BY f.path",
			[]any{repoID}, func(s scanner) error {
				f, err := scanCodeFile(s)
				out = append(out, f)
				return err
			})
	})
	return out, err
}

// CodeEntities implements memory.CodeStore.
func (db *DB) CodeEntities(ctx context.Context, f memory.CodeEntityFilter) ([]memory.CodeEntity, error) {
	var out []memory.CodeEntity
	err := db.read(ctx, "listing code entities", func(tx pgx.Tx) error {
		q := newQuery("SELECT " + codeEntityColumns + " FROM code_entities e WHERE true")
		if f.RepoID != "" {
			q.add(" AND e.repo_id = " + q.arg(f.RepoID))
		}
		if f.Path != "" {
			q.add(" AND e.path = " + q.arg(f.Path))
		}
		states := make([]string, len(f.States))
		for i, s := range f.States {
			states[i] = string(s)
		}
		q.in("e.state", states)
		q.in("e.key", f.Keys)
		q.add(" ORDER BY e.repo_id, e.key")
		return eachRow(ctx, tx, q.sql.String(), q.args, func(s scanner) error {
			e, err := scanCodeEntity(s)
			out = append(out, e)
			return err
		})
	})
	return out, err
}

// CodeEntitiesByKey implements memory.CodeStore: by repository.
func (db *DB) CodeEntitiesByKey(ctx context.Context, key string) ([]memory.CodeEntity, error) {
	var out []memory.CodeEntity
	err := db.read(ctx, "finding code entities", func(tx pgx.Tx) error {
		return eachRow(ctx, tx, "SELECT "+codeEntityColumns+" FROM code_entities e WHERE e.key = $1 ORDER BY e.repo_id",
			[]any{key}, func(s scanner) error {
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
const insertArtifact = `INSERT INTO code_artifacts (hash, type, content, created_at, redacted) VALUES ($1, $2, $3, $4, $5)
	ON CONFLICT (hash) DO UPDATE SET content = excluded.content, redacted = false
	WHERE code_artifacts.redacted AND NOT excluded.redacted`

const artifactColumns = "a.hash, a.type, a.content, a.created_at, a.redacted"

func scanArtifact(s scanner) (memory.Artifact, error) {
	var a memory.Artifact
	err := s.Scan(&a.Hash, &a.Type, &a.Content, &a.CreatedAt, &a.Redacted)
	return a, err
}

func getArtifact(ctx context.Context, q queryer, hash string) (memory.Artifact, error) {
	a, err := scanArtifact(q.QueryRow(ctx, "SELECT "+artifactColumns+" FROM code_artifacts a WHERE a.hash = $1", hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return a, notFound("artifact", hash)
	}
	return a, err
}

// Artifact implements memory.CodeStore.
func (db *DB) Artifact(ctx context.Context, hash string) (memory.Artifact, error) {
	var a memory.Artifact
	err := db.read(ctx, "reading an artifact", func(tx pgx.Tx) error {
		var err error
		a, err = getArtifact(ctx, tx, hash)
		return err
	})
	return a, err
}

// RedactArtifact implements memory.CodeStore.
func (db *DB) RedactArtifact(ctx context.Context, hash string, at int64) (memory.Artifact, error) {
	var a memory.Artifact
	err := db.write(ctx, "forgetting an artifact", func(tx pgx.Tx) error {
		var err error
		if a, err = getArtifact(ctx, tx, hash); err != nil || a.Redacted {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE code_artifacts SET content = $1, redacted = true WHERE hash = $2", memory.RedactedContent, hash); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE code_repos SET indexed_at = greatest($1, indexed_at + 1)
			WHERE id IN (SELECT repo_id FROM code_entities WHERE artifact_hash = $2)`, at, hash); err != nil {
			return err
		}
		a, err = getArtifact(ctx, tx, hash)
		return err
	})
	return a, err
}

// CodeLedger implements memory.CodeStore.
func (db *DB) CodeLedger(ctx context.Context, repoID, key string) ([]memory.CodeTransition, error) {
	var out []memory.CodeTransition
	err := db.read(ctx, "reading the code ledger", func(tx pgx.Tx) error {
		return eachRow(ctx, tx, "SELECT "+transitionColumns+" FROM code_ledger l WHERE l.repo_id = $1 AND l.key = $2 ORDER BY l.seq",
			[]any{repoID, key}, func(s scanner) error {
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
func (db *DB) ApplyEpisode(ctx context.Context, c memory.EpisodeChange) (memory.Episode, error) {
	ep := c.Episode
	if ep.ID == "" {
		return ep, invalidParams("an episode needs an id")
	}
	if ep.Seq < 0 {
		return ep, invalidParams("episode %s: seq %d is negative", ep.ID, ep.Seq)
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
			return ep, invalidParams("hydration row %d names episode %q of session %q, not %q of %q", r.Seq, r.EpisodeID, r.SessionID, ep.ID, ep.SessionID)
		}
		rows[i] = r
	}
	gates := make([]memory.GateResult, len(c.Gates))
	for i, g := range c.Gates {
		if g.EpisodeID == "" {
			g.EpisodeID = ep.ID
		}
		if g.EpisodeID != ep.ID {
			return ep, invalidParams("gate result %d names episode %q, not %q", i, g.EpisodeID, ep.ID)
		}
		gates[i] = g
	}
	if c.Code != nil {
		if err := validateCodeChange(*c.Code); err != nil {
			return ep, err
		}
	}
	var stored memory.Episode
	err := db.write(ctx, "storing an episode", func(tx pgx.Tx) error {
		e := ep
		// Writers of one session's episodes take turns: its next number
		// and an episode's row count are read and written under the lock.
		if err := lockKeys(ctx, querier{tx}, "episode", [][2]string{{e.SessionID, ""}, {"", e.ID}}); err != nil {
			return err
		}
		var session string
		var seq, createdAt int64
		err := tx.QueryRow(ctx, "SELECT session_id, seq, created_at FROM code_episodes WHERE id = $1", e.ID).Scan(&session, &seq, &createdAt)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if e.Seq == 0 {
				if err := tx.QueryRow(ctx, "SELECT coalesce(max(seq), 0) + 1 FROM code_episodes WHERE session_id = $1",
					e.SessionID).Scan(&e.Seq); err != nil {
					return err
				}
			}
			_, err = tx.Exec(ctx, `INSERT INTO code_episodes (id, session_id, repo_id, seq, query, budget_tokens,
				budget_entities, total_tokens, rows, digest, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
				e.ID, e.SessionID, e.RepoID, e.Seq, e.Query, e.BudgetToken, e.BudgetCount, e.TotalTokens, e.Rows, e.Digest,
				e.CreatedAt, e.UpdatedAt)
			if isUnique(err) {
				return memory.Wrap(memory.CodeConflict, err, "session %q already has an episode number %d", e.SessionID, e.Seq)
			}
			if err != nil {
				return err
			}
		case err != nil:
			return err
		case session != e.SessionID:
			return memory.Errorf(memory.CodeConflict, "episode id %q already belongs to another session", e.ID)
		default:
			var stored int
			if err := tx.QueryRow(ctx, "SELECT rows FROM code_episodes WHERE id = $1", e.ID).Scan(&stored); err != nil {
				return err
			}
			if stored != e.Rows-len(rows) {
				return memory.Wrap(memory.CodeConflict, memory.ErrEpisodeChanged,
					"episode %q holds %d hydration rows, not the %d this change started from: it changed meanwhile; retry", e.ID, stored, e.Rows-len(rows))
			}
			e.Seq, e.CreatedAt = seq, createdAt
			if _, err := tx.Exec(ctx, `UPDATE code_episodes SET repo_id = $1, query = $2, budget_tokens = $3, budget_entities = $4,
				total_tokens = $5, rows = $6, digest = $7, updated_at = $8 WHERE id = $9`,
				e.RepoID, e.Query, e.BudgetToken, e.BudgetCount, e.TotalTokens, e.Rows, e.Digest, e.UpdatedAt, e.ID); err != nil {
				return err
			}
		}
		for _, r := range rows {
			_, err := tx.Exec(ctx, `INSERT INTO code_hydration (episode_id, seq, session_id, repo_id, key, artifact_hash,
				reason, method, triggered_by, token_count, hydrated_at, checksum) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
				r.EpisodeID, r.Seq, r.SessionID, r.RepoID, r.Key, r.ArtifactHash, r.Reason, r.Method, r.TriggeredBy,
				r.TokenCount, r.HydratedAt, r.Checksum)
			if isUnique(err) {
				return memory.Wrap(memory.CodeConflict, err, "episode %q already has a hydration row %d", e.ID, r.Seq)
			}
			if err != nil {
				return err
			}
		}
		if len(gates) > 0 {
			var next int64
			if err := tx.QueryRow(ctx, "SELECT coalesce(max(ordinal), 0) + 1 FROM code_gates WHERE episode_id = $1", e.ID).Scan(&next); err != nil {
				return err
			}
			for i, g := range gates {
				if _, err := tx.Exec(ctx, `INSERT INTO code_gates (episode_id, ordinal, repo_id, key, artifact_hash, a_ok, a_reason,
					a_method, b_ok, b_reason, c_ok, c_reason, disk_exists, is_stale, decision, at)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
					g.EpisodeID, next+int64(i), g.RepoID, g.Key, g.ArtifactHash, g.AOK, g.AReason, g.AMethod, g.BOK, g.BReason,
					g.COK, g.CReason, g.DiskExists, g.IsStale, g.Decision, g.At); err != nil {
					return err
				}
			}
		}
		if c.Code != nil {
			if err := applyCode(ctx, tx, *c.Code); err != nil {
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

// Episode implements memory.CodeStore.
func (db *DB) Episode(ctx context.Context, id string) (memory.Episode, error) {
	var e memory.Episode
	err := db.read(ctx, "reading an episode", func(tx pgx.Tx) error {
		var err error
		e, err = scanEpisode(tx.QueryRow(ctx, "SELECT "+episodeColumns+" FROM code_episodes e WHERE e.id = $1", id))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("episode", id)
		}
		return err
	})
	return e, err
}

// CodeSessions implements memory.CodeStore.
func (db *DB) CodeSessions(ctx context.Context) ([]string, error) {
	var out []string
	err := db.read(ctx, "listing sessions", func(tx pgx.Tx) error {
		return eachRow(ctx, tx, "SELECT DISTINCT session_id FROM code_episodes ORDER BY session_id", nil, func(s scanner) error {
			var id string
			err := s.Scan(&id)
			out = append(out, id)
			return err
		})
	})
	return out, err
}

// SessionEpisodes implements memory.CodeStore.
func (db *DB) SessionEpisodes(ctx context.Context, sessionID string) ([]memory.Episode, error) {
	var out []memory.Episode
	err := db.read(ctx, "listing episodes", func(tx pgx.Tx) error {
		return eachRow(ctx, tx, "SELECT "+episodeColumns+" FROM code_episodes e WHERE e.session_id = $1 ORDER BY e.seq",
			[]any{sessionID}, func(s scanner) error {
				e, err := scanEpisode(s)
				out = append(out, e)
				return err
			})
	})
	return out, err
}

func (db *DB) hydrationRows(ctx context.Context, what, q string, args ...any) ([]memory.HydrationRow, error) {
	var out []memory.HydrationRow
	err := db.read(ctx, what, func(tx pgx.Tx) error {
		return eachRow(ctx, tx, q, args, func(s scanner) error {
			r, err := scanHydrationRow(s)
			out = append(out, r)
			return err
		})
	})
	return out, err
}

// HydrationRows implements memory.CodeStore.
func (db *DB) HydrationRows(ctx context.Context, episodeID string) ([]memory.HydrationRow, error) {
	return db.hydrationRows(ctx, "reading hydration rows",
		"SELECT "+hydrationColumns+" FROM code_hydration h WHERE h.episode_id = $1 ORDER BY h.seq", episodeID)
}

// SessionHydrationRows implements memory.CodeStore.
func (db *DB) SessionHydrationRows(ctx context.Context, sessionID string) ([]memory.HydrationRow, error) {
	return db.hydrationRows(ctx, "reading a session's hydration rows",
		"SELECT "+hydrationColumns+` FROM code_hydration h JOIN code_episodes e ON e.id = h.episode_id
		WHERE e.session_id = $1 ORDER BY e.seq, h.seq`, sessionID)
}

// EntityHydrationRows implements memory.CodeStore: by hydration time, then
// episode and row number.
func (db *DB) EntityHydrationRows(ctx context.Context, repoID, key string) ([]memory.HydrationRow, error) {
	return db.hydrationRows(ctx, "reading an entity's hydration rows",
		"SELECT "+hydrationColumns+` FROM code_hydration h JOIN code_episodes e ON e.id = h.episode_id
		WHERE h.repo_id = $1 AND h.key = $2 ORDER BY h.hydrated_at, e.seq, e.id, h.seq`, repoID, key)
}

// GateResults implements memory.CodeStore.
func (db *DB) GateResults(ctx context.Context, episodeID string) ([]memory.GateResult, error) {
	var out []memory.GateResult
	err := db.read(ctx, "reading gate results", func(tx pgx.Tx) error {
		return eachRow(ctx, tx, "SELECT "+gateColumns+" FROM code_gates g WHERE g.episode_id = $1 ORDER BY g.ordinal",
			[]any{episodeID}, func(s scanner) error {
				g, err := scanGate(s)
				out = append(out, g)
				return err
			})
	})
	return out, err
}
