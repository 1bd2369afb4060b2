package main

import (
	"fmt"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newCodeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "code",
		Short: "Code memory: index a repository, hydrate code for a query, inspect, verify",
		Long: `Code memory keeps the code an agent has seen as entities (path::Symbol, or
path::Type.Method for methods), each with its text as a SHA-256-addressed
artifact, a state (PROPOSED, AUTHORITATIVE, SUPERSEDED, TOMBSTONED) and a
ledger of every transition. Hydration returns the entities a query needs
within a hard budget and remembers, per session, what each episode hydrated.
External Truth Verification checks that the disk still holds each entity.`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newCodeIndexCmd(a), newCodeHydrateCmd(a), newCodeInspectCmd(a), newCodeVerifyCmd(a), newCodeForgetCmd(a))
	return cmd
}

func newCodeIndexCmd(a *app) *cobra.Command {
	var req cairn.CodeIndexRequest
	cmd := &cobra.Command{
		Use:   "index PATH",
		Short: "Index a repository's source files into code entities",
		Long: `Index the source files under PATH: Go through go/ast; Python, JavaScript,
TypeScript, Rust, Java and C through tree-sitter; a file with syntax errors
that entities depend on, or in another language, through a regex fallback
(marked "regex", with a warning). Only files whose size or modification time changed are read again.
New and changed entities are PROPOSED and, with --approval implicit (the
default), promoted to AUTHORITATIVE when gates A (AST), B and C (the disk
agrees) pass; regex entities stay PROPOSED. Symbols gone from the disk are
TOMBSTONED. Hidden directories and node_modules are skipped; so are binary
files, files over the size limit (CAIRN_CODE_MAX_FILE_BYTES, default 1 MiB)
and symlinks leading outside PATH, each with its reason.`,
		Example: `  cairn code index .
  cairn code index --repo-id stdlib-http "$(go env GOROOT)/src/net/http"`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Root = args[0]
			eng, err := a.engine()
			if err != nil {
				return err
			}
			rep, err := eng.IndexCode(cmd.Context(), req, a.progress("indexing"))
			a.finishProgress()
			if err != nil {
				return err
			}
			return a.show(rep, func() error {
				fmt.Fprintf(a.out, "%s (%s), episode %s\n", rep.RepoID, rep.Root, rep.EpisodeID)
				fmt.Fprintf(a.out, "files      %d seen, %d read, %d unchanged, %d removed, %d skipped\n", rep.Files, rep.Changed, rep.Unchanged, rep.Removed, rep.Skipped)
				fmt.Fprintf(a.out, "entities   %d live, %d proposed, %d promoted, %d left proposed, %d tombstoned, %d by regex\n",
					rep.Entities, rep.Proposed, rep.Promoted, rep.Rejected, rep.Tombstoned, rep.Regex)
				for _, s := range rep.SkippedFiles {
					fmt.Fprintf(a.out, "skipped    %s: %s\n", s.Path, s.Reason)
				}
				for _, s := range rep.Fallbacks {
					fmt.Fprintf(a.out, "regex      %s: %s\n", s.Path, s.Reason)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.RepoID, "repo-id", "", "the repository's id (default: the directory's name)")
	f.StringVar(&req.Approval, "approval", "", "gate B's input for proposed entities: implicit (default), approved, none")
	f.StringVar(&req.EpisodeID, "episode", "", "record the gate evaluations in this episode (default: a new one)")
	f.StringVar(&req.SessionID, "session", "", "the session of a new episode (default code-index:REPO)")
	return cmd
}

func newCodeHydrateCmd(a *app) *cobra.Command {
	var req cairn.CodeHydrateRequest
	var content bool
	cmd := &cobra.Command{
		Use:   "hydrate QUERY...",
		Short: "Hydrate the code entities a query needs, within a budget",
		Long: `Return the code entities a query needs for an episode: those of files the
query names, then symbols it names, then every entity hydrated in an earlier
episode of the session, then lexical and semantic matches. Stale entities
(the disk changed) are left out and listed. --budget (tokens) and --entities
are hard limits; what does not fit is listed as pruned. The query is the
arguments, or standard input.`,
		Example: `  cairn code hydrate --session s1 --episode e1 "fix the timeout in server.go"
  cairn code hydrate --session s1 --episode e2 --budget 2000 --content "and ServeHTTP"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := a.readText(args, "query")
			if err != nil {
				return err
			}
			req.Query = q
			return runEmit(a, func(eng *cairn.Engine) (cairn.CodeHydrateResult, error) {
				return eng.Hydrate(cmd.Context(), req)
			}, func(res cairn.CodeHydrateResult) error {
				for i, b := range res.Blocks {
					fmt.Fprintf(a.out, "%2d. %-60s %5d tok  %s/%s  %s\n", i+1, b.EntityKey, b.TokenCount, b.Reason, b.Method, b.TriggeredBy)
					if content {
						fmt.Fprintln(a.out, indent(b.Content, "      "))
					}
				}
				for _, p := range res.Pruned {
					fmt.Fprintf(a.out, "pruned  %s (%d tok): %s\n", p.EntityKey, p.TokenCount, p.Reason)
				}
				for _, s := range res.Stale {
					fmt.Fprintf(a.out, "stale   %s: %s\n", s.EntityKey, s.Reason)
				}
				fmt.Fprintf(a.out, "-- episode %s (#%d of session %s), %s", res.EpisodeID, res.Seq, res.SessionID, res.BudgetUsed)
				if res.Exhausted {
					fmt.Fprint(a.out, ", budget exhausted")
				}
				fmt.Fprintf(a.out, "; semantic %s\n", res.Semantic)
				if !res.Tracking.OK {
					for _, p := range res.Tracking.Problems {
						fmt.Fprintf(a.out, "-- tracking damaged: %s\n", p)
					}
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.EpisodeID, "episode", "", "the episode (turn) id; a new id starts a new episode (required)")
	f.StringVar(&req.SessionID, "session", "", "the session id (required for a new episode)")
	f.StringVar(&req.RepoID, "repo-id", "", "the repository (default: the only one indexed)")
	f.IntVar(&req.BudgetTokens, "budget", 0, "token budget, 1 to 1000000 (default 8000)")
	f.IntVar(&req.BudgetEntities, "entities", 0, "entity budget, 1 to 10000 (default 50)")
	f.BoolVar(&content, "content", false, "print each entity's code")
	return cmd
}

func newCodeInspectCmd(a *app) *cobra.Command {
	var repoID string
	cmd := &cobra.Command{
		Use:   "inspect hydration EPISODE | entity KEY | gates EPISODE",
		Short: "Explain a hydration, an entity's history, or an episode's gate evaluations",
		Long: `The introspection endpoints from the command line:
  hydration EPISODE  why each entity was hydrated in an episode (GET /introspect/hydration/EPISODE)
  entity KEY         an entity's states, artifacts, verification and hydrations (GET /introspect/entity/KEY)
  gates EPISODE      gates A, B and C for every entity evaluated in an episode (GET /introspect/gates/EPISODE)`,
		Example: `  cairn code inspect hydration e1
  cairn code inspect entity 'server.go::Server.Serve'
  cairn code inspect gates ep_01J...`,
		Args:      usageArgs(cobra.ExactArgs(2)),
		ValidArgs: []string{"hydration", "entity", "gates"},
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			switch args[0] {
			case "hydration":
				v, err := eng.InspectHydration(ctx, cairn.EpisodeRef{EpisodeID: args[1]})
				if err != nil {
					return err
				}
				return a.show(v, func() error {
					fmt.Fprintf(a.out, "episode %s (#%d of session %s), %s tokens\n", v.EpisodeID, v.Seq, v.SessionID, v.BudgetUsed)
					for _, b := range v.HydrationBlocks {
						fmt.Fprintf(a.out, "  %-60s %5d tok  %s/%s  %s  %s\n", b.EntityKey, b.TokenCount, b.Reason, b.Method, b.TriggeredBy, b.HydratedAt)
					}
					printTracking(a, v.Tracking)
					return nil
				})
			case "entity":
				v, err := eng.InspectCodeEntity(ctx, cairn.CodeEntityRef{EntityKey: args[1], RepoID: repoID})
				if err != nil {
					return err
				}
				return a.show(v, func() error { printCodeEntity(a, v); return nil })
			case "gates":
				v, err := eng.InspectGates(ctx, cairn.EpisodeRef{EpisodeID: args[1]})
				if err != nil {
					return err
				}
				return a.show(v, func() error {
					for _, g := range v.EntitiesEvaluated {
						fmt.Fprintf(a.out, "%s: %s\n", g.EntityKey, g.FinalDecision)
						fmt.Fprintf(a.out, "  A %-5t %s (%s)\n  B %-5t %s\n  C %-5t %s\n", g.GateA.Passed, g.GateA.Reason, g.GateA.Method, g.GateB.Passed, g.GateB.Reason, g.GateC.Passed, g.GateC.Reason)
					}
					if len(v.EntitiesEvaluated) == 0 {
						fmt.Fprintf(a.out, "no gate evaluations in episode %s\n", v.EpisodeID)
					}
					return nil
				})
			}
			return memory.Errorf(memory.CodeInvalidParams, "inspect what? hydration, entity or gates (see %s --help)", cmd.CommandPath())
		},
	}
	cmd.Flags().StringVar(&repoID, "repo-id", "", "the repository, when several hold the entity key")
	return cmd
}

// printCodeEntity writes a code entity's view for a person.
func printCodeEntity(a *app, v cairn.CodeEntityView) {
	fmt.Fprintf(a.out, "%s  %s  %s %s lines %d-%d (%s)\n", v.EntityKey, v.CurrentState, v.Kind, v.Filepath, v.StartLine, v.EndLine, v.Method)
	fmt.Fprintf(a.out, "artifact  %s\n", v.CurrentArtifact)
	fmt.Fprintf(a.out, "etv       stale=%t exists=%t cache_hit=%t  %s\n", v.ETVStatus.IsStale, v.ETVStatus.DiskExists, v.ETVStatus.CacheHit, v.ETVStatus.Reason)
	for _, h := range v.StateHistory {
		from := "-"
		if h.FromState != nil {
			from = *h.FromState
		}
		fmt.Fprintf(a.out, "ledger    %s  %s -> %s  %.12s  %s  %s%s\n", h.Timestamp, from, h.ToState, h.ArtifactHash, h.EpisodeID, h.Reason, h.PromotionReason)
	}
	for _, h := range v.HydrationHistory {
		fmt.Fprintf(a.out, "hydrated  %s  episode %s (session %s)\n", h.HydratedAt, h.EpisodeID, h.SessionID)
	}
}

// printTracking writes whether a session's hydration history verifies.
func printTracking(a *app, t cairn.CodeTracking) {
	if t.OK {
		fmt.Fprintf(a.out, "tracking  ok (%d episodes, %d rows in the session)\n", t.Episodes, t.Rows)
		return
	}
	for _, p := range t.Problems {
		fmt.Fprintf(a.out, "tracking  DAMAGED: %s\n", p)
	}
}

func newCodeVerifyCmd(a *app) *cobra.Command {
	var req cairn.CodeVerifyRequest
	cmd := &cobra.Command{
		Use:   "verify [KEY...]",
		Short: "Check AUTHORITATIVE entities against the files on disk",
		Long: `External Truth Verification over every AUTHORITATIVE entity of a repository
(or the keys given): each file is read (under the repository root only),
the entity re-resolved and hashed, and compared with its artifact. Lists the
stale ones and exits 1 when there are any. Changes nothing: run
cairn code index to record what changed.`,
		Example: `  cairn code verify
  cairn code verify --json 'server.go::Server.Serve'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req.EntityKeys = args
			eng, err := a.engine()
			if err != nil {
				return err
			}
			rep, err := eng.VerifyCode(cmd.Context(), req)
			if err != nil {
				return err
			}
			if err := a.show(rep, func() error {
				for _, s := range rep.Stale {
					fmt.Fprintf(a.out, "stale  %s: %s\n", s.EntityKey, s.ETV.Reason)
				}
				fmt.Fprintf(a.out, "%s: %d checked, %d fresh, %d stale (cache hit rate %.0f%%)\n", rep.RepoID, rep.Checked, rep.Fresh, len(rep.Stale), 100*rep.Cache.HitRate)
				return nil
			}); err != nil {
				return err
			}
			if len(rep.Stale) > 0 {
				return &silentError{memory.Errorf(memory.CodeDBError, "%d stale entities", len(rep.Stale))}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&req.RepoID, "repo-id", "", "the repository (default: the only one indexed)")
	return cmd
}

func newCodeForgetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "forget HASH",
		Short: "Forget a code artifact: its text is erased from the vault",
		Long: `Forget an artifact of the code vault (code, a diff, a decision or a user
paste that must not be kept). Its text becomes "[redacted]" and is
overwritten on disk; its hash stays, so the ledger and the hydration
history still resolve. The entities whose artifact it is are no longer
searched or hydrated until their text is stored again (a proposal of the
same text, or cairn code index reading the changed file). Forgetting a
forgotten artifact changes nothing. HASH is the artifact's SHA-256 as
cairn code inspect entity shows it.`,
		Example: `  cairn code forget 7f8a9b...`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (memory.Artifact, error) {
				return eng.ForgetArtifact(cmd.Context(), cairn.ArtifactRef{Hash: args[0]})
			}, func(art memory.Artifact) error {
				fmt.Fprintf(a.out, "forgot artifact %s\n", art.Hash)
				return nil
			})
		},
	}
}
