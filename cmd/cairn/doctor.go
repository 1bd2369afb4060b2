package main

import (
	"fmt"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newDoctorCmd(a *app) *cobra.Command {
	var req cairn.DoctorRequest
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the database and say how to fix what is wrong",
		Long: `Check the database file and its permissions, the schema version, SQLite's
integrity, references between records, whether the full-text indexes agree
with the records, the embedder, and the retrieval index's files (every
checksum, and how far behind the database they are). Each failed check says
how to fix it; --fix rebuilds the full-text indexes or the retrieval index
when they need it and embeds pending records. Exits 1 when a check fails.
Records waiting for a vector are a warning (WARN), not a failure: they are
found by words meanwhile, and cairn reembed, --fix, or a cairn serve or
cairn mcp left running (it embeds them in the background) finishes them.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			rep, err := eng.Doctor(cmd.Context(), req)
			if err != nil {
				return err
			}
			if err := a.show(rep, func() error {
				for _, f := range rep.Findings {
					mark := "ok  "
					switch {
					case f.OK:
					case f.Warning:
						mark = "WARN"
					default:
						mark = "FAIL"
					}
					fmt.Fprintf(a.out, "%s  %-28s %s\n", mark, f.Check, f.Detail)
					if !f.OK {
						fmt.Fprintf(a.out, "      fix: %s\n", f.Fix)
					}
				}
				for _, r := range rep.Repaired {
					fmt.Fprintf(a.out, "repaired: %s\n", r)
				}
				return nil
			}); err != nil {
				return err
			}
			if !rep.OK {
				return &silentError{memory.Errorf(memory.CodeDBError, "some checks failed")}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&req.Fix, "fix", false, "rebuild the full-text indexes or the retrieval index when they need it, and embed pending records")
	return cmd
}

// silentError ends the command with err's exit code, its findings already
// printed.
type silentError struct{ err error }

func (s *silentError) Error() string { return s.err.Error() }
func (s *silentError) Unwrap() error { return s.err }
