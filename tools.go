package cairn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// Version is cairn's version, reported by status and the servers.
const Version = "0.1.0"

// Tool is one capability of the engine, described once for every face: the
// MCP server serves it as an MCP tool of the same name, the HTTP API as the
// route Method Path, and the CLI runs it with `cairn call NAME`. All three
// decode arguments with Decode and run them with Engine.Call, so names,
// parameters, errors and results are the same everywhere. Adding a
// capability is adding a Tool to the list Tools returns.
type Tool struct {
	// Name is the tool's name: letters, digits, '_' and '-' only (the MCP
	// spec allows dots, but several clients reject them).
	Name string
	// Title is a short human label; Description is written for a model:
	// when to call the tool, what comes back, and its limits.
	Title, Description string
	// Method and Path are the HTTP route. Path segments in braces name
	// request fields ("/v1/pins/{pinId}").
	Method, Path string
	// In and Out are the request and result types; schemas derive from
	// their struct tags.
	In, Out reflect.Type
	// ReadOnly, Destructive and Idempotent describe the tool's effect;
	// Creates says it makes a new record (HTTP answers 201).
	ReadOnly, Destructive, Idempotent, Creates bool

	call func(ctx context.Context, e *Engine, in any) (any, error)
}

// newTool binds a typed engine method to a Tool description.
func newTool[In, Out any](t Tool, fn func(e *Engine, ctx context.Context, in In) (Out, error)) Tool {
	t.In = reflect.TypeFor[In]()
	t.Out = reflect.TypeFor[Out]()
	t.call = func(ctx context.Context, e *Engine, in any) (any, error) {
		p, ok := in.(*In)
		if !ok {
			return nil, memory.Errorf(memory.CodeInternal, "tool %s called with %T", t.Name, in)
		}
		return fn(e, ctx, *p)
	}
	return t
}

// MaxArgumentBytes bounds the JSON arguments of one tool call.
const MaxArgumentBytes = 4 << 20

// Decode reads JSON arguments into a new *In, strictly: unknown fields,
// wrong types, trailing data and malformed JSON are invalid_params errors
// that name the problem. Empty arguments are the empty object.
func (t Tool) Decode(args []byte) (any, error) {
	if len(args) > MaxArgumentBytes {
		return nil, memory.Errorf(memory.CodeInvalidParams, "arguments are %d bytes, over the %d-byte limit", len(args), MaxArgumentBytes)
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if args[0] != '{' {
		return nil, memory.Errorf(memory.CodeInvalidParams, "arguments must be a JSON object")
	}
	in, err := decodeStrict(args, t.In)
	if err != nil && strings.Contains(err.Error(), "unknown field") {
		// A field spelled in the other convention (top_k for topK).
		if respelled, ok := memory.OtherSpellings(args, t.In); ok {
			in, err = decodeStrict(respelled, t.In)
		}
	}
	if err != nil {
		return nil, err
	}
	return in, nil
}

// decodeStrict reads args into a new value of type t: unknown fields,
// wrong types, trailing data and malformed JSON are invalid_params.
func decodeStrict(args []byte, t reflect.Type) (any, error) {
	in := reflect.New(t).Interface()
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		var me *memory.Error
		if errors.As(err, &me) {
			return nil, me
		}
		return nil, memory.Wrap(memory.CodeInvalidParams, err, "%s", memory.JSONProblem(err))
	}
	if dec.More() {
		return nil, memory.Errorf(memory.CodeInvalidParams, "arguments hold more than one JSON value")
	}
	return in, nil
}

// Call runs a tool with arguments Decode produced.
func (e *Engine) Call(ctx context.Context, t Tool, in any) (any, error) {
	if t.call == nil {
		return nil, memory.Errorf(memory.CodeNotFound, "unknown tool %q", t.Name)
	}
	return t.call(ctx, e, in)
}

// CallJSON decodes args for the named tool and runs it.
func (e *Engine) CallJSON(ctx context.Context, name string, args []byte) (any, error) {
	t, ok := ToolByName(name)
	if !ok {
		return nil, memory.Errorf(memory.CodeNotFound, "unknown tool %q (tools: %s)", name, strings.Join(ToolNames(), ", "))
	}
	in, err := t.Decode(args)
	if err != nil {
		return nil, err
	}
	return e.Call(ctx, t, in)
}

