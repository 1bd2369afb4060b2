package main

import (
	"fmt"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newPinCmd(a *app) *cobra.Command {
	var req cairn.PinRequest
	var ttl, targetType string
	var scope memory.Scope
	cmd := &cobra.Command{
		Use:   "pin TARGET_ID",
		Short: "Pin an observation or summary so retrieval always returns it",
		Long: `Pin an observation or a summary. While active, a pin is returned by every
retrieval in its scope, ahead of the candidates, and no token budget evicts it.
The pin's scope is the target's own unless --scope says otherwise; a retrieval
sees the pin when every scope key the retrieval names matches the pin's.`,
		Example: `  cairn pin obs_01J... --reason "team decision on idempotency" --ttl 30d
  cairn pin sum_01J... --scope repo=/src/shop`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.TargetID = args[0]
			req.TargetType = memory.TargetType(targetType)
			if ttl != "" {
				d, err := parseTTL(ttl)
				if err != nil {
					return memory.Errorf(memory.CodeInvalidParams, "--ttl: %v", err)
				}
				secs := int64(d / time.Second)
				req.TTLSeconds = &secs
			}
			if cmd.Flags().Changed("scope") {
				req.ScopeIDs = &scope
			}
			return runEmit(a, func(eng *cairn.Engine) (memory.Pin, error) {
				return eng.Pin(cmd.Context(), req)
			}, func(p memory.Pin) error {
				exp := "no expiry"
				if p.ExpiresAt != nil {
					exp = "expires " + fmtTime(*p.ExpiresAt)
				}
				fmt.Fprintf(a.out, "pinned %s %s as %s (%s%s)\n", p.TargetType, p.TargetID, p.ID, exp, scopeSuffix(p.Scope))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Reason, "reason", "", "why it matters")
	f.StringVar(&ttl, "ttl", "", "time to live (90m, 2h, 7d); default: no expiry")
	f.Var(scopeFlag{&scope}, "scope", "where the pin shows (default: the target's scope)")
	f.StringVar(&targetType, "type", "", "target type, observation or summary (default: found by id)")
	f.StringVar(&req.ID, "id", "", "id to use (default: a new pin_ id)")
	f.StringVar(&req.IdempotencyKey, "idempotency-key", "", "key of this write: running the command again with the same key returns the first result instead of writing twice")
	return cmd
}

func newUnpinCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "unpin PIN_ID",
		Short: "Remove a pin",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			if err := eng.Unpin(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.show(map[string]string{"unpinned": args[0]}, func() error {
				fmt.Fprintf(a.out, "unpinned %s\n", args[0])
				return nil
			})
		},
	}
}

func newShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show an observation, summary or capsule by id",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			ctx, id := cmd.Context(), args[0]
			var rec any
			if o, err := eng.Observation(ctx, id); err == nil {
				rec = o
			} else if s, err := eng.Summary(ctx, id); err == nil {
				rec = s
			} else if c, err := eng.Capsule(ctx, id); err == nil {
				rec = c
			} else if !memory.IsCode(err, memory.CodeNotFound) {
				return err
			} else {
				return memory.Errorf(memory.CodeNotFound, "no observation, summary or capsule has id %q", id)
			}
			return a.show(rec, func() error {
				switch r := rec.(type) {
				case memory.Observation:
					fmt.Fprintf(a.out, "%s  observation  %s  %s%s\n", r.ID, r.Kind, fmtTime(r.TS), scopeSuffix(r.Scope))
					fmt.Fprintf(a.out, "provenance: %s\n", r.Provenance)
					fmt.Fprintln(a.out, indent(r.Content, "  "))
				case memory.Summary:
					fmt.Fprintf(a.out, "%s  summary of %s  confidence %.2f  %s%s\n", r.ID, r.CapsuleID, r.Confidence, fmtTime(r.CreatedAt), scopeSuffix(r.Scope))
					if len(r.EvidenceRefs) > 0 {
						fmt.Fprintf(a.out, "evidence: %v\n", r.EvidenceRefs)
					}
					fmt.Fprintln(a.out, indent(r.Content, "  "))
				case memory.Capsule:
					return newCapsuleShowCmd(a).RunE(cmd, args)
				}
				return nil
			})
		},
	}
}
