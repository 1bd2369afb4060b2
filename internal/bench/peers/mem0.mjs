// mem0.mjs drives mem0's open-source SDK (mem0ai/oss) for `cairn bench peers`.
//
// It speaks JSON lines on stdin/stdout with the Go side, one request at a
// time:
//
//   {"op":"versions"}                                   -> {"versions":{...}}
//   {"op":"add","user":"conv-26","text":"...","dia":"D1:3"} -> {"ok":true}
//   {"op":"search","user":"conv-26","query":"...","k":20} -> {"dias":[...],"ms":..,"embedMs":..}
//   {"op":"close"}                                      -> {"ok":true}, then exit
//
// mem0 gets cairn's own embedder: its embedder is mem0's supported
// "langchain" provider, given an object whose embedQuery/embedDocuments ask
// the Go side for the vectors ({"embed":[texts]} out, {"vectors":[[...]]} in),
// so both engines rank with identical vectors. The LLM is mem0's "langchain"
// provider with an object that refuses every call: with infer:false mem0
// must not need one, and the run fails loudly if it ever does.
import { createInterface } from "node:readline";
import { readFileSync } from "node:fs";
import path from "node:path";

const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
// Anything mem0 logs goes to stderr: stdout carries only the protocol.
for (const k of ["log", "info", "warn", "debug"]) console[k] = (...a) => console.error(...a);

const dir = process.env.CAIRN_PEERS_DIR;
const dim = Number(process.env.CAIRN_PEERS_DIM);
if (!dir || !dim) {
  console.error("mem0.mjs: CAIRN_PEERS_DIR and CAIRN_PEERS_DIM must be set");
  process.exit(2);
}

let pendingVectors = null; // resolve function of the embed request in flight
let embedMs = 0;
function embed(texts) {
  const start = performance.now();
  return new Promise((resolve) => {
    pendingVectors = (v) => {
      embedMs += performance.now() - start;
      resolve(v);
    };
    out({ embed: texts });
  });
}
const embedder = {
  embedQuery: async (text) => (await embed([text]))[0],
  embedDocuments: async (texts) => (texts.length ? embed(texts) : []),
};
const noLLM = {
  invoke: async () => {
    throw new Error("mem0 asked for an LLM; the benchmark runs with infer:false and provides none");
  },
};

const { Memory } = await import("mem0ai/oss");
const memory = new Memory({
  version: "v1.1",
  embedder: { provider: "langchain", config: { model: embedder, embeddingDims: dim } },
  vectorStore: {
    provider: "memory",
    config: { collectionName: "locomo", dimension: dim, dbPath: path.join(dir, "vector_store.db") },
  },
  llm: { provider: "langchain", config: { model: noLLM } },
  historyStore: { provider: "sqlite", config: { historyDbPath: path.join(dir, "history.db") } },
});

function versions() {
  const v = { node: process.versions.node };
  for (const name of ["mem0ai", "better-sqlite3", "compromise"]) {
    try {
      v[name] = JSON.parse(readFileSync(path.join("node_modules", name, "package.json"), "utf8")).version;
    } catch {
      v[name] = "";
    }
  }
  return v;
}

async function handle(req) {
  switch (req.op) {
    case "versions":
      return { versions: versions() };
    case "add":
      await memory.add(req.text, { userId: req.user, metadata: { dia_id: req.dia }, infer: false });
      return { ok: true };
    case "search": {
      embedMs = 0;
      const start = performance.now();
      const res = await memory.search(req.query, { filters: { user_id: req.user }, topK: req.k, threshold: 0 });
      const ms = performance.now() - start;
      return { dias: res.results.map((r) => (r.metadata && r.metadata.dia_id) || ""), ms, embedMs };
    }
    case "close":
      return { ok: true };
    default:
      throw new Error("unknown op " + req.op);
  }
}

// Requests run one after another; vector answers resolve the embed in flight.
let chain = Promise.resolve();
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.vectors) {
    const r = pendingVectors;
    pendingVectors = null;
    if (r) r(msg.vectors);
    return;
  }
  chain = chain.then(async () => {
    try {
      out(await handle(msg));
    } catch (e) {
      out({ error: String((e && e.stack) || e) });
    }
    if (msg.op === "close") process.exit(0);
  });
});
rl.on("close", () => chain.then(() => process.exit(0)));
