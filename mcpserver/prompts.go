package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RecallPrompt is the prompt that hands a conversation what cairn knows
// about a repository (agents show it as a slash command).
const RecallPrompt = "recall"

// resourceKinds are the records a client can attach to a conversation,
// by URI (cairn://observation/{id}, ...), and the tool that reads each.
var resourceKinds = []struct {
	kind, tool, arg, title string
}{
	{"observation", "observation_get", "observationId", "An observation: a tool call, command, diff, error or message"},
	{"capsule", "capsule_get", "capsuleId", "A session capsule, with its observations' ids in order"},
	{"summary", "summary_get", "summaryId", "A capsule's summary"},
	{"pin", "pin_get", "pinId", "A pin: what it points at and why, whether it is in force, and the pinned record"},
	{"thought", "thought_get", "thoughtId", "A thought: a conclusion, decision or lesson"},
	{"entity", "kg_entity_get", "entityId", "A knowledge-graph entity"},
}

// addPromptsAndResources offers the recall prompt, a resource template per
// record kind, the context of a repository as a resource template, and
// the records worth attaching (pins, recent capsules and summaries) as
// the resource list.
func addPromptsAndResources(srv *mcp.Server, eng *cairn.Engine, pageSize int) {
	srv.AddReceivingMiddleware(listResources(eng, pageSize))
	srv.AddPrompt(&mcp.Prompt{
		Name:  RecallPrompt,
		Title: "Recall what cairn knows about this repository",
		Description: "Puts the repository's pinned memories, its open and last sessions with their summaries, and the memories most " +
			"relevant to it and its branch into the conversation, each with its id (the same Markdown as context_session_start).",
		Arguments: []*mcp.PromptArgument{
			{Name: "repo", Title: "Repository", Description: "the repository's root path, as cairn records it (completion lists the known ones)", Required: true},
			{Name: "branch", Title: "Branch", Description: "the current branch, to find what concerns it"},
			{Name: "session", Title: "Session", Description: "this session's id, to include its open capsule"},
		},
	}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		args := req.Params.Arguments
		in, _ := json.Marshal(map[string]any{"scopeIds": scopeOf(args["repo"], args["session"]), "branch": args["branch"]})
		out, err := eng.CallJSON(ctx, "context_session_start", in)
		if err != nil {
			return nil, promptError(err)
		}
		c := out.(interface{ MarkdownText() string })
		return &mcp.GetPromptResult{
			Description: "What cairn remembers about " + args["repo"],
			Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: c.MarkdownText() +
				"\nUse this as background for the work that follows; cite records by id."}}},
		}, nil
	})
	for _, k := range resourceKinds {
		k := k
		srv.AddResourceTemplate(&mcp.ResourceTemplate{
			Name: k.kind, Title: "cairn " + k.kind, Description: k.title + " (JSON, as " + k.tool + " returns it).",
			MIMEType: "application/json", URITemplate: "cairn://" + k.kind + "/{id}",
		}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			uri := req.Params.URI
			id, ok := strings.CutPrefix(uri, "cairn://"+k.kind+"/")
			if !ok || id == "" {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			if u, err := url.PathUnescape(id); err == nil {
				id = u
			}
			in, _ := json.Marshal(map[string]string{k.arg: id})
			out, err := eng.CallJSON(ctx, k.tool, in)
			if err != nil {
				if memory.IsCode(err, memory.CodeNotFound) || memory.IsCode(err, memory.CodeInvalidParams) {
					return nil, mcp.ResourceNotFoundError(uri)
				}
				return nil, promptError(err)
			}
			body, _ := json.MarshalIndent(out, "", "  ")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
		})
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "context", Title: "cairn context of a repository",
		Description: "The Markdown a session in the repository starts with: pins, open and last sessions, relevant memories (as context_session_start).",
		MIMEType:    "text/markdown", URITemplate: "cairn://context{?repo,branch}",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		u, err := url.Parse(req.Params.URI)
		if err != nil || u.Host != "context" || u.Query().Get("repo") == "" {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		in, _ := json.Marshal(map[string]any{"scopeIds": scopeOf(u.Query().Get("repo"), ""), "branch": u.Query().Get("branch")})
		out, err := eng.CallJSON(ctx, "context_session_start", in)
		if err != nil {
			return nil, promptError(err)
		}
		c := out.(interface{ MarkdownText() string })
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: c.MarkdownText()}}}, nil
	})
}

func scopeOf(repo, session string) map[string]string {
	s := map[string]string{}
	if repo != "" {
		s["repoId"] = repo
	}
	if session != "" {
		s["sessionId"] = session
	}
	return s
}

// promptError is a JSON-RPC error carrying cairn's caller-safe message
// and code: invalid params (-32602) for arguments the caller can fix,
// internal error (-32603) otherwise.
func promptError(err error) error {
	pub := memory.Public(err)
	code := int64(jsonrpc.CodeInternalError)
	if pub.Code == memory.CodeInvalidParams || pub.Code == memory.CodeNotFound {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf("%s: %s", pub.Code, pub.Message)}
}

// completionArgs maps the arguments cairn completes to scope keys.
var completionArgs = map[string]string{"repo": "repoId", "session": "sessionId"}

// complete answers completion/complete: a prompt's or the context
// template's repo and session arguments, from the values the database
// holds.
func complete(eng *cairn.Engine) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
		p := req.Params
		if p == nil || p.Ref == nil {
			return res, nil
		}
		key, ok := completionArgs[p.Argument.Name]
		if !ok || (p.Ref.Type == "ref/prompt" && p.Ref.Name != RecallPrompt) ||
			(p.Ref.Type == "ref/resource" && !strings.HasPrefix(p.Ref.URI, "cairn://context")) {
			return res, nil
		}
		const max = 100 // the protocol's cap on values per answer
		vals, err := eng.CompleteScope(ctx, key, p.Argument.Value, max+1)
		if err != nil {
			return nil, promptError(err)
		}
		if len(vals) > max {
			vals, res.Completion.HasMore = vals[:max], true
		}
		res.Completion.Values = append(res.Completion.Values, vals...)
		return res, nil
	}
}

// listResources answers resources/list from the engine instead of the
// SDK's static list: the active pins, then the most recent capsules each
// followed by its summary (cairn.ListRecords), pageSize a page, with the
// protocol's cursor. Each is read through its template
// (cairn://pin/{id}, ...).
func listResources(eng *cairn.Engine, pageSize int) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			r, ok := req.(*mcp.ListResourcesRequest)
			if method != "resources/list" || !ok {
				return next(ctx, method, req)
			}
			cursor := ""
			if r.Params != nil {
				cursor = r.Params.Cursor
			}
			page, err := eng.ListRecords(ctx, cursor, pageSize)
			if err != nil {
				return nil, promptError(err)
			}
			// The list changes with every write and holds one person's
			// memory: stale at once, cached by that person's client only.
			res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}, NextCursor: page.Next,
				Cacheable: mcp.Cacheable{TTLMs: 0, CacheScope: "private"}}
			for _, rec := range page.Records {
				res.Resources = append(res.Resources, &mcp.Resource{
					URI: "cairn://" + rec.Kind + "/" + url.PathEscape(rec.ID), Name: rec.ID, Title: rec.Title,
					Description: rec.Description, MIMEType: "application/json",
					Annotations: &mcp.Annotations{LastModified: time.UnixMilli(rec.At).UTC().Format(time.RFC3339)},
				})
			}
			return res, nil
		}
	}
}
