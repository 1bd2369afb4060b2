package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlstore"
)

var _ memory.InnerVoiceStore = (*DB)(nil)

const voiceSessionColumns = `s.id, s.version, s.provider, s.model, s.max_prompt_tokens, s.topic, s.summary, s.summary_updated,
	s.summary_exchanges, s.summary_savings, s.summary_coverage, s.summary_private, s.summarized_through, s.created_at,
	s.last_interaction, s.total_exchanges, s.total_prompt_tokens, s.total_completion_tokens, s.total_cost,
	s.session_id, s.repo_id, s.agent_id, s.user_id, s.active`

func scanVoiceSession(sc scanner) (memory.InnerVoiceSession, error) {
	var s memory.InnerVoiceSession
	var private, active int
	err := sc.Scan(&s.ID, &s.Version, &s.Provider, &s.Model, &s.MaxPromptTokens, &s.Topic, &s.Summary.Text, &s.Summary.LastUpdated,
		&s.Summary.ExchangesSummarized, &s.Summary.TokenSavings, &s.Summary.CoverageRatio, &private, &s.SummarizedThrough,
		&s.CreatedAt, &s.LastInteraction, &s.TotalExchanges, &s.TotalPromptTokens, &s.TotalCompletionTokens, &s.TotalCost,
		&s.Scope.SessionID, &s.Scope.RepoID, &s.Scope.AgentID, &s.Scope.UserID, &active)
	s.Summary.Private, s.Current = private != 0, active != 0
	s.TotalTokens = s.TotalPromptTokens + s.TotalCompletionTokens
	return s, err
}

// sameScope matches the sessions of exactly the scope of the four
// arguments that follow.
const sameScope = "s.session_id = ? AND s.repo_id = ? AND s.agent_id = ? AND s.user_id = ?"

// withinScope is the condition (after WHERE) of the sessions within
// filter, and its arguments.
func withinScope(filter memory.Scope) (string, []any) {
	conds, args := []string{"1 = 1"}, []any{}
	for _, k := range memory.ScopeKeys {
		if v := filter.Get(k); v != "" {
			conds, args = append(conds, "s."+sqlstore.ScopeColumn(k)+" = ?"), append(args, v)
		}
	}
	return strings.Join(conds, " AND "), args
}

// currentVoiceSession reads the current session of exactly scope.
func currentVoiceSession(ctx context.Context, tx queryer, scope memory.Scope) (memory.InnerVoiceSession, bool, error) {
	s, err := scanVoiceSession(tx.QueryRowContext(ctx, "SELECT "+voiceSessionColumns+" FROM inner_voice_sessions s WHERE s.active = 1 AND "+
		sameScope, scopeArgs(scope)...))
	if errors.Is(err, sql.ErrNoRows) {
		return s, false, nil
	}
	return s, err == nil, err
}

