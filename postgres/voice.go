package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
	"github.com/jackc/pgx/v5"
)

var _ memory.InnerVoiceStore = (*DB)(nil)

const voiceSessionColumns = `s.id, s.version, s.provider, s.model, s.max_prompt_tokens, s.topic, s.summary, s.summary_updated,
	s.summary_exchanges, s.summary_savings, s.summary_coverage, s.summary_private, s.summarized_through, s.created_at,
	s.last_interaction, s.total_exchanges, s.total_prompt_tokens, s.total_completion_tokens, s.total_cost,
	s.session_id, s.repo_id, s.agent_id, s.user_id, s.active`

func scanVoiceSession(sc scanner) (memory.InnerVoiceSession, error) {
	var s memory.InnerVoiceSession
	err := sc.Scan(&s.ID, &s.Version, &s.Provider, &s.Model, &s.MaxPromptTokens, &s.Topic, &s.Summary.Text, &s.Summary.LastUpdated,
		&s.Summary.ExchangesSummarized, &s.Summary.TokenSavings, &s.Summary.CoverageRatio, &s.Summary.Private, &s.SummarizedThrough,
		&s.CreatedAt, &s.LastInteraction, &s.TotalExchanges, &s.TotalPromptTokens, &s.TotalCompletionTokens, &s.TotalCost,
		&s.Scope.SessionID, &s.Scope.RepoID, &s.Scope.AgentID, &s.Scope.UserID, &s.Current)
	s.TotalTokens = s.TotalPromptTokens + s.TotalCompletionTokens
	return s, err
}

// currentIndex is the unique index that holds a scope to one current
// session.
const currentIndex = "inner_voice_sessions_current"

// sameScope matches the sessions of exactly the scope of the arguments
// $1 to $4.
const sameScope = "s.session_id = $1 AND s.repo_id = $2 AND s.agent_id = $3 AND s.user_id = $4"

// withinScope is the condition (after WHERE) of the sessions within
// filter, and its arguments ($1 on).
func withinScope(filter memory.Scope) (string, []any) {
	conds, args := []string{"true"}, []any{}
	for _, k := range memory.ScopeKeys {
		if v := filter.Get(k); v != "" {
			args = append(args, v)
			conds = append(conds, "s."+sqlstore.ScopeColumn(k)+" = $"+strconv.Itoa(len(args)))
		}
	}
	return strings.Join(conds, " AND "), args
}

// currentVoiceSession reads the current session of exactly scope; lock
// takes its row for update.
func currentVoiceSession(ctx context.Context, tx queryer, scope memory.Scope, lock bool) (memory.InnerVoiceSession, bool, error) {
	suffix := ""
	if lock {
		suffix = " FOR UPDATE"
	}
	s, err := scanVoiceSession(tx.QueryRow(ctx, "SELECT "+voiceSessionColumns+" FROM inner_voice_sessions s WHERE s.active AND "+
		sameScope+suffix, scopeArgs(scope)...))
	if errors.Is(err, pgx.ErrNoRows) {
		return s, false, nil
	}
	return s, err == nil, err
}

