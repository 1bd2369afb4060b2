package sqlstore

import (
	"context"
	"errors"

	"github.com/cairnhq/cairn/memory"
)

// This file moves code memory in and out with Import and Export: every
// table of migration 5, so an exported database re-imports with nothing
// lost, hydration tracking still verifying and gate decisions intact.

// importCode writes the dump's code memory inside Import's transaction.
// Rows are inserted as given: an existing repository, file, entity or
// episode is a conflict, never silently replaced. Ledger entries get new
// sequence numbers in the order given; gate results follow their episode's
// existing ones.
func (s *Store) importCode(ctx context.Context, tx Querier, d memory.Dump, tick func()) error {
	for i, r := range d.CodeRepos {
		if err := s.importCodeRepo(ctx, tx, r); err != nil {
			return AtRecord(memory.SectionCodeRepos, i, err)
		}
		tick()
	}
	for i, a := range d.Artifacts {
		if err := validateArtifact(i, a, true); err != nil {
			return AtRecord(memory.SectionArtifacts, i, err)
		}
		if a.Redacted {
			a.Content = memory.RedactedContent
		}
		if _, err := tx.Exec(ctx, insertArtifact, a.Hash, a.Type, a.Content, a.CreatedAt, a.Redacted); err != nil {
			return AtRecord(memory.SectionArtifacts, i, err)
		}
		tick()
	}
	for i, f := range d.CodeFiles {
		if err := validateCodeChange(memory.CodeChange{Files: d.CodeFiles[i : i+1]}); err != nil {
			return AtRecord(memory.SectionCodeFiles, i, err)
		}
		if err := s.importCodeFile(ctx, tx, f); err != nil {
			return AtRecord(memory.SectionCodeFiles, i, err)
		}
		tick()
	}
	for i, e := range d.CodeEntities {
		if err := validateCodeChange(memory.CodeChange{Entities: d.CodeEntities[i : i+1]}); err != nil {
			return AtRecord(memory.SectionCodeEntities, i, err)
		}
		if err := s.importCodeEntity(ctx, tx, e); err != nil {
			return AtRecord(memory.SectionCodeEntities, i, err)
		}
		tick()
	}
	for i, t := range d.CodeLedger {
		if err := validateCodeChange(memory.CodeChange{Transitions: d.CodeLedger[i : i+1]}); err != nil {
			return AtRecord(memory.SectionCodeLedger, i, err)
		}
		if err := importTransition(ctx, tx, t); err != nil {
			return AtRecord(memory.SectionCodeLedger, i, err)
		}
		tick()
	}
	for i, e := range d.Episodes {
		if err := s.importEpisode(ctx, tx, e); err != nil {
			return AtRecord(memory.SectionEpisodes, i, err)
		}
		tick()
	}
	for i, r := range d.HydrationRows {
		if err := s.importHydrationRow(ctx, tx, r); err != nil {
			return AtRecord(memory.SectionHydrationRows, i, err)
		}
		tick()
	}
	for i, g := range d.Gates {
		if err := importGate(ctx, tx, g); err != nil {
			return AtRecord(memory.SectionGates, i, err)
		}
		tick()
	}
	return nil
}

// needRepo refuses a record naming a repository that is neither in the
// database nor earlier in the dump.
func needRepo(ctx context.Context, tx Querier, repoID, what string) error {
	ok, err := exists(ctx, tx, "SELECT 1 FROM code_repos WHERE id = ?", repoID)
	if err == nil && !ok {
		return memory.Errorf(memory.CodeNotFound, "%s names repository %q, which is not registered", what, repoID)
	}
	return err
}

func (s *Store) importCodeRepo(ctx context.Context, tx Querier, r memory.CodeRepo) error {
	if r.ID == "" || r.Root == "" {
		return invalidParams("a code repository needs a repo_id and a root (got %q, %q)", r.ID, r.Root)
	}
	_, err := tx.Exec(ctx, "INSERT INTO code_repos (id, root, indexed_at) VALUES (?, ?, ?)", r.ID, r.Root, r.IndexedAt)
	if s.d.IsUnique(err) {
		return memory.Errorf(memory.CodeConflict, "code repository %q already exists", r.ID)
	}
	return err
}