// insertVoiceSession stores s as its scope's current session unless the
// scope has one: false when it has (the caller ends it first, or
// continues it).
func insertVoiceSession(ctx context.Context, tx *sql.Tx, s memory.InnerVoiceSession) (bool, error) {
	if err := s.Scope.Validate(); err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO inner_voice_sessions (id, version, provider, model, max_prompt_tokens, topic,
		summary, summary_updated, summary_exchanges, summary_savings, summary_coverage, summary_private, summarized_through,
		created_at, last_interaction, session_id, repo_id, agent_id, user_id, active)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
		ON CONFLICT (session_id, repo_id, agent_id, user_id) WHERE active = 1 DO NOTHING`,
		s.ID, s.Version, s.Provider, s.Model, s.MaxPromptTokens, s.Topic, s.Summary.Text, s.Summary.LastUpdated,
		s.Summary.ExchangesSummarized, s.Summary.TokenSavings, s.Summary.CoverageRatio, boolInt(s.Summary.Private),
		s.SummarizedThrough, s.CreatedAt, max(s.LastInteraction, s.CreatedAt),
		s.Scope.SessionID, s.Scope.RepoID, s.Scope.AgentID, s.Scope.UserID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// endCurrentVoiceSession ends the current session of scope, if any
// (except keep's).
func endCurrentVoiceSession(ctx context.Context, tx *sql.Tx, scope memory.Scope, keep string) error {
	_, err := tx.ExecContext(ctx, "UPDATE inner_voice_sessions AS s SET active = 0 WHERE s.active = 1 AND s.id <> ? AND "+sameScope,
		append([]any{keep}, scopeArgs(scope)...)...)
	return err
}

const voiceExchangeColumns = `x.id, x.session_id, x.seq, x.ts, x.query, x.answer, x.sources, x.confidence, x.coverage_ratio, x.refused,
	x.notes, x.memories, x.synthesizer, x.model, x.degraded, x.prompt_tokens, x.completion_tokens, x.latency_ms, x.cost,
	x.prompt_hash, x.private, x.redacted`

func scanVoiceExchange(sc scanner) (memory.InnerVoiceExchange, error) {
	var x memory.InnerVoiceExchange
	var sources, memories string
	var refused, private, redacted int
	if err := sc.Scan(&x.ID, &x.SessionID, &x.Seq, &x.Timestamp, &x.Query, &x.Answer, &sources, &x.Confidence, &x.CoverageRatio,
		&refused, &x.Notes, &memories, &x.Synthesizer, &x.Model, &x.Degraded, &x.PromptTokens, &x.CompletionTokens, &x.LatencyMs,
		&x.CostEstimate, &x.PromptHash, &private, &redacted); err != nil {
		return x, err
	}
	x.Refused, x.Private, x.Redacted = refused != 0, private != 0, redacted != 0
	x.Sources, x.MemoriesReferenced = []memory.VoiceCitation{}, []string{}
	if err := json.Unmarshal([]byte(sources), &x.Sources); err != nil {
		return x, err
	}
	if err := json.Unmarshal([]byte(memories), &x.MemoriesReferenced); err != nil {
		return x, err
	}
	return x, nil
}

func getVoiceSession(ctx context.Context, tx queryer, id string) (memory.InnerVoiceSession, error) {
	s, err := scanVoiceSession(tx.QueryRowContext(ctx, "SELECT "+voiceSessionColumns+" FROM inner_voice_sessions s WHERE s.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
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
	err := db.write(ctx, "creating an inner_voice session", func(tx *sql.Tx) error {
		if err := endCurrentVoiceSession(ctx, tx, s.Scope, ""); err != nil {
			return err
		}
		if ok, err := insertVoiceSession(ctx, tx, s); err != nil {
			return err
		} else if !ok {
			// Writes take turns (BEGIN IMMEDIATE): the scope's current
			// session was just ended.
			return memory.Errorf(memory.CodeInternal, "the scope still has a current inner_voice session")
		}
		var err error
		out, err = getVoiceSession(ctx, tx, s.ID)
		return err
	})
	return out, err
}

// OpenVoiceSession implements memory.InnerVoiceStore. Writes take turns
// (BEGIN IMMEDIATE, whatever process writes), so what it reads holds
// until it commits.
func (db *DB) OpenVoiceSession(ctx context.Context, s memory.InnerVoiceSession, since int64) (memory.InnerVoiceSession, bool, error) {
	if s.ID == "" {
		return s, false, memory.Errorf(memory.CodeInvalidParams, "an inner_voice session needs an id")
	}
	var out memory.InnerVoiceSession
	created := false
	err := db.write(ctx, "opening an inner_voice session", func(tx *sql.Tx) error {
		created = false
		cur, ok, err := currentVoiceSession(ctx, tx, s.Scope)
		if err != nil {
			return err
		}
		if ok && cur.LastInteraction >= since {
			out = cur
			return nil
		}
		if err := endCurrentVoiceSession(ctx, tx, s.Scope, ""); err != nil {
			return err
		}
		if ok, err := insertVoiceSession(ctx, tx, s); err != nil {
			return err
		} else if !ok {
			return memory.Errorf(memory.CodeInternal, "the scope still has a current inner_voice session")
		}
		created = true
		out, err = getVoiceSession(ctx, tx, s.ID)
		return err
	})
	return out, created, err
}

// VoiceSession implements memory.InnerVoiceStore.
func (db *DB) VoiceSession(ctx context.Context, id string) (memory.InnerVoiceSession, error) {
	var out memory.InnerVoiceSession
	err := db.read(ctx, "reading an inner_voice session", func(tx queryer) error {
		var err error
		out, err = getVoiceSession(ctx, tx, id)
		return err
	})
	return out, err
}

// ActiveVoiceSession implements memory.InnerVoiceStore.
func (db *DB) ActiveVoiceSession(ctx context.Context, scope memory.Scope, since int64) (memory.InnerVoiceSession, bool, error) {
	var out memory.InnerVoiceSession
	found := false
	err := db.read(ctx, "finding the active inner_voice session", func(tx queryer) error {
		s, ok, err := currentVoiceSession(ctx, tx, scope)
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
	err := db.read(ctx, "listing inner_voice sessions", func(tx queryer) error {
		out = out[:0]
		return eachRowArgs(ctx, tx, "SELECT "+voiceSessionColumns+" FROM inner_voice_sessions s WHERE "+where+`
			ORDER BY s.last_interaction DESC, s.id DESC LIMIT ? OFFSET ?`, append(args, limit, max(0, offset)), func(sc scanner) error {
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
	err = db.write(ctx, "recording an inner_voice exchange", func(tx *sql.Tx) error {
		cur, err := getVoiceSession(ctx, tx, x.SessionID)
		if err != nil {
			return err
		}
		if !cur.Current {
			// The session continued becomes its scope's current one.
			if err := endCurrentVoiceSession(ctx, tx, cur.Scope, cur.ID); err != nil {
				return err
			}
		}
		if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) + 1 FROM inner_voice_exchanges WHERE session_id = ?",
			x.SessionID).Scan(&out.Seq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO inner_voice_exchanges (id, session_id, seq, ts, query, answer, sources,
			confidence, coverage_ratio, refused, notes, memories, synthesizer, model, degraded, prompt_tokens, completion_tokens,
			latency_ms, cost, prompt_hash, private) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			x.ID, x.SessionID, out.Seq, x.Timestamp, x.Query, x.Answer, string(sources), x.Confidence, x.CoverageRatio,
			boolInt(x.Refused), x.Notes, string(memories), x.Synthesizer, x.Model, x.Degraded, x.PromptTokens, x.CompletionTokens,
			x.LatencyMs, x.CostEstimate, x.PromptHash, boolInt(x.Private)); err != nil {
			return err
		}
		refs := slices.Clone(x.MemoriesReferenced)
		for _, c := range x.Sources {
			refs = append(refs, c.SourceID)
		}
		slices.Sort(refs)
		for _, ref := range slices.Compact(refs) {
			if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO inner_voice_refs (ref_id, exchange_id) VALUES (?, ?)", ref, x.ID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE inner_voice_sessions SET total_exchanges = total_exchanges + 1,
			total_prompt_tokens = total_prompt_tokens + ?, total_completion_tokens = total_completion_tokens + ?,
			total_cost = total_cost + ?, last_interaction = max(last_interaction, ?), active = 1 WHERE id = ?`,
			x.PromptTokens, x.CompletionTokens, x.CostEstimate, x.Timestamp, x.SessionID); err != nil {
			return err
		}
		sess, err = getVoiceSession(ctx, tx, x.SessionID)
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
	err := db.read(ctx, "listing inner_voice exchanges", func(tx queryer) error {
		out = out[:0]
		return eachRowArgs(ctx, tx, "SELECT "+voiceExchangeColumns+` FROM inner_voice_exchanges x
			WHERE x.session_id = ? AND x.seq > ? ORDER BY x.seq LIMIT ?`, []any{sessionID, after, limit}, func(sc scanner) error {
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
	err := db.write(ctx, "writing an inner_voice rolling summary", func(tx *sql.Tx) error {
		cur, err := getVoiceSession(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if through <= cur.SummarizedThrough {
			return memory.Errorf(memory.CodeConflict, "the session's summary already covers exchange %d", cur.SummarizedThrough)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE inner_voice_sessions SET summary = ?, summary_updated = ?, summary_exchanges = ?,
			summary_savings = ?, summary_coverage = ?, summary_private = ?, summarized_through = ?,
			total_prompt_tokens = total_prompt_tokens + ?, total_completion_tokens = total_completion_tokens + ?,
			total_cost = total_cost + ? WHERE id = ?`,
			s.Text, s.LastUpdated, s.ExchangesSummarized, s.TokenSavings, s.CoverageRatio, boolInt(s.Private), through,
			promptTokens, completionTokens, cost, sessionID); err != nil {
			return err
		}
		out, err = getVoiceSession(ctx, tx, sessionID)
		return err
	})
	return out, err
}

// DeleteVoiceSession implements memory.InnerVoiceStore.
func (db *DB) DeleteVoiceSession(ctx context.Context, id string) error {
	err := db.write(ctx, "deleting an inner_voice session", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM inner_voice_sessions WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("inner_voice session", id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	db.checkpoint(ctx)
	return nil
}

// VoiceTotals implements memory.InnerVoiceStore.
func (db *DB) VoiceTotals(ctx context.Context, filter memory.Scope) (memory.InnerVoiceTotals, error) {
	var t memory.InnerVoiceTotals
	where, args := withinScope(filter)
	err := db.read(ctx, "adding up inner_voice sessions", func(tx queryer) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(total_prompt_tokens), 0),
			coalesce(sum(total_completion_tokens), 0), coalesce(sum(total_cost), 0) FROM inner_voice_sessions s WHERE `+where, args...).Scan(
			&t.Sessions, &t.PromptTokens, &t.CompletionTokens, &t.Cost); err != nil {
			return err
		}
		exchanges := "inner_voice_exchanges"
		if !filter.IsZero() {
			exchanges = "inner_voice_exchanges WHERE session_id IN (SELECT s.id FROM inner_voice_sessions s WHERE " + where + ")"
		}
		return tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(refused), 0), coalesce(sum(degraded <> ''), 0),
			coalesce(avg(coverage_ratio), 0), coalesce(avg(latency_ms), 0) FROM `+exchanges, args...).Scan(
			&t.Exchanges, &t.Refused, &t.Degraded, &t.MeanCoverage, &t.MeanLatencyMs)
	})
	return t, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
