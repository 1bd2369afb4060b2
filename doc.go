// Package cairn is the front door of cairn, a local-first memory and
// retrieval engine for AI agents.
//
// Open a database with Open, record what an agent observes with
// Engine.Log, group it into capsules with Engine.OpenCapsule and
// Engine.CloseCapsule, mark what matters with Engine.Pin, forget with
// Engine.Forget (and ForgetSummary, ForgetThought, ForgetArtifact, or the
// knowledge graph's deletes), and get back the few memories that matter for
// a query with Engine.Retrieve:
//
//	eng, err := cairn.Open(cairn.DefaultPath(), nil)
//	if err != nil { ... }
//	defer eng.Close()
//	eng.Log(ctx, cairn.LogRequest{Kind: memory.KindMessage, Content: "fixed the auth bug",
//		ScopeIDs: memory.Scope{RepoID: "/repo"}})
//	res, err := eng.Retrieve(ctx, cairn.RetrieveRequest{Query: "authentication bug",
//		ScopeIDs: memory.Scope{RepoID: "/repo"}})
//
// Every error an Engine returns is a *memory.Error with a stable code.
// The MCP server, the HTTP API and the CLI are thin faces over an Engine.
package cairn
