// produce.mjs OUTDIR runs the real peers cairn imports from and writes the
// files they keep, so cairn's import is tested on what the peers write,
// not on imitations:
//
//   OUTDIR/mcp-memory.jsonl     the official MCP memory server's memory file,
//                               written by the server itself after
//                               create_entities, create_relations and
//                               add_observations over its stdio protocol;
//   OUTDIR/kindling-export.json Kindling's SqliteKindlingStore.exportDatabase()
//                               after a session written with its own store;
//   OUTDIR/kindling-bundle.json the same dataset as Kindling's own export
//                               writes it: wrapped in its export bundle;
//   OUTDIR/kindling.db          the Kindling store both were exported from;
//   OUTDIR/mem0.json            mem0ai's Memory.getAll() after add() with
//                               metadata (infer: false; a local stand-in
//                               embedder, since no model can be fetched).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";

const out = process.argv[2];
if (!out) {
  console.error("usage: node produce.mjs OUTDIR");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
for (const k of ["log", "info", "warn", "debug"]) console[k] = (...a) => console.error(...a);
process.env.MEM0_TELEMETRY = "false"; // no network here, and none wanted

async function mcpMemory() {
  const file = path.join(out, "mcp-memory.jsonl");
  const server = spawn(process.execPath, ["node_modules/@modelcontextprotocol/server-memory/dist/index.js"], {
    env: { ...process.env, MEMORY_FILE_PATH: file },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: server.stdout });
  const waiting = new Map();
  lines.on("line", (l) => {
    const msg = JSON.parse(l);
    if (msg.id !== undefined && waiting.has(msg.id)) {
      waiting.get(msg.id)(msg);
      waiting.delete(msg.id);
    }
  });
  let id = 0;
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      const n = ++id;
      waiting.set(n, (msg) => (msg.error || (msg.result && msg.result.isError) ? reject(new Error(JSON.stringify(msg))) : resolve(msg.result)));
      server.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: n, method, params }) + "\n");
    });
  await call("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "cairn-e2e", version: "1" } });
  server.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const tool = (name, args) => call("tools/call", { name, arguments: args });
  await tool("create_entities", {
    entities: [
      { name: "Alice", entityType: "person", observations: ["Leads the checkout team", "Prefers Go for services"] },
      { name: "checkout-service", entityType: "service", observations: ["Fails with session expired when clocks drift"] },
      { name: "auth-service", entityType: "service", observations: [] },
    ],
  });
  await tool("create_relations", {
    relations: [
      { from: "Alice", to: "checkout-service", relationType: "owns" },
      { from: "checkout-service", to: "auth-service", relationType: "depends on" },
    ],
  });
  await tool("add_observations", {
    observations: [
      { entityName: "auth-service", contents: ["Issues session tokens valid for 15 minutes"] },
      { entityName: "checkout-service", contents: ["Allows 5s of clock skew since PR #412"] },
    ],
  });
  const graph = await tool("read_graph", {});
  server.stdin.end();
  await new Promise((r) => server.on("exit", r));
  return { file, entities: graph.structuredContent ? graph.structuredContent.entities.length : null };
}

