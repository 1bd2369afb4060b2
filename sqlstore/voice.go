package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

var _ memory.InnerVoiceStore = (*Store)(nil)

const voiceSessionColumns = `s.id, s.version, s.provider, s.model, s.max_prompt_tokens, s.topic, s.summary, s.summary_updated,
	s.summary_exchanges, s.summary_savings, s.summary_coverage, s.summary_private, s.summarized_through, s.created_at,
	s.last_interaction, s.total_exchanges, s.total_prompt_tokens, s.total_completion_tokens, s.total_cost,
	s.session_id, s.repo_id, s.agent_id, s.user_id, s.active`

func scanVoiceSession(sc Scanner) (memory.InnerVoiceSession, error) {
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

// sameScope matches the sessions of exactly the scope of the four
// arguments that follow (ScopeArgs).
const sameScope = "s.session_id = ? AND s.repo_id = ? AND s.agent_id = ? AND s.user_id = ?"

// withinScope is the condition (after WHERE) of the sessions within
// filter, and its arguments.
func withinScope(filter memory.Scope) (string, []any) {
	conds, args := []string{"true"}, []any{}
	for _, k := range memory.ScopeKeys {
		if v := filter.Get(k); v != "" {
			conds, args = append(conds, "s."+scopeColumn(k)+" = ?"), append(args, v)
		}
	}
	return strings.Join(conds, " AND "), args
}

// currentVoiceSession reads the current session of exactly scope; lock,
// where writers do not take turns, takes its row for update.
func (st *Store) currentVoiceSession(ctx context.Context, tx Querier, scope memory.Scope, lock bool) (memory.InnerVoiceSession, bool, error) {
	suffix := ""
	if lock {
		suffix = st.d.ForUpdate
	}
	s, err := scanVoiceSession(tx.QueryRow(ctx, "SELECT "+voiceSessionColumns+" FROM inner_voice_sessions s WHERE "+st.d.Current+" AND "+
		sameScope+suffix, ScopeArgs(scope)...))
	if errors.Is(err, ErrNoRows) {
		return s, false, nil
	}
	return s, err == nil, err
}

// insertVoiceSession stores s as its scope's current session unless the
// scope has one (committed, or by a transaction it waits for): false
// when it has.
func (st *Store) insertVoiceSession(ctx context.Context, tx Querier, s memory.InnerVoiceSession) (bool, error) {
	if err := s.Scope.Validate(); err != nil {
		return false, err
	}
	n, err := tx.Exec(ctx, `INSERT INTO inner_voice_sessions (id, version, provider, model, max_prompt_tokens, topic,
		summary, summary_updated, summary_exchanges, summary_savings, summary_coverage, summary_private, summarized_through,
		created_at, last_interaction, session_id, repo_id, agent_id, user_id, active)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, true)
		ON CONFLICT (session_id, repo_id, agent_id, user_id) WHERE `+st.d.Current+` DO NOTHING`,
		s.ID, s.Version, s.Provider, s.Model, s.MaxPromptTokens, s.Topic, s.Summary.Text, s.Summary.LastUpdated,
		s.Summary.ExchangesSummarized, s.Summary.TokenSavings, s.Summary.CoverageRatio, s.Summary.Private,
		s.SummarizedThrough, s.CreatedAt, max(s.LastInteraction, s.CreatedAt),
		s.Scope.SessionID, s.Scope.RepoID, s.Scope.AgentID, s.Scope.UserID)
	if st.d.IsUnique(err) {
		return false, memory.Wrap(memory.CodeConflict, err, "inner_voice session %q already exists", s.ID)
	}
	return n == 1, err
}

// endCurrentVoiceSession ends the current session of scope, if any
// (except keep's).
func (st *Store) endCurrentVoiceSession(ctx context.Context, tx Querier, scope memory.Scope, keep string) error {
	_, err := tx.Exec(ctx, "UPDATE inner_voice_sessions AS s SET active = false WHERE "+st.d.Current+" AND "+sameScope+" AND s.id <> ?",
		append(ScopeArgs(scope), keep)...)
	return err
}

const voiceExchangeColumns = `x.id, x.session_id, x.seq, x.ts, x.query, x.answer, x.sources, x.confidence, x.coverage_ratio, x.refused,
	x.notes, x.memories, x.synthesizer, x.model, x.degraded, x.prompt_tokens, x.completion_tokens, x.latency_ms, x.cost,
	x.prompt_hash, x.private, x.redacted`

func scanVoiceExchange(sc Scanner) (memory.InnerVoiceExchange, error) {
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

// getVoiceSession reads one session; lock, where writers do not take
// turns, takes its row for update (an exchange's sequence number and a
// summary's coverage are decided under it, so writers to one session
// take turns).
func (st *Store) getVoiceSession(ctx context.Context, tx Querier, id string, lock bool) (memory.InnerVoiceSession, error) {
	suffix := ""
	if lock {
		suffix = st.d.ForUpdate
	}
	s, err := scanVoiceSession(tx.QueryRow(ctx, "SELECT "+voiceSessionColumns+" FROM inner_voice_sessions s WHERE s.id = ?"+suffix, id))
	if errors.Is(err, ErrNoRows) {
		return s, NotFound("inner_voice session", id)
	}
	return s, err
}

// CreateVoiceSession implements memory.InnerVoiceStore.
func (st *Store) CreateVoiceSession(ctx context.Context, s memory.InnerVoiceSession) (memory.InnerVoiceSession, error) {
	if s.ID == "" {
		return s, memory.Errorf(memory.CodeInvalidParams, "an inner_voice session needs an id")
	}
	var out memory.InnerVoiceSession
	err := st.b.Write(ctx, "creating an inner_voice session", func(tx Querier) error {
		if err := st.endCurrentVoiceSession(ctx, tx, s.Scope, ""); err != nil {
			return err
		}
		ok, err := st.insertVoiceSession(ctx, tx, s)
		if err != nil {
			return err
		}
		if !ok {
			// Another new thread of the scope became current after this
			// one's end of the current session: start again.
			return RetryError{Err: errors.New("another inner_voice session of the scope became current")}
		}
		out, err = st.getVoiceSession(ctx, tx, s.ID, false)
		return err
	})
	return out, err
}

// OpenVoiceSession implements memory.InnerVoiceStore. The scope's current
// session is locked while the call decides; a call that finds none, or
// one too old, inserts its own unless another transaction did first (the
// unique index decides), and then continues that one.
func (st *Store) OpenVoiceSession(ctx context.Context, s memory.InnerVoiceSession, since int64) (memory.InnerVoiceSession, bool, error) {
	if s.ID == "" {
		return s, false, memory.Errorf(memory.CodeInvalidParams, "an inner_voice session needs an id")
	}
	var out memory.InnerVoiceSession
	created := false
	err := st.b.Write(ctx, "opening an inner_voice session", func(tx Querier) error {
		created = false
		cur, ok, err := st.currentVoiceSession(ctx, tx, s.Scope, true)
		if err != nil {
			return err
		}
		if ok && cur.LastInteraction >= since {
			out = cur
			return nil
		}
		if ok {
			if err := st.endCurrentVoiceSession(ctx, tx, s.Scope, ""); err != nil {
				return err
			}
		}
		inserted, err := st.insertVoiceSession(ctx, tx, s)
		if err != nil {
			return err
		}
		if inserted {
			created = true
			out, err = st.getVoiceSession(ctx, tx, s.ID, false)
			return err
		}
		// Another call started the scope's session first: continue it (a
		// read-committed statement sees what that call committed).
		cur, ok, err = st.currentVoiceSession(ctx, tx, s.Scope, true)
		if err != nil {
			return err
		}
		if ok && cur.LastInteraction >= since {
			out = cur
			return nil
		}
		return RetryError{Err: errors.New("the scope's current inner_voice session changed meanwhile")}
	})
	return out, created, err
}

// VoiceSession implements memory.InnerVoiceStore.
func (st *Store) VoiceSession(ctx context.Context, id string) (memory.InnerVoiceSession, error) {
	var out memory.InnerVoiceSession
	err := st.b.Read(ctx, "reading an inner_voice session", func(tx Querier) error {
		var err error
		out, err = st.getVoiceSession(ctx, tx, id, false)
		return err
	})
	return out, err
}

// ActiveVoiceSession implements memory.InnerVoiceStore.
func (st *Store) ActiveVoiceSession(ctx context.Context, scope memory.Scope, since int64) (memory.InnerVoiceSession, bool, error) {
	var out memory.InnerVoiceSession
	found := false
	err := st.b.Read(ctx, "finding the active inner_voice session", func(tx Querier) error {
		s, ok, err := st.currentVoiceSession(ctx, tx, scope, false)
		out, found = s, ok && s.LastInteraction >= since
		return err
	})
	return out, found, err
}

// VoiceSessions implements memory.InnerVoiceStore.
func (st *Store) VoiceSessions(ctx context.Context, filter memory.Scope, offset, limit int) ([]memory.InnerVoiceSession, error) {
	if limit <= 0 {
		limit = 100
	}
	out := []memory.InnerVoiceSession{}
	where, args := withinScope(filter)
	err := st.b.Read(ctx, "listing inner_voice sessions", func(tx Querier) error {
		out = out[:0]
		return EachRow(ctx, tx, "SELECT "+voiceSessionColumns+" FROM inner_voice_sessions s WHERE "+where+`
			ORDER BY s.last_interaction DESC, s.id DESC LIMIT ? OFFSET ?`,
			append(args, limit, max(0, offset)), func(sc Scanner) error {
				s, err := scanVoiceSession(sc)
				out = append(out, s)
				return err
			})
	})
	return out, err
}

// AddVoiceExchange implements memory.InnerVoiceStore.
func (st *Store) AddVoiceExchange(ctx context.Context, x memory.InnerVoiceExchange) (memory.InnerVoiceExchange, memory.InnerVoiceSession, error) {
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
	err = st.b.Write(ctx, "recording an inner_voice exchange", func(tx Querier) error {
		cur, err := st.getVoiceSession(ctx, tx, x.SessionID, true)
		if err != nil {
			return err
		}
		if !cur.Current {
			// The session continued becomes its scope's current one.
			if err := st.endCurrentVoiceSession(ctx, tx, cur.Scope, cur.ID); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(seq), 0) + 1 FROM inner_voice_exchanges WHERE session_id = ?",
			x.SessionID).Scan(&out.Seq); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO inner_voice_exchanges (id, session_id, seq, ts, query, answer, sources,
			confidence, coverage_ratio, refused, notes, memories, synthesizer, model, degraded, prompt_tokens, completion_tokens,
			latency_ms, cost, prompt_hash, private) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
			?, ?, ?, ?)`,
			x.ID, x.SessionID, out.Seq, x.Timestamp, x.Query, x.Answer, string(sources), x.Confidence, x.CoverageRatio,
			x.Refused, x.Notes, string(memories), x.Synthesizer, x.Model, x.Degraded, x.PromptTokens, x.CompletionTokens,
			x.LatencyMs, x.CostEstimate, x.PromptHash, x.Private)
		if st.d.IsUnique(err) {
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
		if err := insertVoiceRefs(ctx, tx, x.ID, slices.Compact(refs)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE inner_voice_sessions SET total_exchanges = total_exchanges + 1,
			total_prompt_tokens = total_prompt_tokens + ?, total_completion_tokens = total_completion_tokens + ?,
			total_cost = total_cost + ?, last_interaction = `+st.d.Greatest+`(last_interaction, ?), active = true WHERE id = ?`,
			x.PromptTokens, x.CompletionTokens, x.CostEstimate, x.Timestamp, x.SessionID); err != nil {
			if st.d.IsUnique(err) && st.d.Constraint(err) == currentIndex {
				// Another session of the scope became current meanwhile.
				return RetryError{Err: err}
			}
			return err
		}
		sess, err = st.getVoiceSession(ctx, tx, x.SessionID, false)
		return err
	})
	if err != nil {
		return x, sess, err
	}
	return out, sess, nil
}

