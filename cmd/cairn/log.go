package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func kindNames() string {
	names := make([]string, len(memory.Kinds))
	for i, k := range memory.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func newLogCmd(a *app) *cobra.Command {
	var req cairn.LogRequest
	var kind, prov, ts string
	cmd := &cobra.Command{
		Use:   "log [content...]",
		Short: "Record an observation",
		Long: `Record an observation: something that happened during an agent's work.
The content is the arguments, or standard input when there are none (or "-").

The observation joins --capsule, or else the open capsule of its session.
Kinds: ` + kindNames() + `.`,
		Example: `  cairn log --scope session=s1,repo=/src/shop "go test ./... -> ok"
  git diff | cairn log --kind file_diff --scope repo=/src/shop -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := a.readText(args, "content")
			if err != nil {
				return err
			}
			req.Content = text
			req.Kind = memory.Kind(kind)
			if prov != "" {
				req.Provenance = json.RawMessage(prov)
			}
			if ts != "" {
				t, err := parseTime(ts)
				if err != nil {
					return memory.Errorf(memory.CodeInvalidParams, "--ts: %v", err)
				}
				ms := t.UnixMilli()
				req.TS = &ms
			}
			return runEmit(a, func(eng *cairn.Engine) (memory.Observation, error) {
				return eng.Log(cmd.Context(), req)
			}, func(o memory.Observation) error {
				fmt.Fprintf(a.out, "logged %s (%s%s)\n", o.ID, o.Kind, scopeSuffix(o.Scope))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&kind, "kind", string(memory.KindMessage), "observation kind: "+kindNames())
	f.Var(scopeFlag{&req.ScopeIDs}, "scope", "scope as session=..,repo=..,agent=..,user=.. (repeatable)")
	f.StringVar(&req.CapsuleID, "capsule", "", "capsule to join (default: the open capsule of the session)")
	f.StringVar(&prov, "provenance", "", `provenance as a JSON object, e.g. '{"tool":"grep"}'`)
	f.StringVar(&ts, "ts", "", "when it happened (RFC 3339 or Unix ms; default now)")
	f.StringVar(&req.ID, "id", "", "id to use (default: a new obs_ id)")
	f.StringVar(&req.IdempotencyKey, "idempotency-key", "", "key of this write: running the command again with the same key returns the first result instead of writing twice")
	return cmd
}

// scopeFlag lets --scope accumulate key=value pairs into a memory.Scope.
type scopeFlag struct{ s *memory.Scope }

func (f scopeFlag) String() string {
	if f.s == nil {
		return ""
	}
	return f.s.String()
}
func (f scopeFlag) Set(v string) error { return f.s.Set(v) }
func (f scopeFlag) Type() string       { return "scope" }

func scopeSuffix(s memory.Scope) string {
	if s.IsZero() {
		return ""
	}
	return ", " + s.String()
}
