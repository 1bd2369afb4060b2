package postgres

import (
	"context"
	"errors"
	"slices"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
	"github.com/jackc/pgx/v5"
)

// capsuleSlot is what appending needs to know of a capsule.
type capsuleSlot struct {
	id     string
	status memory.CapsuleStatus
	scope  memory.Scope
	next   int // next membership position
}

// member is a capsule membership to write.
type member struct {
	capsule  string
	position int
	obs      string
}

// appender resolves the capsules a batch of observations joins. It locks
// every capsule it reads (in id order, so concurrent batches cannot
// deadlock) until the transaction ends: appends to one capsule from any
// number of servers take positions one after another, and a capsule
// closed meanwhile is seen closed.
type appender struct {
	tx        queryer
	byID      map[string]*capsuleSlot
	bySession map[string]*capsuleSlot // nil value: the session has no open capsule
}

func newAppender(tx queryer) *appender {
	return &appender{tx: tx, byID: map[string]*capsuleSlot{}, bySession: map[string]*capsuleSlot{}}
}

// load locks and reads the capsules named by ids and the open capsules
// of sessions, with their next positions.
func (a *appender) load(ctx context.Context, ids, sessions []string) error {
	var want []string
	for _, id := range ids {
		if _, ok := a.byID[id]; !ok {
			want = append(want, id)
		}
	}
	var wantSess []string
	for _, s := range sessions {
		if _, ok := a.bySession[s]; !ok {
			wantSess = append(wantSess, s)
			a.bySession[s] = nil
		}
	}
	if len(want) == 0 && len(wantSess) == 0 {
		return nil
	}
	var slots []*capsuleSlot
	err := sqlstore.EachRow(ctx, querier{a.tx}, `SELECT c.id, c.status, c.session_id, c.repo_id, c.agent_id, c.user_id FROM capsules c
		WHERE c.id = ANY($1) OR (c.status = 'open' AND c.session_id = ANY($2)) ORDER BY c.id FOR UPDATE`,
		[]any{want, wantSess}, func(s sqlstore.Scanner) error {
			var c capsuleSlot
			if err := s.Scan(&c.id, &c.status, &c.scope.SessionID, &c.scope.RepoID, &c.scope.AgentID, &c.scope.UserID); err != nil {
				return err
			}
			slots = append(slots, &c)
			return nil
		})
	if err != nil {
		return err
	}
	if len(slots) == 0 {
		return nil
	}
	var got []string
	for _, c := range slots {
		got = append(got, c.id)
		a.byID[c.id] = c
	}
	// Positions are read after the locks are held, so they include
	// every append committed before.
	err = sqlstore.EachRow(ctx, querier{a.tx}, `SELECT capsule_id, max(position) + 1 FROM capsule_observations WHERE capsule_id = ANY($1) GROUP BY capsule_id`,
		[]any{got}, func(s sqlstore.Scanner) error {
			var id string
			var next int
			if err := s.Scan(&id, &next); err != nil {
				return err
			}
			a.byID[id].next = next
			return nil
		})
	if err != nil {
		return err
	}
	for _, c := range slots {
		if c.status == memory.CapsuleOpen && c.scope.SessionID != "" && slices.Contains(wantSess, c.scope.SessionID) {
			a.bySession[c.scope.SessionID] = c
		}
	}
	return nil
}

// prepare resolves the capsule of each new observation and returns the
// observations as they will be stored, with their memberships.
func (a *appender) prepare(ctx context.Context, batch []memory.NewObservation, firstIndex int, section memory.Section) ([]memory.Observation, []member, error) {
	var ids, sessions []string
	for _, n := range batch {
		if n.CapsuleID != "" {
			ids = append(ids, n.CapsuleID)
		} else if n.Scope.SessionID != "" {
			sessions = append(sessions, n.Scope.SessionID)
		}
	}
	if err := a.load(ctx, ids, sessions); err != nil {
		return nil, nil, err
	}
	out := make([]memory.Observation, 0, len(batch))
	var members []member
	for i, n := range batch {
		o := n.Observation
		var slot *capsuleSlot
		if n.CapsuleID != "" {
			slot = a.byID[n.CapsuleID]
			if slot == nil {
				return nil, nil, atRecord(section, firstIndex+i, notFound("capsule", n.CapsuleID))
			}
		} else if n.Scope.SessionID != "" {
			slot = a.bySession[n.Scope.SessionID]
		}
		if slot != nil {
			dim := o.Scope.Conflicts(slot.scope)
			switch {
			case n.CapsuleID != "" && slot.status != memory.CapsuleOpen:
				return nil, nil, atRecord(section, firstIndex+i,
					memory.Errorf(memory.CodeConflict, "capsule %q is closed; open a new capsule to record into", slot.id))
			case n.CapsuleID != "" && dim != "":
				return nil, nil, atRecord(section, firstIndex+i, memory.Errorf(memory.CodeInvalidParams,
					"observation scope %s %q differs from capsule %q's %q", dim, o.Scope.Get(dim), slot.id, slot.scope.Get(dim)))
			case dim != "":
				slot = nil // the session's open capsule lies in another scope: do not join it
			default:
				o.Scope = o.Scope.Fill(slot.scope)
			}
		}
		if slot != nil {
			members = append(members, member{slot.id, slot.next, o.ID})
			slot.next++
		}
		out = append(out, o)
	}
	return out, members, nil
}

