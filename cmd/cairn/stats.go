package main

import (
	"fmt"

	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newStatsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Show what the database holds",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			st, err := eng.Stats(cmd.Context())
			if err != nil {
				return err
			}
			if a.json {
				return a.emit(st)
			}
			printStats(a, st)
			return nil
		},
	}
}

func printStats(a *app, st memory.Stats) {
	fmt.Fprintf(a.out, "database      %s (%.1f MiB, schema %d)\n", st.Path, float64(st.SizeBytes)/(1<<20), st.SchemaVersion)
	fmt.Fprintf(a.out, "observations  %d (%d forgotten, %d indexed)\n", st.Observations, st.Redacted, st.IndexedObservations)
	fmt.Fprintf(a.out, "capsules      %d (%d open)\n", st.Capsules, st.OpenCapsules)
	fmt.Fprintf(a.out, "summaries     %d (%d indexed)\n", st.Summaries, st.IndexedSummaries)
	fmt.Fprintf(a.out, "pins          %d\n", st.Pins)
}