func (s *Store) importCodeFile(ctx context.Context, tx Querier, f memory.CodeFile) error {
	if err := needRepo(ctx, tx, f.RepoID, "code file "+f.Path); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, insertCodeFile, f.RepoID, f.Path, f.Size, f.ModTime, f.FileHash, f.Language, f.Method, f.Reason, f.Entities)
	if s.d.IsUnique(err) {
		return memory.Errorf(memory.CodeConflict, "code file %q of repository %q already exists", f.Path, f.RepoID)
	}
	return err
}

func (s *Store) importCodeEntity(ctx context.Context, tx Querier, e memory.CodeEntity) error {
	if err := needRepo(ctx, tx, e.RepoID, "code entity "+e.Key); err != nil {
		return err
	}
	if e.ArtifactHash != "" {
		ok, err := exists(ctx, tx, "SELECT 1 FROM code_artifacts WHERE hash = ?", e.ArtifactHash)
		if err != nil {
			return err
		}
		if !ok {
			return memory.Errorf(memory.CodeNotFound, "code entity %s names artifact %s, which is not in the vault", e.Key, shortHash(e.ArtifactHash))
		}
	}
	_, err := tx.Exec(ctx, insertCodeEntity, e.RepoID, e.Key, e.Path, e.Symbol, e.Kind, e.Language, e.StartLine, e.EndLine, e.Method, e.State, e.ArtifactHash, e.UpdatedAt)
	if s.d.IsUnique(err) {
		return memory.Errorf(memory.CodeConflict, "code entity %s of repository %q already exists", e.Key, e.RepoID)
	}
	return err
}

func importTransition(ctx context.Context, tx Querier, t memory.CodeTransition) error {
	ok, err := exists(ctx, tx, "SELECT 1 FROM code_entities WHERE repo_id = ? AND key = ?", t.RepoID, t.Key)
	if err != nil {
		return err
	}
	if !ok {
		return memory.Errorf(memory.CodeNotFound, "ledger entry for %s names an entity of repository %q that does not exist", t.Key, t.RepoID)
	}
	_, err = tx.Exec(ctx, insertTransition, t.RepoID, t.Key, t.From, t.To, t.ArtifactHash, t.EpisodeID, t.Reason, t.At)
	return err
}

func (s *Store) importEpisode(ctx context.Context, tx Querier, e memory.Episode) error {
	switch {
	case e.ID == "" || e.SessionID == "":
		return invalidParams("an episode needs an episode_id and a session_id (got %q, %q)", e.ID, e.SessionID)
	case e.Seq < 1:
		return invalidParams("episode %s: seq %d is not a positive number", e.ID, e.Seq)
	case e.Rows < 0 || e.TotalTokens < 0 || e.BudgetToken < 0 || e.BudgetCount < 0:
		return invalidParams("episode %s: a negative count", e.ID)
	}
	ok, err := exists(ctx, tx, "SELECT 1 FROM code_episodes WHERE id = ?", e.ID)
	if err != nil {
		return err
	}
	if ok {
		return memory.Errorf(memory.CodeConflict, "episode %q already exists", e.ID)
	}
	_, err = tx.Exec(ctx, insertEpisode, e.ID, e.SessionID, e.RepoID, e.Seq, e.Query, e.BudgetToken, e.BudgetCount, e.TotalTokens, e.Rows, e.Digest,
		e.CreatedAt, e.UpdatedAt)
	if s.d.IsUnique(err) {
		return memory.Errorf(memory.CodeConflict, "session %q already has an episode number %d", e.SessionID, e.Seq)
	}
	return err
}

// episodeSession returns the session of an episode already written.
func episodeSession(ctx context.Context, tx Querier, id, what string) (string, error) {
	var session string
	err := tx.QueryRow(ctx, "SELECT session_id FROM code_episodes WHERE id = ?", id).Scan(&session)
	if errors.Is(err, ErrNoRows) {
		return "", memory.Errorf(memory.CodeNotFound, "%s names episode %q, which does not exist", what, id)
	}
	return session, err
}

