package main

import (
	"bytes"
	"fmt"
	"github.com/cairnhq/cairn/internal/text"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/sample"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newDemoCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "demo [QUERY...]",
		Short: "Retrieve from a bundled sample memory (leaves your database alone)",
		Long: `Load a small bundled memory of a coding agent's two sessions into a temporary
database and retrieve from it: with a query, that query; without, two
examples. Nothing outside the temporary database is touched.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := os.MkdirTemp("", "cairn-demo-")
			if err != nil {
				return memory.Wrap(memory.CodeInternal, err, "making a temporary directory: %v", pathless(err))
			}
			defer os.RemoveAll(dir)
			now := time.UnixMilli(sample.Now)
			eng, err := cairn.Open(filepath.Join(dir, "demo.db"), &cairn.Options{Now: func() time.Time { return now }})
			if err != nil {
				return err
			}
			defer eng.Close()
			rep, err := eng.Import(cmd.Context(), bytes.NewReader(sample.AgentSessions), cairn.ImportOptions{})
			if err != nil {
				return err
			}
			repo := memory.Scope{RepoID: "github.com/acme/shop"}
			reqs := []cairn.RetrieveRequest{
				{Query: "why did checkout say session expired?", ScopeIDs: repo},
				{Query: "are customers charged twice when a webhook is retried?", ScopeIDs: memory.Scope{SessionID: "s2", RepoID: repo.RepoID}, TokenBudget: ptr(300)},
			}
			if len(args) > 0 {
				reqs = []cairn.RetrieveRequest{{Query: strings.Join(args, " "), ScopeIDs: repo}}
			}
			var results []cairn.RetrieveResult
			a.say("demo database: %d observations, %d capsules, %d summaries and %s from two sessions in %s\n",
				rep.Observations, rep.Capsules, rep.Summaries, text.Plural(rep.Pins, "pin"), repo.RepoID)
			for _, req := range reqs {
				res, err := eng.Retrieve(cmd.Context(), req)
				if err != nil {
					return err
				}
				results = append(results, res)
				var b strings.Builder
				fmt.Fprintf(&b, "\n$ cairn retrieve --scope %s%s %q\n", req.ScopeIDs, budgetFlag(req.TokenBudget), req.Query)
				printRetrieval(&b, res, false)
				a.say("%s", b.String())
			}
			return a.show(results, noText)
		},
	}
}

func budgetFlag(b *int) string {
	if b == nil {
		return ""
	}
	return fmt.Sprintf(" --token-budget %d", *b)
}

func ptr[T any](v T) *T { return &v }
