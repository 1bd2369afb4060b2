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
	"runtime/pprof"
	"syscall"
)

func main() {
	tuneMemory()
	if path := os.Getenv("CAIRN_CPUPROFILE"); path != "" {
		// A CPU profile of the whole run, for performance reports.
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if code != 0 {
		pprof.StopCPUProfile()
		os.Exit(code)
	}
}
