// Command cairn is the command-line face of cairn, a local-first memory and
// retrieval engine for AI agents: record observations, group them into
// capsules, pin and forget, retrieve the memories that matter for a query,
// and import or export a database.
//
// Run `cairn --help` for the commands; `cairn demo` shows retrieval on a
// bundled sample without touching your own database.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
