package main

import (
	"fmt"
	"github.com/cairnhq/cairn"
	"strings"

	"github.com/spf13/cobra"
)

func newStatusCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "status",
		Aliases: []string{"stats"},
		Short:   "Show the database, what it holds, and the tools offered",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (cairn.Status, error) {
				return eng.Status(cmd.Context())
			}, func(st cairn.Status) error {
				db := st.Database
				fmt.Fprintf(a.out, "cairn         %s\n", st.Version)
				fmt.Fprintf(a.out, "database      %s (%.1f MiB, schema %d)\n", db.Path, float64(db.SizeBytes)/(1<<20), db.SchemaVersion)
				fmt.Fprintf(a.out, "observations  %d (%d forgotten, %d indexed)\n", db.Observations, db.Redacted, db.IndexedObservations)
				fmt.Fprintf(a.out, "capsules      %d (%d open)\n", db.Capsules, db.OpenCapsules)
				fmt.Fprintf(a.out, "summaries     %d (%d forgotten, %d indexed)\n", db.Summaries, db.RedactedSummaries, db.IndexedSummaries)
				fmt.Fprintf(a.out, "pins          %d\n", db.Pins)
				fmt.Fprintf(a.out, "thoughts      %d (%d forgotten)\n", db.Thoughts, db.RedactedThoughts)
				fmt.Fprintf(a.out, "graph         %d entities, %d facts, %d edges\n", db.Entities, db.EntityObservations, db.Edges)
				fmt.Fprintf(a.out, "code          %d entities, %d episodes\n", db.CodeEntities, db.CodeEpisodes)
				fmt.Fprintf(a.out, "retrieval     %s\n", st.Provider)
				e := st.Embedder
				fmt.Fprintf(a.out, "embedder      %s: %d records embedded, %d pending, %d vectors of other spaces\n", e.Space, e.InSpace, e.Pending, e.OtherSpaces)
				if e.Pending > 0 {
					fmt.Fprintln(a.out, "              run cairn reembed to embed the pending records")
				}
				voice := "disabled (SURR_ENABLE_INNER_VOICE=1 enables it)"
				if st.InnerVoice {
					voice = "enabled"
				}
				fmt.Fprintf(a.out, "inner voice   %s\n", voice)
				fmt.Fprintf(a.out, "tools         %s\n", strings.Join(st.Tools, ", "))
				return nil
			})
		},
	}
}
