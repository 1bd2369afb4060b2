package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newBackupCmd(a *app) *cobra.Command {
	var req cairn.BackupRequest
	cmd := &cobra.Command{
		Use:   "backup DEST",
		Short: "Copy the database to a file, safely while cairn runs",
		Long: `Write a consistent copy of the database to DEST with SQLite's online backup
API: every page is copied in one read transaction, so other cairn processes
keep reading and writing meanwhile, and the copy holds every write
acknowledged before it started. Forgotten text, already overwritten on
disk, is not in it. The copy has mode 0600, and is written to a temporary
file first, so DEST is never half-written. An existing DEST is refused
unless --force is given.

The copy is a cairn database: check it with 'cairn --db DEST doctor', use it
with --db DEST or $CAIRN_DB. To restore, stop every cairn process using the
database, then move the copy into place (removing the old database's -wal
and -shm files if any are left). The retrieval index's files
(DATABASE-index/) are not copied: they are derived from the database, and
cairn writes them again (a restored database is never paired with an
index of another history).`,
		Example: `  cairn backup ~/backups/cairn-$(date +%F).db
  cairn --db ~/backups/cairn-2026-11-24.db doctor`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Dest = args[0]
			// A mistyped --db would otherwise open (create) an empty
			// database there and back that up.
			src := cairn.ResolvePath(a.dbFlag)
			if cairn.IsPostgres(src) {
				return cairn.ErrBackupUnsupported
			}
			if !fileExists(src) {
				return memory.Errorf(memory.CodeNotFound, "no database at %s: nothing to back up (--db or $CAIRN_DB names the database)", src)
			}
			return runEmit(a, func(eng *cairn.Engine) (cairn.BackupReport, error) {
				return eng.Backup(cmd.Context(), req)
			}, func(rep cairn.BackupReport) error {
				fmt.Fprintf(a.out, "backed up %s to %s (%s, %d ms)\n", a.eng.Path(), rep.Dest, mib(rep.Bytes), rep.Ms)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&req.Overwrite, "force", false, "replace DEST if it exists")
	return cmd
}

// mib renders a size in MiB, or KiB when small.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// fileExists says a file is at path (an error other than "does not exist"
// counts as there: opening it then says what is wrong).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}
