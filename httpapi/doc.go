// Package httpapi serves cairn over HTTP: every cairn.Tool as a JSON route
// under /v1/ (bodies and results identical to the MCP tools'), bulk import
// and export, /healthz, and /metrics in the Prometheus text format. It holds
// no business logic: requests decode with cairn.Tool.Decode and run with
// cairn.Engine.Call.
//
// Every request passes the same guards: a bearer token when one is set
// (compared in constant time), DNS-rebinding and cross-origin protection,
// a body size limit and a time limit. Other handlers (the MCP endpoint) can
// be mounted behind the same guards.
package httpapi