// VoiceExchanges implements memory.InnerVoiceStore.
func (st *Store) VoiceExchanges(ctx context.Context, sessionID string, after, limit int) ([]memory.InnerVoiceExchange, error) {
	if limit <= 0 {
		limit = 100
	}
	out := []memory.InnerVoiceExchange{}
	err := st.b.Read(ctx, "listing inner_voice exchanges", func(tx Querier) error {
		out = out[:0]
		return EachRow(ctx, tx, "SELECT "+voiceExchangeColumns+` FROM inner_voice_exchanges x
			WHERE x.session_id = ? AND x.seq > ? ORDER BY x.seq LIMIT ?`, []any{sessionID, after, limit}, func(sc Scanner) error {
			x, err := scanVoiceExchange(sc)
			out = append(out, x)
			return err
		})
	})
	return out, err
}

// SetVoiceSummary implements memory.InnerVoiceStore.
func (st *Store) SetVoiceSummary(ctx context.Context, sessionID string, s memory.RollingSummary, through int, promptTokens, completionTokens int64, cost float64) (memory.InnerVoiceSession, error) {
	var out memory.InnerVoiceSession
	err := st.b.Write(ctx, "writing an inner_voice rolling summary", func(tx Querier) error {
		cur, err := st.getVoiceSession(ctx, tx, sessionID, true)
		if err != nil {
			return err
		}
		if through <= cur.SummarizedThrough {
			return memory.Errorf(memory.CodeConflict, "the session's summary already covers exchange %d", cur.SummarizedThrough)
		}
		if _, err := tx.Exec(ctx, `UPDATE inner_voice_sessions SET summary = ?, summary_updated = ?, summary_exchanges = ?,
			summary_savings = ?, summary_coverage = ?, summary_private = ?, summarized_through = ?,
			total_prompt_tokens = total_prompt_tokens + ?, total_completion_tokens = total_completion_tokens + ?,
			total_cost = total_cost + ? WHERE id = ?`,
			s.Text, s.LastUpdated, s.ExchangesSummarized, s.TokenSavings, s.CoverageRatio, s.Private, through,
			promptTokens, completionTokens, cost, sessionID); err != nil {
			return err
		}
		out, err = st.getVoiceSession(ctx, tx, sessionID, false)
		return err
	})
	return out, err
}