func (s *Store) importHydrationRow(ctx context.Context, tx Querier, r memory.HydrationRow) error {
	session, err := episodeSession(ctx, tx, r.EpisodeID, "a hydration row")
	if err != nil {
		return err
	}
	if session != r.SessionID {
		return invalidParams("hydration row %d of episode %q names session %q; the episode belongs to %q", r.Seq, r.EpisodeID, r.SessionID, session)
	}
	err = insertHydrationRow(ctx, tx, r)
	if s.d.IsUnique(err) {
		return memory.Errorf(memory.CodeConflict, "episode %q already has a hydration row %d", r.EpisodeID, r.Seq)
	}
	return err
}

func importGate(ctx context.Context, tx Querier, g memory.GateResult) error {
	if _, err := episodeSession(ctx, tx, g.EpisodeID, "a gate result"); err != nil {
		return err
	}
	var next int64
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(ordinal), 0) + 1 FROM code_gates WHERE episode_id = ?", g.EpisodeID).Scan(&next); err != nil {
		return err
	}
	return insertGate(ctx, tx, g, next)
}

// exportCode emits code memory after the other records, in the order
// importCode reads it; each table in a stable order, so an export of an
// imported copy is byte-identical to the original export.
func exportCode(ctx context.Context, tx Querier, emit func(memory.Record) error) error {
	steps := []struct {
		q   string
		row func(Scanner) (memory.Record, error)
	}{
		{"SELECT id, root, indexed_at FROM code_repos ORDER BY id", func(s Scanner) (memory.Record, error) {
			var r memory.CodeRepo
			err := s.Scan(&r.ID, &r.Root, &r.IndexedAt)
			return memory.Record{CodeRepo: &r}, err
		}},
		{"SELECT " + artifactColumns + " FROM code_artifacts a ORDER BY a.created_at, a.hash", func(s Scanner) (memory.Record, error) {
			a, err := scanArtifact(s)
			return memory.Record{Artifact: &a}, err
		}},
		{"SELECT " + codeFileColumns + " FROM code_files f ORDER BY f.repo_id, f.path", func(s Scanner) (memory.Record, error) {
			f, err := scanCodeFile(s)
			return memory.Record{CodeFile: &f}, err
		}},
		{"SELECT " + codeEntityColumns + " FROM code_entities e ORDER BY e.repo_id, e.key", func(s Scanner) (memory.Record, error) {
			e, err := scanCodeEntity(s)
			return memory.Record{CodeEntity: &e}, err
		}},
		{"SELECT " + transitionColumns + " FROM code_ledger l ORDER BY l.seq", func(s Scanner) (memory.Record, error) {
			t, err := scanTransition(s)
			return memory.Record{CodeTransition: &t}, err
		}},
		{"SELECT " + episodeColumns + " FROM code_episodes e ORDER BY e.session_id, e.seq", func(s Scanner) (memory.Record, error) {
			e, err := scanEpisode(s)
			return memory.Record{Episode: &e}, err
		}},
		{"SELECT " + hydrationColumns + ` FROM code_hydration h JOIN code_episodes e ON e.id = h.episode_id
			ORDER BY e.session_id, e.seq, h.seq`, func(s Scanner) (memory.Record, error) {
			r, err := scanHydrationRow(s)
			return memory.Record{HydrationRow: &r}, err
		}},
		{"SELECT " + gateColumns + ` FROM code_gates g JOIN code_episodes e ON e.id = g.episode_id
			ORDER BY e.session_id, e.seq, g.ordinal`, func(s Scanner) (memory.Record, error) {
			g, err := scanGate(s)
			return memory.Record{Gate: &g}, err
		}},
	}
	for _, st := range steps {
		if err := EachRow(ctx, tx, st.q, nil, func(s Scanner) error {
			r, err := st.row(s)
			if err != nil {
				return err
			}
			return emit(r)
		}); err != nil {
			return err
		}
	}
	return nil
}