// insertVoiceSession stores s as its scope's current session unless the
// scope has one (committed, or by a transaction it waits for): false
// when it has.
func insertVoiceSession(ctx context.Context, tx pgx.Tx, s memory.InnerVoiceSession) (bool, error) {
	if err := s.Scope.Validate(); err != nil {
		return false, err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO inner_voice_sessions (id, version, provider, model, max_prompt_tokens, topic,
		summary, summary_updated, summary_exchanges, summary_savings, summary_coverage, summary_private, summarized_through,
		created_at, last_interaction, session_id, repo_id, agent_id, user_id, active)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, true)
		ON CONFLICT (session_id, repo_id, agent_id, user_id) WHERE active DO NOTHING`,
		s.ID, s.Version, s.Provider, s.Model, s.MaxPromptTokens, s.Topic, s.Summary.Text, s.Summary.LastUpdated,
		s.Summary.ExchangesSummarized, s.Summary.TokenSavings, s.Summary.CoverageRatio, s.Summary.Private,
		s.SummarizedThrough, s.CreatedAt, max(s.LastInteraction, s.CreatedAt),
		s.Scope.SessionID, s.Scope.RepoID, s.Scope.AgentID, s.Scope.UserID)
	if isUnique(err) {
		return false, memory.Wrap(memory.CodeConflict, err, "inner_voice session %q already exists", s.ID)
	}
	return tag.RowsAffected() == 1, err
}

// endCurrentVoiceSession ends the current session of scope, if any
// (except keep's).
func endCurrentVoiceSession(ctx context.Context, tx pgx.Tx, scope memory.Scope, keep string) error {
	_, err := tx.Exec(ctx, "UPDATE inner_voice_sessions s SET active = false WHERE s.active AND "+sameScope+" AND s.id <> $5",
		append(scopeArgs(scope), keep)...)
	return err
}

const voiceExchangeColumns = `x.id, x.session_id, x.seq, x.ts, x.query, x.answer, x.sources, x.confidence, x.coverage_ratio, x.refused,
	x.notes, x.memories, x.synthesizer, x.model, x.degraded, x.prompt_tokens, x.completion_tokens, x.latency_ms, x.cost,
	x.prompt_hash, x.private, x.redacted`

func scanVoiceExchange(sc scanner) (memory.InnerVoiceExchange, error) {
	var x memory.InnerVoiceExchange
	var sources, memories string
	if err := sc.Scan(&x.ID, &x.SessionID, &x.Seq, &x.Timestamp, &x.Query, &x.Answer, &sources, &x.Confidence, &x.CoverageRatio,
		&x.Refused, &x.Notes, &memories, &x.Synthesizer, &x.Model, &x.Degraded, &x.PromptTokens, &x.CompletionTokens, &x.LatencyMs,
		&x.CostEstimate, &x.PromptHash, &x.Private, &x.Redacted); err != nil {
		return x, err
	}
	x.Sources, x.MemoriesReferenced = []memory.VoiceCitation{}, []string{}
	if err := json.Unmarshal([]byte(sources), &x.Sources); err != nil {
		return x, err
	}
	if err := json.Unmarshal([]byte(memories), &x.MemoriesReferenced); err != nil {
		return x, err
	}
	return x, nil
}

// getVoiceSession reads one session; lock takes its row for update (an
// exchange's sequence number and a summary's coverage are decided under
// it, so servers writing to one session take turns).
func getVoiceSession(ctx context.Context, tx queryer, id string, lock bool) (memory.InnerVoiceSession, error) {
	suffix := ""
	if lock {
		suffix = " FOR UPDATE"
	}
	s, err := scanVoiceSession(tx.QueryRow(ctx, "SELECT "+voiceSessionColumns+" FROM inner_voice_sessions s WHERE s.id = $1"+suffix, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return s, notFound("inner_voice session", id)
	}
	return s, err
}

// CreateVoiceSession implements memory.InnerVoiceStore.
func (db *DB) CreateVoiceSession(ctx context.Context, s memory.InnerVoiceSession) (memory.InnerVoiceSession, error) {
	if s.ID == "" {
		return s, memory.Errorf(memory.CodeInvalidParams, "an inner_voice session needs an id")
	}
	var out memory.InnerVoiceSession
	err := db.write(ctx, "creating an inner_voice session", func(tx pgx.Tx) error {
		if err := endCurrentVoiceSession(ctx, tx, s.Scope, ""); err != nil {
			return err
		}
		ok, err := insertVoiceSession(ctx, tx, s)
		if err != nil {
			return err
		}
		if !ok {
			// Another new thread of the scope became current after this
			// one's end of the current session: start again.
			return sqlstore.RetryError{Err: errors.New("another inner_voice session of the scope became current")}
		}
		out, err = getVoiceSession(ctx, tx, s.ID, false)
		return err
	})
	return out, err
}

// OpenVoiceSession implements memory.InnerVoiceStore. The scope's current
// session is locked while the call decides; a call that finds none, or
// one too old, inserts its own unless another transaction did first (the
// unique index decides), and then continues that one.
func (db *DB) OpenVoiceSession(ctx context.Context, s memory.InnerVoiceSession, since int64) (memory.InnerVoiceSession, bool, error) {
	if s.ID == "" {
		return s, false, memory.Errorf(memory.CodeInvalidParams, "an inner_voice session needs an id")
	}
	var out memory.InnerVoiceSession
	created := false
	err := db.write(ctx, "opening an inner_voice session", func(tx pgx.Tx) error {
		created = false
		cur, ok, err := currentVoiceSession(ctx, tx, s.Scope, true)
		if err != nil {
			return err
		}
		if ok && cur.LastInteraction >= since {
			out = cur
			return nil
		}
		if ok {
			if err := endCurrentVoiceSession(ctx, tx, s.Scope, ""); err != nil {
				return err
			}
		}
		inserted, err := insertVoiceSession(ctx, tx, s)
		if err != nil {
			return err
		}
		if inserted {
			created = true
			out, err = getVoiceSession(ctx, tx, s.ID, false)
			return err
		}
		// Another call started the scope's session first: continue it (a
		// read-committed statement sees what that call committed).
		cur, ok, err = currentVoiceSession(ctx, tx, s.Scope, true)
		if err != nil {
			return err
		}
		if ok && cur.LastInteraction >= since {
			out = cur
			return nil
		}
		return sqlstore.RetryError{Err: errors.New("the scope's current inner_voice session changed meanwhile")}
	})
	return out, created, err
}

// VoiceSession implements memory.InnerVoiceStore.
func (db *DB) VoiceSession(ctx context.Context, id string) (memory.InnerVoiceSession, error) {
	var out memory.InnerVoiceSession
	err := db.read(ctx, "reading an inner_voice session", func(tx pgx.Tx) error {
		var err error
		out, err = getVoiceSession(ctx, tx, id, false)
		return err
	})
	return out, err
}

// ActiveVoiceSession implements memory.InnerVoiceStore.
func (db *DB) ActiveVoiceSession(ctx context.Context, scope memory.Scope, since int64) (memory.InnerVoiceSession, bool, error) {
	var out memory.InnerVoiceSession
	found := false
	err := db.read(ctx, "finding the active inner_voice session", func(tx pgx.Tx) error {
		s, ok, err := currentVoiceSession(ctx, tx, scope, false)
		out, found = s, ok && s.LastInteraction >= since
		return err
	})
	return out, found, err
}

// VoiceSessions implements memory.InnerVoiceStore.
func (db *DB) VoiceSessions(ctx context.Context, filter memory.Scope, offset, limit int) ([]memory.InnerVoiceSession, error) {
	if limit <= 0 {
		limit = 100
	}
	out := []memory.InnerVoiceSession{}
	where, args := withinScope(filter)
	n := len(args)
	err := db.read(ctx, "listing inner_voice sessions", func(tx pgx.Tx) error {
		out = out[:0]
		return eachRow(ctx, tx, "SELECT "+voiceSessionColumns+" FROM inner_voice_sessions s WHERE "+where+`
			ORDER BY s.last_interaction DESC, s.id DESC LIMIT $`+strconv.Itoa(n+1)+" OFFSET $"+strconv.Itoa(n+2),
			append(args, limit, max(0, offset)), func(sc scanner) error {
				s, err := scanVoiceSession(sc)
				out = append(out, s)
				return err
			})
	})
	return out, err
}

// AddVoiceExchange implements memory.InnerVoiceStore.
func (db *DB) AddVoiceExchange(ctx context.Context, x memory.InnerVoiceExchange) (memory.InnerVoiceExchange, memory.InnerVoiceSession, error) {
	var sess memory.InnerVoiceSession
	if x.ID == "" {
		return x, sess, memory.Errorf(memory.CodeInvalidParams, "an inner_voice exchange needs an id")
	}
	if x.Sources == nil {
		x.Sources = []memory.VoiceCitation{}
	}
	if x.MemoriesReferenced == nil {
		x.MemoriesReferenced = []string{}
	}
	sources, err := json.Marshal(x.Sources)
	if err != nil {
		return x, sess, memory.Wrap(memory.CodeInvalidParams, err, "the exchange's citations do not encode")
	}
	memories, err := json.Marshal(x.MemoriesReferenced)
	if err != nil {
		return x, sess, memory.Wrap(memory.CodeInvalidParams, err, "the exchange's memory ids do not encode")
	}
	out := x
	err = db.write(ctx, "recording an inner_voice exchange", func(tx pgx.Tx) error {
		cur, err := getVoiceSession(ctx, tx, x.SessionID, true)
		if err != nil {
			return err
		}
		if !cur.Current {
			// The session continued becomes its scope's current one.
			if err := endCurrentVoiceSession(ctx, tx, cur.Scope, cur.ID); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(seq), 0) + 1 FROM inner_voice_exchanges WHERE session_id = $1",
			x.SessionID).Scan(&out.Seq); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO inner_voice_exchanges (id, session_id, seq, ts, query, answer, sources,
			confidence, coverage_ratio, refused, notes, memories, synthesizer, model, degraded, prompt_tokens, completion_tokens,
			latency_ms, cost, prompt_hash, private) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
			$18, $19, $20, $21)`,
			x.ID, x.SessionID, out.Seq, x.Timestamp, x.Query, x.Answer, string(sources), x.Confidence, x.CoverageRatio,
			x.Refused, x.Notes, string(memories), x.Synthesizer, x.Model, x.Degraded, x.PromptTokens, x.CompletionTokens,
			x.LatencyMs, x.CostEstimate, x.PromptHash, x.Private)
		if isUnique(err) {
			return memory.Wrap(memory.CodeConflict, err, "inner_voice exchange %q already exists", x.ID)
		}
		if err != nil {
			return err
		}
		refs := slices.Clone(x.MemoriesReferenced)
		for _, c := range x.Sources {
			refs = append(refs, c.SourceID)
		}
		slices.Sort(refs)
		if _, err := tx.Exec(ctx, "INSERT INTO inner_voice_refs (ref_id, exchange_id) SELECT r, $2 FROM unnest($1::text[]) r ON CONFLICT DO NOTHING",
			slices.Compact(refs), x.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE inner_voice_sessions SET total_exchanges = total_exchanges + 1,
			total_prompt_tokens = total_prompt_tokens + $1, total_completion_tokens = total_completion_tokens + $2,
			total_cost = total_cost + $3, last_interaction = greatest(last_interaction, $4), active = true WHERE id = $5`,
			x.PromptTokens, x.CompletionTokens, x.CostEstimate, x.Timestamp, x.SessionID); err != nil {
			if isUnique(err) && constraint(err) == currentIndex {
				// Another session of the scope became current meanwhile.
				return sqlstore.RetryError{Err: err}
			}
			return err
		}
		sess, err = getVoiceSession(ctx, tx, x.SessionID, false)
		return err
	})
	if err != nil {
		return x, sess, err
	}
	return out, sess, nil
}

// VoiceExchanges implements memory.InnerVoiceStore.
func (db *DB) VoiceExchanges(ctx context.Context, sessionID string, after, limit int) ([]memory.InnerVoiceExchange, error) {
	if limit <= 0 {
		limit = 100
	}
	out := []memory.InnerVoiceExchange{}
	err := db.read(ctx, "listing inner_voice exchanges", func(tx pgx.Tx) error {
		out = out[:0]
		return eachRow(ctx, tx, "SELECT "+voiceExchangeColumns+` FROM inner_voice_exchanges x
			WHERE x.session_id = $1 AND x.seq > $2 ORDER BY x.seq LIMIT $3`, []any{sessionID, after, limit}, func(sc scanner) error {
			x, err := scanVoiceExchange(sc)
			out = append(out, x)
			return err
		})
	})
	return out, err
}

// SetVoiceSummary implements memory.InnerVoiceStore.
func (db *DB) SetVoiceSummary(ctx context.Context, sessionID string, s memory.RollingSummary, through int, promptTokens, completionTokens int64, cost float64) (memory.InnerVoiceSession, error) {
	var out memory.InnerVoiceSession
	err := db.write(ctx, "writing an inner_voice rolling summary", func(tx pgx.Tx) error {
		cur, err := getVoiceSession(ctx, tx, sessionID, true)
		if err != nil {
			return err
		}
		if through <= cur.SummarizedThrough {
			return memory.Errorf(memory.CodeConflict, "the session's summary already covers exchange %d", cur.SummarizedThrough)
		}
		if _, err := tx.Exec(ctx, `UPDATE inner_voice_sessions SET summary = $1, summary_updated = $2, summary_exchanges = $3,
			summary_savings = $4, summary_coverage = $5, summary_private = $6, summarized_through = $7,
			total_prompt_tokens = total_prompt_tokens + $8, total_completion_tokens = total_completion_tokens + $9,
			total_cost = total_cost + $10 WHERE id = $11`,
			s.Text, s.LastUpdated, s.ExchangesSummarized, s.TokenSavings, s.CoverageRatio, s.Private, through,
			promptTokens, completionTokens, cost, sessionID); err != nil {
			return err
		}
		out, err = getVoiceSession(ctx, tx, sessionID, false)
		return err
	})
	return out, err
}

// DeleteVoiceSession implements memory.InnerVoiceStore. PostgreSQL keeps
// the deleted rows' bytes in the tables' files until VACUUM reclaims them
// (docs/postgres.md, Forgetting).
func (db *DB) DeleteVoiceSession(ctx context.Context, id string) error {
	return db.write(ctx, "deleting an inner_voice session", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM inner_voice_sessions WHERE id = $1", id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("inner_voice session", id)
		}
		return nil
	})
}

// VoiceTotals implements memory.InnerVoiceStore.
func (db *DB) VoiceTotals(ctx context.Context, filter memory.Scope) (memory.InnerVoiceTotals, error) {
	var t memory.InnerVoiceTotals
	where, args := withinScope(filter)
	err := db.read(ctx, "adding up inner_voice sessions", func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(sum(total_prompt_tokens), 0)::bigint,
			coalesce(sum(total_completion_tokens), 0)::bigint, coalesce(sum(total_cost), 0) FROM inner_voice_sessions s WHERE `+where, args...).Scan(
			&t.Sessions, &t.PromptTokens, &t.CompletionTokens, &t.Cost); err != nil {
			return err
		}
		exchanges := "inner_voice_exchanges"
		if !filter.IsZero() {
			exchanges = "inner_voice_exchanges WHERE session_id IN (SELECT s.id FROM inner_voice_sessions s WHERE " + where + ")"
		}
		return tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE refused), count(*) FILTER (WHERE degraded <> ''),
			coalesce(avg(coverage_ratio), 0), coalesce(avg(latency_ms), 0)::float8 FROM `+exchanges, args...).Scan(
			&t.Exchanges, &t.Refused, &t.Degraded, &t.MeanCoverage, &t.MeanLatencyMs)
	})
	return t, err
}
