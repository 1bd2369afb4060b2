package main

import (
	"fmt"
	"log/slog"

	"github.com/cairnhq/cairn"
	"github.com/spf13/cobra"
)

func newMigrateCmd(a *app) *cobra.Command {
	var from, to string
	var vectors bool
	var part int
	cmd := &cobra.Command{
		Use:   "migrate --from DATABASE --to DATABASE",
		Short: "Copy a database into an empty one: SQLite to PostgreSQL or back",
		Long: `Copy every record of one cairn database into another that is empty: a SQLite
file into PostgreSQL (--to postgres://...), PostgreSQL into a SQLite file, or
between two of either. The source is read in one snapshot (it may keep serving
meanwhile; later writes are not copied) and streamed to the target in parts
through one transaction. Before that transaction commits, it verifies (both
databases must hold the same counts, and their exports, what 'cairn export'
writes, the same SHA-256, which it prints) and copies the vectors of the
active embedder's space (--vectors=false leaves them to be embedded again by
the target's servers, or 'cairn reembed'). So the target gets all of it or,
if anything fails (verification and the vectors included), nothing, and a
failed migration can simply be run again. A progress bar shows on a terminal.

Connection strings may hold a password; it is never printed. The target's
retrieval indexes are built by its servers on their first search.`,
		Example: `  cairn migrate --from ~/.local/share/cairn/cairn.db --to postgres://cairn@db.internal/cairn?sslmode=verify-full
  cairn migrate --from postgres://cairn@db.internal/cairn --to /backups/cairn.db`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := cairn.SettingsFromEnv(a.getenv)
			if err != nil {
				return err
			}
			log, err := a.logger(slog.LevelWarn)
			if err != nil {
				return err
			}
			o := cairn.MigrateOptions{PartSize: part, Progress: a.stagedProgress(), Logger: log}
			if vectors {
				e, err := set.Embedder.New()
				if err != nil {
					return err
				}
				o.Space = e.Space()
			}
			rep, err := cairn.Migrate(cmd.Context(), from, to, o)
			a.finishProgress()
			if err != nil {
				return err
			}
			return a.show(rep, func() error {
				fmt.Fprintf(a.out, "migrated %d records from %s to %s in %.1f s\n", rep.Records, rep.From, rep.To, float64(rep.Millis)/1000)
				for _, s := range []string{"observations", "capsules", "summaries", "pins", "thoughts", "entities", "kg_observations", "kg_edges"} {
					if n := rep.Sections[s]; n > 0 {
						fmt.Fprintf(a.out, "  %-16s %d\n", s, n)
					}
				}
				code := 0
				for s, n := range rep.Sections {
					if len(s) > 5 && s[:5] == "code_" {
						code += n
					}
				}
				if code > 0 {
					fmt.Fprintf(a.out, "  %-16s %d\n", "code memory", code)
				}
				fmt.Fprintf(a.out, "verified: the same counts, and both exports have SHA-256 %s\n", rep.TargetDigest)
				if rep.Space != "" {
					fmt.Fprintf(a.out, "copied %d vectors of %s\n", rep.Vectors, rep.Space)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the database to copy: a SQLite file or a postgres:// URL")
	cmd.Flags().StringVar(&to, "to", "", "the empty database to copy into: a SQLite file (created) or a postgres:// URL")
	cmd.Flags().BoolVar(&vectors, "vectors", true, "copy the vectors of the active embedder's space")
	cmd.Flags().IntVar(&part, "part", 5000, "records per part sent to the target")
	cmd.MarkFlagRequired("from")
	cmd.MarkFlagRequired("to")
	return cmd
}
