// End-to-end check of cairn's MCP server with the official TypeScript SDK
// client. Usage:
//   node client.mjs stdio CAIRN_BINARY DATABASE   (inner voice enabled)
//   node client.mjs http URL                      (inner voice disabled)
// It initialises, lists the tools, calls every tool with valid arguments
// and some with invalid ones, checks the results, prints a JSON summary and
// exits 0, or prints what failed and exits 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const [mode, target, db] = process.argv.slice(2);
const expectedTools = ["retrieve", "log", "capsule_open", "summary_set", "capsule_close", "capsule_get",
  "observation_get", "summary_get", "pin", "pin_get", "unpin", "forget", "summary_forget",
  "think", "thought_get", "thoughts_list", "thought_mark", "thought_forget", "kg_entity_create", "kg_entity_update", "kg_entity_get", "kg_entity_delete",
  "kg_entities", "kg_observe", "kg_observation_delete", "kg_edge_create", "kg_edge_delete", "kg_edges", "inner_voice_retrieve",
  "inner_voice", "kg_candidates", "knowledgegraph_moderate", "maintenance_ops",
  "inner_voice_sessions", "inner_voice_session", "inner_voice_session_delete",
  "code_index", "code_index_status", "code_index_jobs", "code_index_cancel", "code_hydrate", "code_propose", "code_promote", "code_verify", "code_entities", "code_artifact_forget",
  "introspect_hydration", "introspect_entity", "introspect_gates",
  "context_session_start", "context_pre_compact", "record_history",
  "status", "doctor", "reembed", "config"];
const innerVoice = mode === "stdio";
// Archives of maintenance_ops go to a temporary folder (stdio; the HTTP
// server is started with one).
const archiveDir = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-e2e-archive-"));

function check(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
}

