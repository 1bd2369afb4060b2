// Package bench holds cairn's whole-system benchmarks behind `cairn bench`:
// a concurrent load generator and the protocol benchmark, which measures
// retrieve through the library, the HTTP API, MCP over streamable HTTP and
// MCP over stdio against real `cairn serve` and `cairn mcp` processes.
package bench
