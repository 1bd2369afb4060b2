package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/metrics"
	"github.com/cairnhq/cairn/memory"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a server. The zero value works.
type Options struct {
	// Logger receives one line per tool call (tool, code, latency; never
	// memory content). Default: discard.
	Logger *slog.Logger
	// Metrics, when set, receives per-tool call counts and latencies.
	Metrics *metrics.Registry
	// MaxRequestBytes bounds one request (one stdio line, one HTTP body).
	// Default 8 MiB.
	MaxRequestBytes int
	// ResourcePageSize is how many resources one resources/list page
	// holds. Default 50.
	ResourcePageSize int
}

// Instructions tell a model what cairn is for and how to use it.
const Instructions = `cairn is your long-term memory for this work. At the start of a task, and whenever you need earlier context, call retrieve with the task in plain words and the scopeIds of your session and repository: it returns pinned memories, the current session summary and the most relevant past observations. As you work, record what happens with log (commands and their outcomes, errors, decisions, what the user asked), keep a running summary with summary_set, pin what must not be forgotten, and erase anything that must not be kept (a secret, personal data, what the user asks you to forget): forget an observation, summary_forget, thought_forget, code_artifact_forget, or delete a graph record; thought_mark with status removal only stops a thought being retrieved. Record conclusions and lessons with think, and facts about people, projects and services in the knowledge graph (kg_entities to find an entity, kg_entity_create, kg_observe, kg_edge_create); inner_voice_retrieve, when enabled, returns the thoughts and facts closest in meaning to a question, with trust tiers, to reason over and cite; inner_voice answers a question from your memory with cited sentences (a language model, when the server has one, answers from the knowledge graph), checks every sentence against what it cites and refuses an answer that is not grounded, continues a session of earlier exchanges (inner_voice_sessions lists them), saves the answer as a summary thought and can stage graph candidates for knowledgegraph_moderate; maintenance_ops archives and removes thoughts marked for removal. For code, index the repository once with code_index (over HTTP it runs as a background job: follow it with code_index_status), then at each turn call code_hydrate with the query, this turn's episode_id and the session_id: it returns the code entities you need within a budget, and keeps what earlier turns of the session hydrated; code_propose and code_promote record code you wrote, and the introspect_ tools explain every decision. At the start of a session in a repository, context_session_start returns what cairn knows about it (the recall prompt does the same), and context_pre_compact saves the session's summary before your context is compacted; records can be read as resources (cairn://observation/{id}, cairn://capsule/{id}, ...). Every error has a stable code: invalid_params (fix the arguments), not_found, conflict, feature_disabled, embedder_unavailable, db_error, internal_error.`

// toolMetrics are the per-tool series.
type toolMetrics struct {
	calls   *metrics.CounterVec
	seconds *metrics.HistogramVec
}

// New returns an MCP server offering every cairn tool over eng.
func New(eng *cairn.Engine, opts *Options) (*mcp.Server, error) {
	o := defaults(opts)
	srv := mcp.NewServer(&mcp.Implementation{Name: "cairn", Title: "cairn memory", Version: cairn.Version},
		&mcp.ServerOptions{Instructions: Instructions, Logger: slog.New(atLeast{o.Logger.Handler(), slog.LevelWarn}),
			CompletionHandler: complete(eng)})
	var tm *toolMetrics
	if o.Metrics != nil {
		tm = &toolMetrics{
			calls:   o.Metrics.Counter("cairn_mcp_tool_calls_total", "MCP tool calls by tool and result code (ok or an error code).", "tool", "code"),
			seconds: o.Metrics.Histogram("cairn_mcp_tool_seconds", "MCP tool call latency in seconds.", metrics.DefaultBuckets, "tool"),
		}
	}
	pool := newWarmPool(30 * time.Second)
	for _, t := range cairn.Tools() {
		mt, err := describe(t)
		if err != nil {
			return nil, err
		}
		srv.AddTool(mt, handler(eng, t, o.Logger, tm, pool))
	}
	addPromptsAndResources(srv, eng, o.ResourcePageSize)
	return srv, nil
}

func defaults(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 8 << 20
	}
	if o.ResourcePageSize <= 0 {
		o.ResourcePageSize = 50
	}
	o.ResourcePageSize = min(o.ResourcePageSize, cairn.MaxPageSize)
	return o
}

// describe turns a cairn.Tool into an MCP tool with schemas.
func describe(t cairn.Tool) (*mcp.Tool, error) {
	in, err := Schema(t.In)
	if err != nil {
		return nil, fmt.Errorf("input schema of %s: %w", t.Name, err)
	}
	out, err := Schema(t.Out)
	if err != nil {
		return nil, fmt.Errorf("output schema of %s: %w", t.Name, err)
	}
	readOnly, idem := t.ReadOnly, t.Idempotent
	destructive := t.Destructive
	openWorld := false
	return &mcp.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: in, OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: readOnly, IdempotentHint: idem,
			DestructiveHint: &destructive, OpenWorldHint: &openWorld},
	}, nil
}