async function kindling() {
  const { openDatabase, SqliteKindlingStore } = await import("@eddacraft/kindling-store-sqlite");
  const db = openDatabase({ path: path.join(out, "kindling.db") });
  const store = new SqliteKindlingStore(db);
  const scope = { sessionId: "kd-session-1", repoId: "/src/shop" };
  const t0 = 1764000000000;
  store.createCapsule({ id: "kd-cap-1", type: "session", intent: "Fix checkout session errors", status: "open", openedAt: t0, scopeIds: scope });
  const obs = [
    ["kd-obs-1", "command", "go test ./checkout/... -> FAIL: TestCheckoutAfterLogin (401)"],
    ["kd-obs-2", "error", "session expired: token issued 3s in the future"],
    ["kd-obs-3", "file_diff", "auth/session.go: allow 5s of clock skew"],
    ["kd-obs-4", "message", "user: ship it once the tests pass"],
  ];
  obs.forEach(([id, kind, content], i) => {
    store.insertObservation({ id, kind, content, provenance: { tool: "kindling-e2e" }, ts: t0 + (i + 1) * 1000, scopeIds: scope, redacted: false });
    store.attachObservationToCapsule("kd-cap-1", id);
  });
  store.insertSummary({ id: "kd-sum-1", capsuleId: "kd-cap-1", content: "Checkout failed on clock skew; allowed 5s in auth.", confidence: 0.8, createdAt: t0 + 9000, evidenceRefs: ["kd-obs-2", "kd-obs-3"] });
  store.closeCapsule("kd-cap-1", t0 + 10000, "kd-sum-1");
  store.insertPin({ id: "kd-pin-1", targetType: "observation", targetId: "kd-obs-2", reason: "root cause", createdAt: t0 + 11000, scopeIds: scope });
  store.insertObservation({ id: "kd-obs-5", kind: "tool_call", content: "deploy checkout v1.42.0 to staging", provenance: {}, ts: t0 + 20000, scopeIds: { repoId: "/src/shop" }, redacted: false });
  const dataset = store.exportDatabase();
  const file = path.join(out, "kindling-export.json");
  writeFileSync(file, JSON.stringify(dataset, null, 2));
  // What a Kindling user's export writes is a bundle around that dataset,
  // made by createExportBundle in @eddacraft/kindling-core: {bundleVersion
  // "1.0", exportedAt, metadata (when given), dataset}. That package is not
  // on the npm registry reachable here (kindling-core-types/ stands in for
  // its types), so its wrapper is built here as it builds it, around the
  // real store's dataset.
  const bundle = {
    bundleVersion: "1.0",
    exportedAt: Date.now(),
    dataset,
    metadata: { description: "checkout session, exported for cairn's e2e test", tags: ["e2e"] },
  };
  const bundleFile = path.join(out, "kindling-bundle.json");
  writeFileSync(bundleFile, JSON.stringify(bundle, null, 2));
  db.close();
  return { file, bundleFile };
}

async function mem0() {
  const { Memory } = await import("mem0ai/oss");
  // A deterministic local embedder (mem0's "langchain" provider takes any
  // object with embedQuery/embedDocuments): no model can be downloaded.
  const dim = 16;
  const vec = (t) => {
    const v = new Array(dim).fill(0);
    for (let i = 0; i < t.length; i++) v[i % dim] += t.charCodeAt(i) / 1000;
    return v;
  };
  const embedder = { embedQuery: async (t) => vec(t), embedDocuments: async (ts) => ts.map(vec) };
  const noLLM = { invoke: async () => { throw new Error("no LLM: infer is false"); } };
  const dir = path.join(out, "mem0-data");
  mkdirSync(dir, { recursive: true });
  const memory = new Memory({
    version: "v1.1",
    embedder: { provider: "langchain", config: { model: embedder, embeddingDims: dim } },
    vectorStore: { provider: "memory", config: { collectionName: "e2e", dimension: dim, dbPath: path.join(dir, "vector_store.db") } },
    llm: { provider: "langchain", config: { model: noLLM } },
    historyStore: { provider: "sqlite", config: { historyDbPath: path.join(dir, "history.db") } },
  });
  await memory.add("Alice prefers dark mode in every editor", { userId: "alice", metadata: { category: "preferences", source: "chat" }, infer: false });
  await memory.add("The checkout service must allow 5s of clock skew", { userId: "alice", agentId: "claude-code", metadata: { category: "decisions", confidence: 0.9 }, infer: false });
  await memory.add("Bob is allergic to peanuts", { userId: "bob", runId: "run-7", metadata: { category: "health" }, infer: false });
  const alice = await memory.getAll({ filters: { user_id: "alice" } });
  const bob = await memory.getAll({ filters: { user_id: "bob" } });
  const file = path.join(out, "mem0.json");
  writeFileSync(file, JSON.stringify({ results: [...alice.results, ...bob.results] }, null, 2));
  return { file };
}

const res = { mcpMemory: await mcpMemory(), kindling: await kindling(), mem0: await mem0() };
process.stdout.write(JSON.stringify(res) + "\n");
process.exit(0);
