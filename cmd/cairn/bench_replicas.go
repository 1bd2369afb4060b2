package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/bench"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newBenchReplicasCmd(a *app) *cobra.Command {
	var replicas, records, jsonOut string
	o := bench.ReplicasOptions{Clients: 16, Seconds: 30, WriteShare: 0.1, LagSamples: 200, Seed: 1}
	cmd := &cobra.Command{
		Use:   "replicas --postgres URL",
		Short: "Measure several cairn servers on one PostgreSQL database: throughput and replication lag",
		Long: `Generate --records of agent memory into a schema of its own on the PostgreSQL
database --postgres (dropped at the end), then, for each count in --replicas,
start that many 'cairn serve' processes on it, each with its own retrieval
index as on separate hosts, spread --clients concurrent callers over them for
--seconds (retrieves, and a --write-share of writes), and report calls per
second, the latency of each, and the CPU time per call of the servers, of
the callers and of the rest of the machine (the database, when it runs
there). Last, with two replicas, it writes a unique
word through one and polls the other's retrieve until it is returned,
--lag-samples times with each provider: the replication lag. With hybrid, the
default, the other replica's own index catches up from the database's change
log before it searches (the path replication takes); local-fts queries the
database directly.

On a machine with few cores the servers, the database and the callers share
them: more replicas then measure contention, not scale.`,
		Example: `  cairn bench replicas --postgres postgres://cairn@127.0.0.1/bench --replicas 1,2,4`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cairn.IsPostgres(o.Postgres) {
				return memory.Errorf(memory.CodeInvalidParams, "--postgres is required: a postgres:// URL of a database to work in")
			}
			var err error
			if o.Replicas, err = bench.ParseConcurrency(replicas); err != nil {
				return err
			}
			sizes, err := bench.ParseSizes(records)
			if err != nil || len(sizes) != 1 {
				return memory.Errorf(memory.CodeInvalidParams, "--records %q: want one record count", records)
			}
			o.Records = sizes[0]
			if o.Binary, err = os.Executable(); err != nil {
				return memory.Wrap(memory.CodeInternal, err, "finding the cairn binary: %v", err)
			}
			o.Log, o.Progress = a.err, a.stagedProgress()
			rep, err := bench.Replicas(cmd.Context(), o)
			a.finishProgress()
			if err != nil {
				return err
			}
			if jsonOut != "" {
				b, _ := json.MarshalIndent(rep, "", "  ")
				if err := a.writeOutput(jsonOut, append(b, '\n')); err != nil {
					return err
				}
			}
			fmt.Fprintf(a.out, "cairn bench replicas: %d CPUs (%s), %d records, %d callers, %g s a run, %.0f%% writes\n\n",
				rep.Machine.CPUs, rep.Machine.CPUModel, rep.Records, rep.Clients, rep.Seconds, 100*rep.WriteShare)
			return bench.WriteReplicasTable(a.out, rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Postgres, "postgres", "", "the PostgreSQL database to work in (postgres://...)")
	f.StringVar(&replicas, "replicas", "1,2,4", "numbers of servers to measure, comma-separated")
	f.StringVar(&records, "records", "20k", "records generated before measuring")
	f.IntVar(&o.Clients, "clients", o.Clients, "concurrent callers, spread over the servers")
	f.Float64Var(&o.Seconds, "seconds", o.Seconds, "seconds each measurement runs")
	f.Float64Var(&o.WriteShare, "write-share", o.WriteShare, "share of calls that write an observation (0 to 1)")
	f.IntVar(&o.LagSamples, "lag-samples", o.LagSamples, "writes timed for the replication lag, with each provider (0 skips)")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "generator seed")
	f.StringVar(&o.Dir, "dir", "", "directory for the servers' index files (default the system's temporary directory)")
	f.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file (- for standard output)")
	return cmd
}