// schemaOverrides describe types whose JSON differs from their Go shape.
var schemaOverrides = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage]():  {Type: "object", Description: "a JSON object"},
	reflect.TypeFor[memory.RawObject](): {Type: "object", Description: "a JSON object of properties"},
	reflect.TypeFor[cairn.EmbedderConfig](): {Type: "object", Description: "the embedder: provider, model, dimension, base URL, request timeout, retries, whether an API key is set",
		Properties: map[string]*jsonschema.Schema{
			"provider": {Type: "string"}, "model": {Type: "string"}, "dim": {Type: "integer"}, "baseURL": {Type: "string"},
			"timeout": {Type: "string"}, "retries": {Type: "integer"}, "apiKeySet": {Type: "boolean"},
		}},
	reflect.TypeFor[memory.Entity](): {Type: "object", Description: "an observation (id, kind, content, provenance, ts, scopeIds, redacted) or a summary (id, capsuleId, content, confidence, createdAt, evidenceRefs, scopeIds)"},
	reflect.TypeFor[memory.Explanation](): {Type: "object", Description: "how a score was computed: name, value, detail, the children it was computed from, and degraded (an error code) when a signal could not be computed",
		Properties: map[string]*jsonschema.Schema{
			"name": {Type: "string"}, "value": {Type: "number"}, "detail": {Type: "string"},
			"children": {Type: "array", Items: &jsonschema.Schema{Type: "object"}},
			"degraded": {Type: "string"},
		}},
}

// Schema derives the JSON schema of a request or result type from its Go
// shape and struct tags.
func Schema(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: schemaOverrides})
	if err == nil && s.Type == "object" && s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{} // some clients insist on "properties"
	}
	return s, err
}

// handler decodes arguments strictly, runs the tool and returns its result
// as structuredContent and JSON text, or a tool error with the stable code.
func handler(eng *cairn.Engine, t cairn.Tool, log *slog.Logger, tm *toolMetrics, pool *warmPool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		var out any
		var err error
		pool.run(func() { out, err = call(ctx, eng, t, req.Params.Arguments) })
		code := "ok"
		if err != nil {
			code = string(memory.Public(err).Code)
		}
		elapsed := time.Since(start)
		if tm != nil {
			tm.calls.Inc(t.Name, code)
			tm.seconds.Observe(elapsed.Seconds(), t.Name)
		}
		log.Info("tool call", "tool", t.Name, "code", code, "ms", float64(elapsed.Microseconds())/1000)
		if err != nil {
			logFailure(log, t.Name, err)
			return ErrorResult(err), nil
		}
		body, err := json.Marshal(out)
		if err != nil {
			return ErrorResult(memory.Wrap(memory.CodeInternal, err, "encoding the result")), nil
		}
		return &mcp.CallToolResult{
			StructuredContent: json.RawMessage(body),
			Content:           []mcp.Content{&mcp.TextContent{Text: string(body)}},
		}, nil
	}
}

func call(ctx context.Context, eng *cairn.Engine, t cairn.Tool, args json.RawMessage) (any, error) {
	in, err := t.Decode(args)
	if err != nil {
		return nil, err
	}
	return eng.Call(ctx, t, in)
}

// logFailure logs a failed call for the operator: internal and database
// failures with their whole cause at error level; an unavailable embedder
// at warn level with the caller's message, and its cause (the embedder's
// address, the transport's error) at debug level only.
func logFailure(log *slog.Logger, tool string, err error) {
	switch memory.CodeOf(err) {
	case memory.CodeInternal, memory.CodeDBError:
		log.Error("tool failed", "tool", tool, "err", memory.Detail(err))
	case memory.CodeEmbedderUnavailable:
		log.Warn("tool failed", "tool", tool, "err", memory.Public(err).Message)
		log.Debug("embedder failure", "tool", tool, "detail", memory.Detail(err))
	}
}

// ErrorResult is the tool error for err: text content
// {"error": {"code": ..., "message": ...}} with the stable code and a
// caller-safe message, and the code again in _meta["cairn/code"].
func ErrorResult(err error) *mcp.CallToolResult {
	pub := memory.Public(err)
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": string(pub.Code), "message": pub.Message}})
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: string(body)}},
		Meta:    mcp.Meta{"cairn/code": string(pub.Code)},
	}
}

// atLeast passes on records at or above a level: the SDK's session chatter
// stays out of the info log.
type atLeast struct {
	slog.Handler
	min slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(as []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(as), h.min}
}
func (h atLeast) WithGroup(g string) slog.Handler { return atLeast{h.Handler.WithGroup(g), h.min} }

// HTTPHandler serves srv as MCP streamable HTTP, stateless with JSON
// responses, with the SDK's DNS-rebinding protection for localhost and
// cross-origin protection on. Protocol errors say what is wrong without
// quoting Go's decoder.
func HTTPHandler(srv *mcp.Server, opts *Options) http.Handler {
	o := defaults(opts)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, Logger: o.Logger, MaxRequestBodyBytes: int64(o.MaxRequestBytes),
	})
	return http.NewCrossOriginProtection().Handler(depthGuard(publicResponses(h), int64(o.MaxRequestBytes)))
}

// depthGuard answers a POST whose body nests deeper than MaxDepth with a
// JSON-RPC invalid-params error (HTTP 400), as the stdio guard does; the
// SDK would call it a malformed payload. A body over limit passes on
// unread past limit, for the SDK's 413.
func depthGuard(h http.Handler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, "reading the request body failed\n")
			return
		}
		if int64(len(body)) <= limit {
			if reply := checkDepth(bytes.TrimSpace(body)); reply != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write(reply)
				return
			}
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		h.ServeHTTP(w, r)
	})
}
