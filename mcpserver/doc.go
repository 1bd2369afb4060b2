// Package mcpserver serves cairn's tools over the Model Context Protocol:
// on stdio (`cairn mcp`, one process per agent) and over streamable HTTP at
// /mcp (`cairn serve`).
//
// Every cairn.Tool becomes an MCP tool of the same name with input and
// output JSON schemas derived from the tool's Go request and result types
// and their struct tags. Results come back as structuredContent (and the
// same JSON as text content); failures are tool errors whose text is
// {"error": {"code", "message"}} with cairn's stable code.
package mcpserver
