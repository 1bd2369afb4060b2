package cairn

import (
	"context"
)

// innerVoiceTools are the inner voice's answers, the moderation of the
// knowledge-graph candidates it stages, and the removal lifecycle of
// thoughts (seed 001), under the specification's names.
var innerVoiceTools = []Tool{
	newTool(Tool{
		Name: "inner_voice", Title: "Answer from your thoughts", Method: "POST", Path: "/v1/inner-voice/ask",
		Description: `Ask your own memory a question and get an answer with the memories it rests on, each checked by cairn. It retrieves the top_k records (default 5, 1..50) most similar in meaning to content, keeps those at or above sim_thresh (default 0.5), leaving out a saved summary when thoughts it summarises are among them (diagnostics.summaries_left_out), and answers: without a language model, with their most relevant sentences (about 600 characters, offline and deterministic); with one configured on the server, the model writes the answer from the knowledge graph's entities and facts (context kg, the default then; kg+thoughts or thoughts to include thoughts) within a prompt budget. Every answer goes through the grounding verifier: grounding holds the citations that survived (source_id, source_type, span, relevance), coverage_ratio (supported sentences / sentences), confidence, refused and notes; an answer whose coverage is under SURR_INNER_VOICE_MIN_COVERAGE (0.6) or that rests on fewer than 2 sources is refused (synthesized_answer empty, notes say what was missing). A model that fails gives way to the extractive answer, and provenance says why (degraded_reason) with the model's tokens, cost and prompt hash. While the embedder is unavailable the records are found by words instead, among the SURR_DB_LIMIT (500) most recent of each kind, and diagnostics.degraded says embedder_unavailable. Each exchange is recorded in a session: mode continue (default: the active session, or session_id), new_thread (with topic), or none (nothing kept); scopeIds (sessionId, repoId, agentId, userId) make the session someone's, so agents sharing a server keep their threads apart: continue goes on with the active session of exactly that scope (it does not restrict the memories an answer draws on); past ten exchanges the older ones are folded into a grounded rolling summary (inner_voice_sessions lists sessions). sentences lists each sentence with the record and character span it comes from. With save (default true) the answer is stored as a thought (is_summary, summary_of the sources, pipeline inner_voice; private if a source is): saved_thought_id. With stage_kg it also proposes knowledge-graph entities and edges found in the thoughts among the sources (confidence_min 0.6, at most max_nodes 30 and max_edges 60), staged for review with knowledgegraph_moderate; auto_mark_removal then marks for removal the thoughts a candidate was staged from (or whose candidate is pending or in the graph already), none when the answer is refused; a note says how many and why the others stay. save false, stage_kg false and mode none writes nothing. Disabled unless the server runs with SURR_ENABLE_INNER_VOICE=1 (feature_disabled).`,
	}, func(e *Engine, ctx context.Context, in AskRequest) (AskResult, error) { return e.Ask(ctx, in) }),
	newTool(Tool{
		Name: "kg_candidates", Title: "List knowledge-graph candidates", Method: "GET", Path: "/v1/kg/candidates", ReadOnly: true, Idempotent: true,
		Description: `List knowledge-graph candidates that inner_voice staged (stage_kg): proposed entities (name, entity_type) and edges (source_name, rel_type, target_name), each with its confidence, the thought it was extracted from (source_thought_id), the sentence it came from (data) and its status. Pending ones wait for knowledgegraph_moderate. Filter by kind (entity or edge), status (pending by default, approved, rejected, all), min_confidence and source_thought_id; most confident first; limit 1..1000 (default 100), offset to page. Candidates extracted from private thoughts are listed only with include_private; otherwise private_excluded counts them.`,
	}, func(e *Engine, ctx context.Context, in CandidatesRequest) (CandidateList, error) {
		return e.Candidates(ctx, in)
	}),
	newTool(Tool{
		Name: "knowledgegraph_moderate", Title: "Moderate knowledge-graph candidates", Method: "POST", Path: "/v1/kg/moderate",
		Description: `Review and decide knowledge-graph candidates staged by inner_voice. action review (default) lists them (target entity, relationship or mixed; status, min_conf, source_thought_id, limit, offset; include_private to list those extracted from private thoughts). action decide applies items [{id, decision: approve or reject, feedback?, canonical_id?, block?, mark_source_removal?}], one or many: approve promotes the candidate into the graph, creating the entity or edge or merging into an existing one of the same name (or the entity canonical_id names), recording its source thought in the record's data; an edge creates its missing entities. reject keeps it out; with block its name (or edge) is never staged again. mark_source_removal marks the source thought for removal after approval. Every item is checked before any is written (unknown id: not_found, already decided: conflict; an approval that would bring a blocked name or edge into the graph: conflict). review_and_decide decides then lists; dry_run says what would happen (would_refuse, with the reason, for an approval the blocklist refuses). action blocklist lists blocked keys; unblock removes items [{kind, key}].`,
	}, func(e *Engine, ctx context.Context, in ModerateRequest) (ModerateResult, error) {
		return e.Moderate(ctx, in)
	}),
	newTool(Tool{
		Name: "maintenance_ops", Title: "Archive and remove thoughts marked for removal", Method: "POST", Path: "/v1/maintenance", Destructive: true,
		Description: `The removal lifecycle of thoughts marked for removal (by thought_mark, inner_voice's auto_mark_removal or mark_removal here). subcommand list_removal_candidates lists them, oldest mark first, with whether each can be finalized and why not; export_removals writes those not yet exported to a new archive file in SURR_ARCHIVE_DIR (format parquet, the default, or jsonl; with their provenance and metadata, not vectors) and records it; finalize_removal deletes, erasing their text, only thoughts that were exported to an archive that is still intact and marked at least SURR_RETENTION_DAYS (default 30) days ago, and lists the others with the reason (with thought_ids: those, all or none); mark_removal marks thought_ids. dry_run says what would happen and writes nothing; limit 1..10000 (default 100). Archive paths (export.archive.path, candidates' archive) are relative to the server's archive directory, which is not revealed.`,
	}, func(e *Engine, ctx context.Context, in MaintenanceRequest) (MaintenanceResult, error) {
		res, err := e.Maintenance(ctx, in)
		if e.life != nil {
			res = res.Relative(e.life.Config)
		}
		return res, err
	}),
}