// ToolByName finds a tool.
func ToolByName(name string) (Tool, bool) {
	for _, t := range toolList {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// ToolNames lists the tools' names in order.
func ToolNames() []string {
	var names []string
	for _, t := range toolList {
		names = append(names, t.Name)
	}
	return names
}

// ObservationRef names an observation.
type ObservationRef struct {
	ObservationID string `json:"observationId" jsonschema:"the observation's id"`
}

// CapsuleRef names a capsule.
type CapsuleRef struct {
	CapsuleID string `json:"capsuleId" jsonschema:"the capsule's id"`
}

// SummaryRef names a summary.
type SummaryRef struct {
	SummaryID string `json:"summaryId" jsonschema:"the summary's id"`
}

// PinRef names a pin.
type PinRef struct {
	PinID string `json:"pinId" jsonschema:"the pin's id"`
}

// Unpinned reports a removed pin.
type Unpinned struct {
	Unpinned string `json:"unpinned"`
}

// Tools lists the engine's capabilities, in the order the faces present
// them.
func Tools() []Tool { return slices.Clone(toolList) }

var toolList = slices.Concat(recordTools, knowledgeTools, innerVoiceTools, groundedTools, codeTools, captureTools, ledgerTools, adminTools)

// recordTools are the observations, capsules, summaries and pins.
var recordTools = []Tool{
	newTool(Tool{
		Name: "retrieve", Title: "Retrieve memories", Method: "POST", Path: "/v1/retrieve", ReadOnly: true, Idempotent: true,
		Description: `Recall what matters for a question before acting: call it at the start of a task and whenever you need past context (earlier errors, decisions, fixes, what the user asked). Returns three tiers: pins (memories marked important, always included), currentSummary (the running summary of the session's open capsule) and candidates (observations and summaries ranked by the hybrid provider: words, with the context of neighbouring records in the session, meaning from the embedder, and recency; or, with provider local-fts, 0.7 × FTS5 bm25 + 0.3 × recency over 30 days), each with an explanation of its score, plus provenance. If the embedder is unavailable, hybrid still answers from words and recency and provenance.degraded says embedder_unavailable. Pass scopeIds (sessionId, repoId, ...) to stay inside a session or repository; every key given must match exactly. The query is plain text, any string is safe; words are OR'ed and records sharing more of them rank higher. Set tokenBudget to cap the size (ceil(chars/4) tokens; pins and the summary are never cut) and maxCandidates (default 50, up to 1000).`,
	}, func(e *Engine, ctx context.Context, in RetrieveRequest) (RetrieveResult, error) {
		return e.Retrieve(ctx, in)
	}),
	newTool(Tool{
		Name: "log", Title: "Record an observation", Method: "POST", Path: "/v1/observations", Creates: true,
		Description: `Record something that happened, as it happened: a tool call, a command and its outcome, a file diff, an error, a message, or a step of an agent graph (kind: tool_call, command, file_diff, error, message, node_start, node_end, node_output, node_error). Content is stored verbatim (at most 1 MiB). Give scopeIds (sessionId, repoId) so later retrievals find it in the right place; it joins the open capsule of its session. Returns the stored observation with its id.`,
	}, func(e *Engine, ctx context.Context, in LogRequest) (memory.Observation, error) { return e.Log(ctx, in) }),
	newTool(Tool{
		Name: "capsule_open", Title: "Open a session capsule", Method: "POST", Path: "/v1/capsules", Creates: true,
		Description: `Open a capsule at the start of a session or episode: observations logged with its sessionId join it in order, and its summary becomes the currentSummary that retrieve returns for the session. A session has at most one open capsule (conflict error otherwise; close the old one first). Returns the capsule with its id.`,
	}, func(e *Engine, ctx context.Context, in OpenCapsuleRequest) (memory.Capsule, error) {
		return e.OpenCapsule(ctx, in)
	}),
	newTool(Tool{
		Name: "summary_set", Title: "Write a capsule summary", Method: "PUT", Path: "/v1/capsules/{capsuleId}/summary", Idempotent: true,
		Description: `Write or replace the summary of a capsule. While the capsule is open this is the running summary retrieve returns as currentSummary, so update it as the session progresses. The summary keeps its id across updates. confidence is 0 to 1 (default 1); evidenceRefs name the observations it rests on.`,
	}, func(e *Engine, ctx context.Context, in SummaryRequest) (memory.Summary, error) {
		return e.SetSummary(ctx, in)
	}),
	newTool(Tool{
		Name: "capsule_close", Title: "Close a session capsule", Method: "POST", Path: "/v1/capsules/{capsuleId}/close",
		Description: `Close an open capsule at the end of a session, optionally with its final summary (which replaces a running one). A closed capsule takes no more observations; closing it again is a conflict error. Returns the capsule and its summary.`,
	}, func(e *Engine, ctx context.Context, in CloseCapsuleRequest) (CloseCapsuleResult, error) {
		return e.CloseCapsule(ctx, in)
	}),
	newTool(Tool{
		Name: "capsule_get", Title: "Read a capsule", Method: "GET", Path: "/v1/capsules/{capsuleId}", ReadOnly: true, Idempotent: true,
		Description: `Read a capsule: its type, intent, status, times, scope, the ids of its observations in order, and its summary id.`,
	}, func(e *Engine, ctx context.Context, in CapsuleRef) (memory.Capsule, error) {
		return e.Capsule(ctx, in.CapsuleID)
	}),
	newTool(Tool{
		Name: "observation_get", Title: "Read an observation", Method: "GET", Path: "/v1/observations/{observationId}", ReadOnly: true, Idempotent: true,
		Description: `Read one observation by id, with its kind, content, provenance, time and scope.`,
	}, func(e *Engine, ctx context.Context, in ObservationRef) (memory.Observation, error) {
		return e.Observation(ctx, in.ObservationID)
	}),
	newTool(Tool{
		Name: "summary_get", Title: "Read a summary", Method: "GET", Path: "/v1/summaries/{summaryId}", ReadOnly: true, Idempotent: true,
		Description: `Read one capsule summary by id, with its confidence and evidence refs.`,
	}, func(e *Engine, ctx context.Context, in SummaryRef) (memory.Summary, error) {
		return e.Summary(ctx, in.SummaryID)
	}),
	newTool(Tool{
		Name: "summary_forget", Title: "Forget a capsule summary", Method: "POST", Path: "/v1/summaries/{summaryId}/forget", Destructive: true, Idempotent: true,
		Description: `Forget a capsule summary that must not be kept (it holds a secret or personal data, or the user asked to erase it): its content becomes "[redacted]", the original text is overwritten on disk and removed from every index, so no retrieval returns it again, not even as the session's currentSummary. Its id, capsule, confidence and evidence refs remain; a later summary_set on the capsule writes a new summary in its place. Forgetting it again changes nothing. Cannot be undone. Returns the redacted summary.`,
	}, func(e *Engine, ctx context.Context, in SummaryRef) (memory.Summary, error) {
		return e.ForgetSummary(ctx, in.SummaryID)
	}),
	newTool(Tool{
		Name: "pin", Title: "Pin a memory", Method: "POST", Path: "/v1/pins", Creates: true,
		Description: `Pin an observation or summary that must not be forgotten in this context (a user decision, a root cause, a constraint): while active, retrieve returns it in its scope ahead of all candidates and no token budget cuts it. By default the pin has the target's scope; ttlSeconds or expiresAt make it expire. Returns the pin.`,
	}, func(e *Engine, ctx context.Context, in PinRequest) (memory.Pin, error) { return e.Pin(ctx, in) }),
	newTool(Tool{
		Name: "pin_get", Title: "Read a pin", Method: "GET", Path: "/v1/pins/{pinId}", ReadOnly: true, Idempotent: true,
		Description: `Read one pin by id: what it points at (targetType, targetId), its reason, scope and times, active (false once its expiresAt has passed; an expired pin stays readable until unpinned), and target, the pinned observation or summary itself (absent when that record no longer exists). not_found when no pin has the id.`,
	}, func(e *Engine, ctx context.Context, in PinRef) (PinView, error) {
		return e.PinGet(ctx, in.PinID)
	}),
	newTool(Tool{
		Name: "unpin", Title: "Remove a pin", Method: "DELETE", Path: "/v1/pins/{pinId}", Destructive: true,
		Description: `Remove a pin by its id. The pinned record itself stays.`,
	}, func(e *Engine, ctx context.Context, in PinRef) (Unpinned, error) {
		return Unpinned{Unpinned: in.PinID}, e.Unpin(ctx, in.PinID)
	}),
	newTool(Tool{
		Name: "forget", Title: "Forget an observation", Method: "POST", Path: "/v1/observations/{observationId}/forget", Destructive: true, Idempotent: true,
		Description: `Forget an observation that must not be kept (a secret, personal data, something the user asked to erase): its content becomes "[redacted]", the original text is overwritten on disk and removed from every index, so no retrieval finds it again. Its id, time and place in its capsule remain. Forgetting it again changes nothing. Cannot be undone. Returns the redacted observation. (Summaries, thoughts and code artifacts have summary_forget, thought_forget and code_artifact_forget; knowledge-graph records are deleted.)`,
	}, func(e *Engine, ctx context.Context, in ObservationRef) (memory.Observation, error) {
		return e.Forget(ctx, in.ObservationID)
	}),
}