// DeleteVoiceSession implements memory.InnerVoiceStore; the store scrubs
// the deleted text as it can (see Backend.Erase).
func (st *Store) DeleteVoiceSession(ctx context.Context, id string) error {
	return st.b.Erase(ctx, "deleting an inner_voice session", func(tx Querier) error {
		n, err := tx.Exec(ctx, "DELETE FROM inner_voice_sessions WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n == 0 {
			return NotFound("inner_voice session", id)
		}
		return nil
	})
}

// VoiceTotals implements memory.InnerVoiceStore.
func (st *Store) VoiceTotals(ctx context.Context, filter memory.Scope) (memory.InnerVoiceTotals, error) {
	var t memory.InnerVoiceTotals
	where, args := withinScope(filter)
	err := st.b.Read(ctx, "adding up inner_voice sessions", func(tx Querier) error {
		if err := tx.QueryRow(ctx, `SELECT count(*), CAST(coalesce(sum(total_prompt_tokens), 0) AS bigint),
			CAST(coalesce(sum(total_completion_tokens), 0) AS bigint), coalesce(sum(total_cost), 0) FROM inner_voice_sessions s WHERE `+where, args...).Scan(
			&t.Sessions, &t.PromptTokens, &t.CompletionTokens, &t.Cost); err != nil {
			return err
		}
		exchanges := "inner_voice_exchanges"
		if !filter.IsZero() {
			exchanges = "inner_voice_exchanges WHERE session_id IN (SELECT s.id FROM inner_voice_sessions s WHERE " + where + ")"
		}
		return tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE refused = true), count(*) FILTER (WHERE degraded <> ''),
			coalesce(avg(coverage_ratio), 0), CAST(coalesce(avg(latency_ms), 0) AS double precision) FROM `+exchanges, args...).Scan(
			&t.Exchanges, &t.Refused, &t.Degraded, &t.MeanCoverage, &t.MeanLatencyMs)
	})
	return t, err
}

// insertVoiceRefs records the records an exchange cites or refers to, in
// one statement.
func insertVoiceRefs(ctx context.Context, tx Querier, exchange string, refs []string) error {
	if len(refs) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(refs))
	for _, r := range refs {
		args = append(args, r, exchange)
	}
	_, err := tx.Exec(ctx, "INSERT INTO inner_voice_refs (ref_id, exchange_id) VALUES "+
		strings.TrimSuffix(strings.Repeat("(?, ?), ", len(refs)), ", ")+" ON CONFLICT DO NOTHING", args...)
	return err
}