async function main() {
  let transport;
  if (mode === "stdio") {
    transport = new StdioClientTransport({ command: target, args: ["--db", db, "mcp"], stderr: "inherit",
      env: { ...getDefaultEnvironment(), SURR_ENABLE_INNER_VOICE: "1", SURR_ARCHIVE_DIR: archiveDir } });
  } else if (mode === "http") {
    transport = new StreamableHTTPClientTransport(new URL(target));
  } else {
    throw new Error("usage: client.mjs stdio BINARY DB | http URL");
  }
  const client = new Client({ name: "cairn-e2e", version: "1.0.0" });
  await client.connect(transport);
  const server = client.getServerVersion();
  check(server && server.name === "cairn", "server name is cairn: " + JSON.stringify(server));
  check(typeof client.getInstructions() === "string" && client.getInstructions().includes("retrieve"), "instructions mention retrieve");

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify([...expectedTools].sort()), "tool names: " + names.join(","));
  for (const t of tools) {
    check(/^[A-Za-z0-9_-]+$/.test(t.name), "tool name without dots: " + t.name);
    check(t.inputSchema && t.inputSchema.type === "object", t.name + " has an input schema");
    check(t.outputSchema && typeof t.outputSchema === "object", t.name + " has an output schema");
    check(t.description && t.description.length > 40, t.name + " has a description");
  }

  const calls = [];
  // ok calls a tool that must succeed; its structured result was already
  // validated against the output schema by the SDK.
  async function ok(name, args) {
    const res = await client.callTool({ name, arguments: args });
    calls.push(name);
    check(!res.isError, name + " succeeded: " + JSON.stringify(res.content));
    check(res.structuredContent && typeof res.structuredContent === "object", name + " returned structuredContent");
    check(JSON.stringify(JSON.parse(res.content[0].text)) === JSON.stringify(res.structuredContent), name + " text equals structuredContent");
    return res.structuredContent;
  }
  async function fails(name, args, code) {
    const res = await client.callTool({ name, arguments: args });
    calls.push(name + "!");
    check(res.isError === true, name + " failed as it should: " + JSON.stringify(res));
    const body = JSON.parse(res.content[0].text);
    check(body.error && body.error.code === code, name + " error code " + code + ": " + res.content[0].text);
    check(res._meta && res._meta["cairn/code"] === code, name + " _meta code");
  }

  const session = "e2e-" + mode;
  const cap = await ok("capsule_open", { scopeIds: { sessionId: session, repoId: "/src/e2e" }, intent: "end-to-end check" });
  check(cap.status === "open" && cap.id.startsWith("cap_"), "capsule opened");
  const o1 = await ok("log", { kind: "error", content: "TestCheckout failed: session expired right after login", scopeIds: { sessionId: session }, provenance: { tool: "go test" } });
  check(o1.scopeIds.repoId === "/src/e2e", "observation took the capsule's repo");
  const o2 = await ok("log", { kind: "file_diff", content: "auth/session.go: tolerate 5s of clock skew", scopeIds: { sessionId: session } });
  const sum = await ok("summary_set", { capsuleId: cap.id, content: "Checkout failed on clock skew between services.", confidence: 0.7, evidenceRefs: [o1.id] });
  check(sum.capsuleId === cap.id, "summary of the capsule");
  const pin = await ok("pin", { targetId: o1.id, reason: "root symptom", ttlSeconds: 3600 });
  check(pin.targetType === "observation" && typeof pin.expiresAt === "number", "pin with expiry");
  const res = await ok("retrieve", { query: "why did checkout fail? clock skew", scopeIds: { sessionId: session }, tokenBudget: 500 });
  check(res.pins.length === 1 && res.pins[0].target.id === o1.id, "the pin is in the pins tier");
  check(res.currentSummary && res.currentSummary.id === sum.id, "the running summary is the current summary");
  check(res.candidates.some((c) => c.entity.id === o2.id), "the diff is a candidate");
  check(!res.candidates.some((c) => c.entity.id === o1.id), "the pinned observation is not also a candidate");
  check(res.provenance.providerUsed === "hybrid" && res.provenance.totalCandidates >= 1, "provenance");
  check(res.candidates.every((c) => c.score >= 0 && c.score <= 1), "scores in [0, 1]");
  // Context for a new session, the running summary before a compaction,
  // the recall prompt with completion, and records as resources.
  const pre = await ok("context_pre_compact", { scopeIds: { sessionId: session } });
  check(pre.id === sum.id && pre.capsuleId === cap.id && pre.confidence === 0.5 && pre.content.startsWith("end-to-end check: 0 prompts, 2 tool calls (0 commands, 1 errors), 0 files changed."), "context_pre_compact: " + JSON.stringify(pre));
  await ok("summary_set", { capsuleId: cap.id, content: "Checkout failed on clock skew between services.", confidence: 0.7, evidenceRefs: [o1.id] });
  const ctx = await ok("context_session_start", { scopeIds: { repoId: "/src/e2e", sessionId: session }, branch: "main", tokenBudget: 800 });
  check(ctx.markdown.includes("# cairn: memory of /src/e2e") && ctx.markdown.includes(o1.id) && ctx.tokens <= 800, "context_session_start: " + ctx.markdown);
  check(ctx.items.some((i) => i.id === cap.id) && ctx.items.some((i) => i.id === o1.id && i.section === "Pinned"), "context items");
  await fails("context_session_start", { scopeIds: { sessionId: session } }, "invalid_params");
  await fails("context_pre_compact", { scopeIds: { sessionId: "no-such-session" } }, "not_found");
  const { prompts } = await client.listPrompts();
  check(prompts.length === 1 && prompts[0].name === "recall" && prompts[0].arguments.some((a) => a.name === "repo" && a.required), "prompts: " + JSON.stringify(prompts));
  const done = await client.complete({ ref: { type: "ref/prompt", name: "recall" }, argument: { name: "repo", value: "/src/e" } });
  check(done.completion.values.includes("/src/e2e"), "completion of repo: " + JSON.stringify(done));
  const recall = await client.getPrompt({ name: "recall", arguments: { repo: "/src/e2e", branch: "main" } });
  check(recall.messages.length === 1 && recall.messages[0].content.text.includes(o1.id), "recall prompt: " + JSON.stringify(recall));
  const { resourceTemplates } = await client.listResourceTemplates();
  const templates = resourceTemplates.map((t) => t.uriTemplate).sort();
  for (const want of ["cairn://observation/{id}", "cairn://capsule/{id}", "cairn://summary/{id}", "cairn://pin/{id}", "cairn://thought/{id}", "cairn://entity/{id}", "cairn://context{?repo,branch}"]) {
    check(templates.includes(want), "resource template " + want + ": " + templates.join(","));
  }
  // What a person can attach: the pins in force, then the recent
  // sessions with their summaries, each readable by its URI.
  const { resources } = await client.listResources();
  const uris = resources.map((r) => r.uri);
  check(uris[0] === "cairn://pin/" + pin.id && uris.includes("cairn://capsule/" + cap.id) && uris.includes("cairn://summary/" + sum.id) &&
    resources.every((r) => r.name && r.title && r.mimeType === "application/json"), "resources/list: " + JSON.stringify(resources));
  const pinRes = await client.readResource({ uri: "cairn://pin/" + pin.id });
  const pinBody = JSON.parse(pinRes.contents[0].text);
  check(pinBody.pin.id === pin.id && pinBody.active === true && pinBody.target.id === o1.id, "resources/read pin: " + pinRes.contents[0].text);
  const pg = await ok("pin_get", { pinId: pin.id });
  check(pg.pin.reason === "root symptom" && pg.active === true && pg.target.content === o1.content, "pin_get: " + JSON.stringify(pg));
  await fails("pin_get", { pinId: "pin_missing" }, "not_found");
  const read = await client.readResource({ uri: "cairn://observation/" + o2.id });
  check(read.contents.length === 1 && JSON.parse(read.contents[0].text).content === o2.content, "resources/read observation");
  const readCtx = await client.readResource({ uri: "cairn://context?repo=" + encodeURIComponent("/src/e2e") });
  check(readCtx.contents[0].mimeType === "text/markdown" && readCtx.contents[0].text.includes(cap.id), "resources/read context");
  let missing = false;
  try {
    await client.readResource({ uri: "cairn://observation/obs_missing" });
  } catch (e) {
    missing = /not found/i.test(String(e));
  }
  check(missing, "a missing record is a resource-not-found error");
  const c2 = await ok("capsule_get", { capsuleId: cap.id });
  check(c2.observationIds.length === 2 && c2.summaryId === sum.id, "capsule membership");
  check((await ok("observation_get", { observationId: o2.id })).content === o2.content, "observation_get");
  check((await ok("summary_get", { summaryId: sum.id })).confidence === 0.7, "summary_get");
  check((await ok("unpin", { pinId: pin.id })).unpinned === pin.id, "unpin");
  const forgotten = await ok("forget", { observationId: o1.id });
  check(forgotten.redacted === true && forgotten.content === "[redacted]", "forget");
  const closed = await ok("capsule_close", { capsuleId: cap.id, summary: { content: "Tolerate 5s of clock skew.", confidence: 0.9 } });
  check(closed.capsule.status === "closed" && closed.summary.id === sum.id, "close keeps the summary id");
  const sumGone = await ok("summary_forget", { summaryId: sum.id });
  check(sumGone.id === sum.id && sumGone.content === "[redacted]", "summary_forget: " + JSON.stringify(sumGone));
  const status = await ok("status", {});
  check(status.database.observations >= 2 && status.tools.length === expectedTools.length && status.embedder.space.dim === 100, "status");
  const doctor = await ok("doctor", {});
  check(doctor.ok === true, "doctor finds nothing wrong: " + JSON.stringify(doctor.findings));

  // Thoughts, the knowledge graph and the inner voice.
  const th = await ok("think", { content: "Clock skew between services breaks session checks; tolerate a few seconds.", origin: "human", tags: ["auth"] });
  check(th.id.startsWith("th_") && th.origin === "human" && th.tags[0] === "auth", "think");
  check((await ok("thought_get", { thoughtId: th.id })).content === th.content, "thought_get");
  check((await ok("thoughts_list", { limit: 10 })).thoughts.some((t) => t.id === th.id), "thoughts_list");
  const svc = await ok("kg_entity_create", { name: "auth-service", type: "service", data: { team: "identity" } });
  check(svc.id.startsWith("ent_") && svc.data.team === "identity", "kg_entity_create");
  const clock = await ok("kg_entity_create", { name: "ntp", type: "service" });
  check((await ok("kg_entity_update", { entityId: clock.id, type: "daemon" })).type === "daemon", "kg_entity_update");
  const fact = await ok("kg_observe", { entityId: svc.id, content: "session tokens expire when clocks drift by more than five seconds" });
  const edge = await ok("kg_edge_create", { source: svc.id, target: clock.id, relation: "depends_on" });
  const view = await ok("kg_entity_get", { entityId: svc.id });
  check(view.observations.length === 1 && view.edges.length === 1 && view.edges[0].id === edge.id, "kg_entity_get");
  check((await ok("kg_entities", { name: "AUTH-SERVICE" })).entities.map((e) => e.id).join() === svc.id, "kg_entities by name");
  check((await ok("kg_edges", { entityId: clock.id })).edges.length === 1, "kg_edges");
  if (innerVoice) {
    const iv = await ok("inner_voice_retrieve", { query: "why do sessions expire with clock drift?", top_k: 5 });
    check(iv.snippets.length >= 2 && iv.diagnostics.provider === "glove" && iv.diagnostics.dim === 100, "inner voice: " + JSON.stringify(iv.diagnostics));
    check(iv.snippets.some((s) => s.id === th.id && s.trust_tier === "green") && iv.snippets.some((s) => s.id === fact.id && s.table === "kg_observations"), "inner voice sources");
    await fails("inner_voice_retrieve", { query: "  " }, "invalid_params");
  } else {
    await fails("inner_voice_retrieve", { query: "clock drift" }, "feature_disabled");
  }
  check((await ok("thought_mark", { thoughtId: th.id, status: "removal" })).status === "removal", "thought_mark removal");
  if (innerVoice) {
    const after = await ok("inner_voice_retrieve", { query: "why do sessions expire with clock drift?", top_k: 5 });
    check(!after.snippets.some((s) => s.id === th.id), "a thought marked for removal is not retrieved");
  }
  check((await ok("thought_mark", { thoughtId: th.id, status: "active" })).status === "active", "thought_mark active");
  // The inner voice's answers, the moderation of the candidates it
  // stages, and the removal lifecycle.
  if (innerVoice) {
    await ok("think", { content: "The billing-service uses Kafka; clock drift breaks session token expiry.", origin: "human" });
    const ans = await ok("inner_voice", { content: "why does clock drift break session token expiry?", top_k: 3, stage_kg: true });
    check(ans.synthesized_answer.length > 0 && ans.sources.length >= 1 && ans.saved_thought_id.startsWith("th_") &&
      ans.staged.pending_entities >= 2 && ans.staged.pending_relationships >= 1 && ans.synthesizer === "extractive", "inner_voice: " + JSON.stringify(ans));
    check(ans.sentences.length > 0 && ans.sentences.every((s) => s.citations.length === 1 && ans.sources.some((src) => src.thought_id === s.citations[0].source_id)), "inner_voice cites its sources");
    const saved = await ok("thought_get", { thoughtId: ans.saved_thought_id });
    check(saved.is_summary && saved.pipeline === "inner_voice" && saved.summary_of.length === ans.sources.length, "the saved summary: " + JSON.stringify(saved));
    await fails("inner_voice", { content: "  " }, "invalid_params");
    await fails("inner_voice", { content: "x", sim_thresh: 2 }, "invalid_params");
    // The grounding contract, checked by cairn, and the session the
    // exchange was recorded in.
    const g = ans.grounding;
    check(g && g.coverage_ratio === 1 && g.refused === false && g.confidence > 0 && g.sources.length >= 2 &&
      g.sources.every((c) => c.source_type === "thought" && c.span.length > 0 && c.relevance > 0), "inner_voice grounding: " + JSON.stringify(g));
    check(ans.session && ans.session.session_id.startsWith("ivs_") && ans.session.seq === 1 && ans.provenance.synthesizer === "extractive", "inner_voice session: " + JSON.stringify(ans.session));
    const sessions = await ok("inner_voice_sessions", {});
    check(sessions.sessions.length === 1 && sessions.active_session_id === ans.session.session_id && sessions.totals.exchanges === 1, "inner_voice_sessions: " + JSON.stringify(sessions));
    const sv = await ok("inner_voice_session", { session_id: ans.session.session_id });
    check(sv.exchanges.length === 1 && sv.exchanges[0].coverage_ratio === 1 && sv.exchanges[0].memories_referenced.length >= 2, "inner_voice_session: " + JSON.stringify(sv));
    await fails("inner_voice", { content: "x", mode: "later" }, "invalid_params");
    // A scoped call has its own thread: the unscoped one is not continued.
    const scoped = await ok("inner_voice", { content: "why does clock drift break session token expiry?", top_k: 3, save: false, mode: "continue", scopeIds: { agentId: "e2e-client" } });
    check(scoped.session && scoped.session.created && scoped.session.session_id !== ans.session.session_id && scoped.session.scopeIds.agentId === "e2e-client",
      "scoped inner_voice: " + JSON.stringify(scoped.session));
    const mine = await ok("inner_voice_sessions", { scopeIds: { agentId: "e2e-client" } });
    check(mine.sessions.length === 1 && mine.active_session_id === scoped.session.session_id && mine.sessions[0].scopeIds.agentId === "e2e-client" &&
      mine.totals.exchanges === 1, "inner_voice_sessions by scope: " + JSON.stringify(mine));
    await fails("inner_voice", { content: "x", scopeIds: { team: "x" } }, "invalid_params");
    const del = await ok("inner_voice_session_delete", { session_id: ans.session.session_id });
    check(del.deleted === ans.session.session_id && del.exchanges === 1, "inner_voice_session_delete: " + JSON.stringify(del));
    await fails("inner_voice_session", { session_id: ans.session.session_id }, "not_found");
    const cands = await ok("kg_candidates", { kind: "entity" });
    const kafka = cands.candidates.find((c) => c.name === "Kafka");
    check(kafka && kafka.status === "pending" && kafka.source_thought_id, "kg_candidates: " + JSON.stringify(cands));
    const mod = await ok("knowledgegraph_moderate", { action: "decide", items: [{ id: kafka.id, decision: "approve", mark_source_removal: true }] });
    check(mod.results[0].status === "approved" && mod.results[0].promoted_id.startsWith("ent_") && mod.results[0].marked_for_removal === 1, "knowledgegraph_moderate: " + JSON.stringify(mod));
    await fails("knowledgegraph_moderate", { action: "decide", items: [{ id: kafka.id, decision: "reject" }] }, "conflict");
    const list = await ok("maintenance_ops", { subcommand: "list_removal_candidates" });
    check(list.candidates.length === 1 && list.candidates[0].thought_id === kafka.source_thought_id && !list.candidates[0].finalizable, "list_removal_candidates: " + JSON.stringify(list));
    const exp = await ok("maintenance_ops", { subcommand: "export_removals" });
    // Paths come relative to the archive directory, which the server does not reveal.
    check(exp.export.exported === 1 && exp.export.archive.format === "parquet" && exp.export.archive.path.startsWith("thoughts-removal-") &&
      fs.existsSync(path.join(archiveDir, exp.export.archive.path)) && !JSON.stringify(exp).includes(archiveDir) && exp.archive_dir === undefined,
      "export_removals: " + JSON.stringify(exp));
    const fin = await ok("maintenance_ops", { subcommand: "finalize_removal" });
    check(fin.finalize.finalized.length === 0 && fin.finalize.refused[0].reason.includes("retention"), "finalize_removal: " + JSON.stringify(fin));
  } else {
    await fails("inner_voice", { content: "clock drift" }, "feature_disabled");
    // Reading sessions is off with inner_voice; deleting one is not.
    await fails("inner_voice_sessions", {}, "feature_disabled");
    await fails("inner_voice_session", { session_id: "ivs_missing" }, "feature_disabled");
    await fails("inner_voice_session_delete", { session_id: "ivs_missing" }, "not_found");
    check((await ok("kg_candidates", {})).candidates.length === 0, "kg_candidates");
    check((await ok("knowledgegraph_moderate", {})).review.candidates.length === 0, "knowledgegraph_moderate review");
    check((await ok("maintenance_ops", { subcommand: "list_removal_candidates" })).candidates.length === 0, "maintenance_ops list");
    const dry = await ok("maintenance_ops", { subcommand: "export_removals", dry_run: true });
    check(dry.export.thought_ids.length === 0 && dry.dry_run === true, "maintenance_ops dry run: " + JSON.stringify(dry));
  }
  await fails("knowledgegraph_moderate", { action: "decide", items: [{ id: "kgc_missing", decision: "reject" }] }, "not_found");
  await fails("maintenance_ops", { subcommand: "explode" }, "invalid_params");
  const thGone = await ok("thought_forget", { thoughtId: th.id });
  check(thGone.id === th.id && thGone.content === "[redacted]", "thought_forget: " + JSON.stringify(thGone));
  await fails("thought_mark", { thoughtId: th.id, status: "archived" }, "invalid_params");
  // Code memory: index a small repository, hydrate across episodes,
  // propose, gate, verify and introspect.
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-e2e-repo-"));
  const repoId = "e2e-" + mode;
  fs.writeFileSync(path.join(repo, "auth.go"), "package auth\n\n// ValidateToken checks a token.\nfunc ValidateToken(t string) bool {\n\treturn t != \"\"\n}\n\n// Refresh renews a token.\nfunc Refresh(t string) string {\n\treturn t + \"!\"\n}\n");
  try {
    // Over HTTP the index runs as a job: wait joins it and answers with
    // its report, which the job's status keeps. Over stdio it runs in the
    // call and there are no jobs.
    const idx = await ok("code_index", { root: repo, repo_id: repoId, wait: true });
    check(idx.state === "done" && idx.promoted === 2 && idx.entities === 2, "code_index: " + JSON.stringify(idx));
    if (mode === "http") {
      const st = await ok("code_index_status", { job_id: idx.job.job_id });
      check(st.state === "done" && st.result.promoted === 2 && st.progress.files_total === 1, "code_index_status: " + JSON.stringify(st));
      const jobs = await ok("code_index_jobs", { repo_id: repoId });
      check(jobs.jobs.length === 1 && jobs.jobs[0].job_id === idx.job.job_id, "code_index_jobs: " + JSON.stringify(jobs));
      const again = await ok("code_index", { root: repo, repo_id: repoId });
      check((again.state === "running" || again.state === "queued") && again.repository.entities === 2 && again.repository.indexed, "code_index as a job: " + JSON.stringify(again));
      const cancelled = await ok("code_index_cancel", { job_id: again.job.job_id });
      check(cancelled.state === "cancelled" || cancelled.state === "done", "code_index_cancel: " + JSON.stringify(cancelled));
      await fails("code_index_status", { job_id: "job_missing" }, "not_found");
    } else {
      check(idx.job === undefined, "code_index in the call: " + JSON.stringify(idx));
      await fails("code_index_status", { job_id: "job_missing" }, "feature_disabled");
      await fails("code_index_jobs", {}, "feature_disabled");
      await fails("code_index_cancel", { job_id: "job_missing" }, "feature_disabled");
    }
    const h1 = await ok("code_hydrate", { query: "fix ValidateToken", episode_id: "ep-1-" + mode, session_id: "sess-" + mode, repo_id: repoId });
    check(h1.hydration_blocks[0].entity_key === "auth.go::ValidateToken" && h1.tracking.ok, "code_hydrate: " + JSON.stringify(h1.hydration_blocks));
    const h2 = await ok("code_hydrate", { query: "unrelated words", episode_id: "ep-2-" + mode, session_id: "sess-" + mode, repo_id: repoId });
    check(h2.hydration_blocks.some((b) => b.entity_key === "auth.go::ValidateToken" && b.reason === "previously_hydrated"), "code_hydrate keeps episode 1");
    const ih = await ok("introspect_hydration", { episode_id: "ep-2-" + mode });
    check(ih.hydration_blocks.length === h2.hydration_blocks.length && ih.tracking.ok, "introspect_hydration");
    const newText = "// Refresh renews a token twice.\nfunc Refresh(t string) string {\n\treturn t + \"!!\"\n}";
    const prop = await ok("code_propose", { entity_key: "auth.go::Refresh", content: newText, episode_id: "ep-2-" + mode, repo_id: repoId });
    check(prop.entity.state === "PROPOSED" && prop.changed, "code_propose");
    const pr = await ok("code_promote", { episode_id: "ep-2-" + mode, entity_keys: ["auth.go::Refresh"], approval: "approved", repo_id: repoId });
    check(pr.promoted === 0 && pr.evaluated[0].gate_c_passed === false, "code_promote refuses what the disk lacks: " + JSON.stringify(pr));
    const ig = await ok("introspect_gates", { episode_id: "ep-2-" + mode });
    check(ig.entities_evaluated[0].gate_c.is_stale === true, "introspect_gates");
    const ie = await ok("introspect_entity", { entity_key: "auth.go::Refresh", repo_id: repoId });
    check(ie.current_state === "PROPOSED" && ie.state_history.length === 4 && ie.state_history[0].from_state === null, "introspect_entity: " + JSON.stringify(ie.state_history));
    const ver = await ok("code_verify", { repo_id: repoId });
    check(ver.checked === 1 && ver.stale.length === 0, "code_verify: " + JSON.stringify(ver));
    check((await ok("code_entities", { repo_id: repoId, state: "PROPOSED" })).entities.length === 1, "code_entities");
    const art = await ok("code_artifact_forget", { hash: prop.entity.artifact_hash });
    check(art.hash === prop.entity.artifact_hash && art.content === "[redacted]" && art.redacted === true, "code_artifact_forget: " + JSON.stringify(art));
    await fails("introspect_hydration", { episode_id: "nope" }, "not_found");
    await fails("code_hydrate", { query: "x", episode_id: "ep-new-" + mode, repo_id: repoId }, "invalid_params");
  } finally {
    fs.rmSync(repo, { recursive: true, force: true });
  }
  check((await ok("kg_edge_delete", { edgeId: edge.id })).deleted === edge.id, "kg_edge_delete");
  check((await ok("kg_observation_delete", { observationId: fact.id })).deleted === fact.id, "kg_observation_delete");
  check((await ok("kg_entity_delete", { entityId: clock.id })).deleted === clock.id, "kg_entity_delete");
  // The ledger: a deleted entity's and a forgotten thought's histories
  // stay readable, end with what was done, and hold no text.
  const entHist = await ok("record_history", { id: clock.id });
  check(entHist.entries[0].op === "create" && entHist.entries.at(-1).op === "delete" && entHist.entries.every((e) => e.at > 0 && e.kind === "kg_entity"),
    "record_history of a deleted entity: " + JSON.stringify(entHist));
  const thHist = await ok("record_history", { id: th.id, limit: 1 });
  check(thHist.entries.length === 1 && thHist.entries[0].op === "create" && thHist.next_after === thHist.entries[0].seq, "record_history page: " + JSON.stringify(thHist));
  const thRest = await ok("record_history", { id: th.id, after: thHist.next_after });
  check(thRest.entries.at(-1).op === "forget" && !JSON.stringify(thRest).includes(th.content), "record_history of a forgotten thought: " + JSON.stringify(thRest));
  await fails("record_history", { id: "ent_missing" }, "not_found");
  await fails("record_history", { id: clock.id, limit: 0 }, "invalid_params");
  const re = await ok("reembed", {});
  check(re.pending === 0 && re.space.provider === "glove", "reembed: " + JSON.stringify(re));
  const cfg = await ok("config", {});
  check(cfg.innerVoice.enabled === innerVoice && cfg.embedder.provider === "glove" && cfg.provider === "hybrid", "config: " + JSON.stringify(cfg));
  await fails("think", { content: "x", origin: "alien" }, "invalid_params");
  await fails("kg_entity_get", { entityId: clock.id }, "not_found");
  await fails("kg_edge_create", { source: svc.id, target: "ent_missing", relation: "x" }, "not_found");

  await fails("retrieve", { query: "   " }, "invalid_params");
  await fails("retrieve", { query: "x", scopeIds: { team: "a" } }, "invalid_params");
  await fails("retrieve", { query: 42 }, "invalid_params");
  await fails("log", { kind: "thought", content: "x" }, "invalid_params");
  await fails("pin", { targetId: "obs_missing" }, "not_found");
  await fails("capsule_close", { capsuleId: cap.id }, "conflict");
  let unknown = false;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
  } catch (e) {
    unknown = /unknown tool/.test(String(e));
  }
  check(unknown, "an unknown tool is a protocol error");
  // Still serving after the errors.
  await ok("retrieve", { query: "clock skew" });

  await client.close();
  fs.rmSync(archiveDir, { recursive: true, force: true });
  console.log(JSON.stringify({ ok: true, mode, server, tools: names.length, calls: calls.length }));
}

main().catch((e) => {
  console.error("e2e failed:", e && e.stack ? e.stack : e);
  process.exit(1);
});
