package main

import (
	"context"
	"strings"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

// forgettable are the record types cairn forget redacts, in the order an
// id is looked up.
var forgettable = []string{"observation", "summary", "thought"}

func newForgetCmd(a *app) *cobra.Command {
	var typ string
	cmd := &cobra.Command{
		Use:   "forget ID...",
		Short: "Forget observations, summaries or thoughts: their text is erased",
		Long: `Forget records that must not be kept. Each one's content becomes "[redacted]"
(a thought also loses its tags); the original text is overwritten on disk
and in the write-ahead log, and leaves every index, including the retrieval
index's files, so no search finds it again. Its id, time, scope and links
(an observation's kind, provenance and place in its capsule; a summary's
capsule and evidence; a thought's origin and status) remain, so provenance
still resolves. Forgetting a forgotten record changes nothing. It cannot be
undone.

Each ID is looked up among observations, summaries and thoughts; --type
says which when an id names several. Knowledge-graph records are deleted
instead (cairn kg entity delete, cairn kg unobserve, cairn kg edge delete),
code artifacts forgotten with cairn code forget.`,
		Example: `  cairn forget obs_01J...
  cairn forget --type thought th_01J... th_01K...`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if typ != "" && !contains(forgettable, typ) {
				return memory.Errorf(memory.CodeInvalidParams, "--type %q: want %s", typ, strings.Join(forgettable, ", "))
			}
			eng, err := a.engine()
			if err != nil {
				return err
			}
			// Every id is resolved before anything is forgotten, so an
			// unknown one leaves every record as it was.
			types := make([]string, len(args))
			for i, id := range args {
				if types[i], err = forgettableType(cmd.Context(), eng, id, typ); err != nil {
					return err
				}
			}
			var out []any
			for i, id := range args {
				t := types[i]
				rec, err := forgetOne(cmd.Context(), eng, t, id)
				if err != nil {
					return err
				}
				a.say("forgot %s (%s)\n", id, t)
				out = append(out, rec)
			}
			return a.show(oneOrAll(out), noText)
		},
	}
	cmd.Flags().StringVar(&typ, "type", "", "the records' type: observation, summary or thought (default: found by id)")
	return cmd
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// forgettableType finds which kind of record id names (only, when typ is
// set, whether it names one of that type); an id that names several is a
// conflict.
func forgettableType(ctx context.Context, eng *cairn.Engine, id, typ string) (string, error) {
	var found []string
	for _, t := range forgettable {
		if typ != "" && t != typ {
			continue
		}
		var err error
		switch t {
		case "observation":
			_, err = eng.Observation(ctx, id)
		case "summary":
			_, err = eng.Summary(ctx, id)
		case "thought":
			_, err = eng.Thought(ctx, id)
		}
		switch {
		case err == nil:
			found = append(found, t)
		case !memory.IsCode(err, memory.CodeNotFound):
			return "", err
		}
	}
	switch {
	case len(found) == 0:
		// Nothing to forget: the engine says why (a malformed id is
		// invalid_params, an unknown one not_found) and changes nothing.
		t := typ
		if t == "" {
			t = "observation"
		}
		if _, err := forgetOne(ctx, eng, t, id); err != nil {
			if typ == "" && memory.IsCode(err, memory.CodeNotFound) {
				return "", memory.Errorf(memory.CodeNotFound, "no observation, summary or thought has id %q", id)
			}
			return "", err
		}
		return "", memory.Errorf(memory.CodeNotFound, "no %s has id %q", t, id)
	case len(found) == 1:
		return found[0], nil
	}
	return "", memory.Errorf(memory.CodeConflict, "id %q names a %s; say which with --type", id, strings.Join(found, " and a "))
}

func forgetOne(ctx context.Context, eng *cairn.Engine, typ, id string) (any, error) {
	switch typ {
	case "summary":
		return eng.ForgetSummary(ctx, id)
	case "thought":
		return eng.ForgetThought(ctx, id)
	}
	return eng.Forget(ctx, id)
}
