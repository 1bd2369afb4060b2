package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newImportCmd(a *app) *cobra.Command {
	var from string
	var scope memory.Scope
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import records from JSON Lines or a parity dataset (all or nothing per file)",
		Long: `Import records. Each file is written in one transaction: all of it, or, if
any record is invalid or clashes with the database, none of it. "-" reads
standard input. Formats, detected from the content:

  JSON Lines   one object per line: an observation to record, with the fields
               of 'cairn log' ({"kind","content","scopeIds","provenance","ts",
               "capsuleId","id"}), or a record as 'cairn export' writes it
               ({"observation":{...}}, {"capsule":{...}}, {"summary":{...}},
               {"pin":{...}}, {"thought":{...}}, {"kg_entity":{...}},
               {"kg_observation":{...}}, {"kg_edge":{...}}).
  dataset.json a kindling-parity dataset (format kindling-parity-dataset/v1).

Records are checked as the commands that create them check them ('cairn
think', 'cairn kg ...'). An id already in the database or twice in the file,
and an entity observation or edge naming an entity that is neither, fail
the file with the line at fault. Vectors are not part of the file: what is
imported is embedded afterwards (or left pending for 'cairn reembed').

With --from, the file is another memory system's, and importing it again
writes nothing new (records already imported are left as they are):

  mcp-memory   the official MCP memory server's memory file (JSON Lines of
               entities and relations): entities, their observations and
               relations become knowledge-graph entities, facts and edges.
  kindling     Kindling's export: its export bundle (bundleVersion 1.0) or
               the store's exportDatabase() dataset (version 1.0), or the
               store file itself (kindling.db, read in place, read-only):
               observations, capsules, summaries and pins, ids and times kept.
  mem0         mem0 memories (getAll()'s {"results": [...]}, a list, or one
               a line): thoughts (origin logged), with user, agent and run as
               scope, categories and metadata as tags, and their times.

A report says what was mapped where, what was already there and what was
left out.`,
		Example: `  cairn import memories.jsonl
  cairn export | cairn --db /tmp/copy.db import -
  cairn import --from mcp-memory ~/.mcp/memory.jsonl
  cairn import --from kindling kindling-export.json
  cairn import --from mem0 --scope user=alice mem0-memories.json`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			if from != "" {
				return a.importPeer(cmd, eng, from, scope, args)
			}
			var reports []cairn.ImportReport
			for _, name := range args {
				rep, err := a.importFile(cmd, eng, name)
				if err != nil {
					return prefixed(err, name)
				}
				reports = append(reports, rep)
				a.say("%s", importText(name, rep))
			}
			return a.show(reports, noText)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the file is another memory system's: mcp-memory, kindling or mem0")
	cmd.Flags().Var(scopeFlag{&scope}, "scope", "with --from: scope for records the peer keeps none for (session=,repo=,agent=,user=)")
	return cmd
}

// importPeer imports files of another memory system and reports what went
// where.
func (a *app) importPeer(cmd *cobra.Command, eng *cairn.Engine, from string, scope memory.Scope, files []string) error {
	var reports []cairn.PeerImportReport
	for _, name := range files {
		opts := cairn.PeerImportOptions{Scope: scope, EmbedProgress: a.progress("embedding " + name)}
		var rep cairn.PeerImportReport
		var err error
		if name == "-" {
			rep, err = eng.ImportPeer(cmd.Context(), from, a.in, opts)
		} else {
			f, oerr := os.Open(name)
			if oerr != nil {
				return prefixed(memory.Wrap(memory.CodeInvalidParams, oerr, "cannot open: %v", pathless(oerr)), name)
			}
			defer f.Close()
			rep, err = eng.ImportPeerFile(cmd.Context(), from, f, opts)
		}
		a.finishProgress()
		if err != nil {
			return prefixed(err, name)
		}
		reports = append(reports, rep)
		a.say("%s", peerImportText(name, from, rep))
	}
	return a.show(reports, noText)
}

func sortedIntKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sectionsOf(m map[memory.Section]int) []memory.Section {
	out := make([]memory.Section, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (a *app) importFile(cmd *cobra.Command, eng *cairn.Engine, name string) (cairn.ImportReport, error) {
	var r io.Reader = a.in
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return cairn.ImportReport{}, memory.Wrap(memory.CodeInvalidParams, err, "cannot open: %v", pathless(err))
		}
		defer f.Close()
		r = f
	}
	opts := cairn.ImportOptions{Progress: a.progress("importing " + name)}
	if embed := a.progress("embedding " + name); embed != nil {
		embedding := false
		opts.EmbedProgress = func(done, total int) {
			if !embedding { // the import's bar is done
				a.finishProgress()
				embedding = true
			}
			embed(done, total)
		}
	}
	rep, err := eng.Import(cmd.Context(), r, opts)
	a.finishProgress()
	return rep, err
}

// pathless is an *os.PathError's reason without the path (the caller names
// the file already).
func pathless(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// prefixed puts "name: " before a typed error's message.
func prefixed(err error, name string) error {
	pub := memory.Public(err)
	return &memory.Error{Code: pub.Code, Message: name + ": " + pub.Message, Err: err}
}

// importText is what an import of a file wrote, for a person.
func importText(name string, rep cairn.ImportReport) string {
	var b strings.Builder
	graph := ""
	if rep.Thoughts+rep.Entities+rep.EntityObservations+rep.Edges > 0 {
		graph = fmt.Sprintf(", %d thoughts, %d entities, %d entity observations, %d edges",
			rep.Thoughts, rep.Entities, rep.EntityObservations, rep.Edges)
	}
	if rep.Code > 0 {
		graph += fmt.Sprintf(", %d code-memory records", rep.Code)
	}
	fmt.Fprintf(&b, "%s: imported %d observations, %d capsules, %d summaries, %d pins%s (%s)\n",
		name, rep.Observations, rep.Capsules, rep.Summaries, rep.Pins, graph, rep.Format)
	for _, s := range rep.Skipped {
		fmt.Fprintf(&b, "  skipped %s\n", s)
	}
	return b.String()
}

// peerImportText is what an import from another memory system mapped
// where, for a person.
func peerImportText(name, from string, rep cairn.PeerImportReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s):\n", name, from)
	for _, k := range sortedIntKeys(rep.Mapped) {
		fmt.Fprintf(&b, "  %-40s %d\n", k, rep.Mapped[k])
	}
	total, present := 0, 0
	for _, n := range rep.Imported {
		total += n
	}
	for _, n := range rep.Present {
		present += n
	}
	fmt.Fprintf(&b, "  imported %d records", total)
	for _, s := range sectionsOf(rep.Imported) {
		fmt.Fprintf(&b, ", %d %s", rep.Imported[s], s)
	}
	fmt.Fprintf(&b, "; %d already in the database\n", present)
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}