// insertObservations writes observation rows (with their full-text
// columns, none for redacted ones) in one statement. An id that is taken,
// or given twice, is a conflict naming its record.
func insertObservations(ctx context.Context, tx queryer, obs []memory.Observation, firstIndex int, section memory.Section) error {
	if len(obs) == 0 {
		return nil
	}
	ids := make([]string, len(obs))
	seen := make(map[string]bool, len(obs))
	for i, o := range obs {
		if seen[o.ID] {
			return atRecord(section, firstIndex+i, memory.Errorf(memory.CodeConflict, "observation id %q already exists", o.ID))
		}
		seen[o.ID] = true
		ids[i] = o.ID
	}
	taken, err := existingIDs(ctx, tx, "observations", ids)
	if err != nil {
		return err
	}
	for i, o := range obs {
		if taken[o.ID] {
			return atRecord(section, firstIndex+i, memory.Errorf(memory.CodeConflict, "observation id %q already exists", o.ID))
		}
	}
	n := len(obs)
	kinds, contents, provs := make([]string, n), make([]string, n), make([]string, n)
	ts := make([]int64, n)
	redacted := make([]bool, n)
	sess, repo, agent, user := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	docs := make([]*string, n)
	lens := make([]int32, n)
	for i, o := range obs {
		kinds[i], contents[i], provs[i], ts[i], redacted[i] = string(o.Kind), o.Content, string(o.Provenance), o.TS, o.Redacted
		sess[i], repo[i], agent[i], user[i] = o.Scope.SessionID, o.Scope.RepoID, o.Scope.AgentID, o.Scope.UserID
		if !o.Redacted {
			doc, l := ftsDoc(o.Content)
			docs[i], lens[i] = &doc, int32(l)
		}
	}
	_, err = tx.Exec(ctx, `INSERT INTO observations (id, kind, content, provenance, ts, redacted, session_id, repo_id, agent_id, user_id, fts, fts_len)
		SELECT u.id, u.kind, u.content, u.prov, u.ts, u.redacted, u.s, u.r, u.a, u.u, u.doc::tsvector, u.len
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::boolean[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int[])
			AS u(id, kind, content, prov, ts, redacted, s, r, a, u, doc, len)`,
		ids, kinds, contents, provs, ts, redacted, sess, repo, agent, user, docs, lens)
	if isUnique(err) {
		return memory.Wrap(memory.CodeConflict, err, "an observation id of the batch was taken meanwhile")
	}
	return err
}

// existingIDs returns which of ids a table holds.
func existingIDs(ctx context.Context, tx queryer, table string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := sqlstore.EachRow(ctx, querier{tx}, "SELECT id FROM "+table+" WHERE id = ANY($1)", []any{ids}, func(s sqlstore.Scanner) error {
		var id string
		err := s.Scan(&id)
		out[id] = true
		return err
	})
	return out, err
}

// insertMembers writes capsule memberships in one statement.
func insertMembers(ctx context.Context, tx queryer, ms []member) error {
	if len(ms) == 0 {
		return nil
	}
	caps, pos, obs := make([]string, len(ms)), make([]int32, len(ms)), make([]string, len(ms))
	for i, m := range ms {
		caps[i], pos[i], obs[i] = m.capsule, int32(m.position), m.obs
	}
	_, err := tx.Exec(ctx, `INSERT INTO capsule_observations (capsule_id, position, observation_id)
		SELECT * FROM unnest($1::text[], $2::int[], $3::text[])`, caps, pos, obs)
	if isUnique(err) {
		// Another writer took the position: the capsule lock should
		// prevent it, but a retry is always right.
		return sqlstore.RetryError{Err: err}
	}
	return err
}

// AppendObservations implements memory.ObservationStore.
func (db *DB) AppendObservations(ctx context.Context, batch []memory.NewObservation) ([]memory.Observation, error) {
	var out []memory.Observation
	err := db.write(ctx, "appending observations", func(tx pgx.Tx) error {
		a := newAppender(tx)
		obs, members, err := a.prepare(ctx, batch, 0, "")
		if err != nil {
			return err
		}
		if err := insertObservations(ctx, tx, obs, 0, ""); err != nil {
			return err
		}
		if err := insertMembers(ctx, tx, members); err != nil {
			return err
		}
		out = obs
		return nil
	})
	if err != nil {
		return nil, unwrapRecord(err)
	}
	return out, nil
}

// unwrapRecord drops the record attribution of an error outside an
// import.
func unwrapRecord(err error) error {
	var re *memory.RecordError
	if errors.As(err, &re) {
		return re.Err
	}
	return err
}

// atRecord names the record a typed error is about (section "" leaves
// it unnamed); other errors (the database's) pass unchanged.
func atRecord(section memory.Section, i int, err error) error {
	var me *memory.Error
	if section == "" || !errors.As(err, &me) {
		return err
	}
	return &memory.RecordError{Section: section, Index: i, Err: err}
}

// Redact implements memory.ObservationStore. The row is rewritten in
// place: its text and its terms leave every index at once (the vectors
// go with them, by trigger). PostgreSQL keeps the old row version on
// disk until VACUUM reclaims it (docs/postgres.md).
func (db *DB) Redact(ctx context.Context, id string) (memory.Observation, error) {
	var o memory.Observation
	err := db.write(ctx, "forgetting observation", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE observations SET content = $2, redacted = true, fts = NULL, fts_len = 0
			WHERE id = $1 AND NOT redacted`, id, memory.RedactedContent); err != nil {
			return err
		}
		var err error
		o, err = sqlstore.GetObservation(ctx, querier{tx}, id)
		return err
	})
	return o, err
}
