package main

import (
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "cairn",
		Short: "Local-first memory and retrieval for AI agents",
		Long: `cairn keeps what agents observe (tool calls, commands, diffs, errors, messages)
in a local SQLite database, groups it into session capsules with summaries,
pins what matters, forgets on request, and retrieves the few memories that
matter for a query: pins, the current session summary, and ranked candidates
with provenance, inside a token budget, deterministically. It also keeps the
agent's thoughts and a knowledge graph, recalled by meaning (cairn inner-voice).

The database is $CAIRN_DB, or $XDG_DATA_HOME/cairn/cairn.db
(~/.local/share/cairn/cairn.db); --db overrides both. A postgres:// URL
puts it in PostgreSQL instead, shared by any number of cairn servers
(docs/postgres.md). $CAIRN_MAX_CONTENT_BYTES
caps the content of one record (default 1 MiB).

Try it without touching your database: cairn demo`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Past argument and flag checks: an untyped error from here on is
		// cairn's own, not a usage error.
		PersistentPreRun: func(*cobra.Command, []string) { a.started = true },
		Version:          readBuildInfo().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().StringVar(&a.dbFlag, "db", "", "database file, or postgres://user@host/db URL (default $CAIRN_DB or $XDG_DATA_HOME/cairn/cairn.db)")
	root.PersistentFlags().StringVar(&a.nowFlag, "now", "", "fix the clock (RFC 3339, YYYY-MM-DD or Unix ms) for deterministic results")
	root.PersistentFlags().BoolVar(&a.json, "json", false, "write JSON instead of text")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return memory.Errorf(memory.CodeInvalidParams, "%v (see %s --help)", err, cmd.CommandPath())
	})
	root.AddGroup(&cobra.Group{ID: "record", Title: "Record memories:"},
		&cobra.Group{ID: "recall", Title: "Recall:"},
		&cobra.Group{ID: "data", Title: "Data:"},
		&cobra.Group{ID: "serve", Title: "Serve agents and services:"})
	for _, c := range []*cobra.Command{newLogCmd(a), newCapsuleCmd(a), newPinCmd(a), newUnpinCmd(a), newForgetCmd(a),
		newThinkCmd(a), newKGCmd(a), newCodeCmd(a)} {
		c.GroupID = "record"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{newRetrieveCmd(a), newInnerVoiceCmd(a), newShowCmd(a), newHistoryCmd(a), newThoughtsCmd(a), newDemoCmd(a)} {
		c.GroupID = "recall"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{newImportCmd(a), newExportCmd(a), newBackupCmd(a), newStatusCmd(a), newDoctorCmd(a), newReembedCmd(a),
		newIndexCmd(a), newConfigCmd(a), newBenchCmd(a), newMaintenanceCmd(a), newMigrateCmd(a)} {
		c.GroupID = "data"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{newMCPCmd(a), newServeCmd(a), newUICmd(a), newCallCmd(a), newToolsCmd(a), newHooksCmd(a), newHookCmd(a), newVersionCmd(a)} {
		c.GroupID = "serve"
		root.AddCommand(c)
	}
	return root
}
