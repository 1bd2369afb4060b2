package main

import (
	"fmt"
	"io"
	"os"

	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newExportCmd(a *app) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write every record as JSON Lines (re-importable)",
		Long: `Write every record (observations, capsules with their membership, summaries,
pins, thoughts, knowledge-graph entities, entity observations and edges) as
JSON Lines, one {"<type>": {...}} object per line, to standard output or
--output. 'cairn import' reads it back into an equal database. Vectors are
left out: they are derived, and the import embeds the records again.`,
		Example: `  cairn export --output backup.jsonl`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			var w io.Writer = a.out
			if output != "" && output != "-" {
				f, err := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
				if err != nil {
					return memory.Wrap(memory.CodeInvalidParams, err, "--output %s: %v", output, pathless(err))
				}
				defer f.Close()
				w = f
			}
			n, err := eng.Export(cmd.Context(), w)
			if err != nil {
				return err
			}
			if output != "" && output != "-" {
				fmt.Fprintf(a.err, "exported %d records to %s\n", n, output)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "file to write (default standard output)")
	return cmd
}
