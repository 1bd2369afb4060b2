package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cairnhq/cairn/internal/text"
	"strings"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newKGCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kg",
		Short: "Keep a knowledge graph: entities, facts about them, and edges",
		Long: `The knowledge graph holds entities (people, projects, services, decisions,
concepts), facts observed about them, and edges between them. Everything in
it is embedded for semantic recall by 'cairn inner-voice'.

Where a command takes an ENTITY, give its id (ent_...) or its exact name
(any case); a name that several entities share is refused: use the id.`,
		Example: `  cairn kg entity create auth-service --type service --data '{"team":"identity"}'
  cairn kg observe auth-service "tokens expire when clocks drift by more than 5s"
  cairn kg entity create ntp --type daemon
  cairn kg edge create auth-service depends_on ntp
  cairn kg show auth-service
  cairn kg list --type service`,
		Args: usageArgs(cobra.NoArgs),
	}
	entity := &cobra.Command{Use: "entity", Short: "Create, update or delete entities", Args: usageArgs(cobra.NoArgs)}
	entity.AddCommand(newKGEntityCreateCmd(a), newKGEntityUpdateCmd(a), newKGEntityDeleteCmd(a))
	edge := &cobra.Command{Use: "edge", Short: "Create, delete or list edges between entities", Args: usageArgs(cobra.NoArgs)}
	edge.AddCommand(newKGEdgeCreateCmd(a), newKGEdgeDeleteCmd(a), newKGEdgeListCmd(a))
	cmd.AddCommand(entity, edge, newKGObserveCmd(a), newKGUnobserveCmd(a), newKGShowCmd(a), newKGListCmd(a), newKGCandidatesCmd(a))
	return cmd
}

// entityID resolves an entity given by id or by exact name.
func entityID(ctx context.Context, eng *cairn.Engine, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if strings.HasPrefix(ref, "ent_") {
		return ref, nil
	}
	list, err := eng.Entities(ctx, cairn.EntitiesRequest{Name: ref, Limit: 2})
	if err != nil {
		return "", err
	}
	switch len(list.Entities) {
	case 0:
		return "", memory.Errorf(memory.CodeNotFound, "no entity is named %q", ref)
	case 1:
		return list.Entities[0].ID, nil
	}
	return "", memory.Errorf(memory.CodeConflict, "several entities are named %q; give the id (cairn kg list --name %q)", ref, ref)
}

func dataFlag(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func newKGEntityCreateCmd(a *app) *cobra.Command {
	var req cairn.EntityRequest
	var data string
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Add an entity",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Name, req.Data = args[0], dataFlag(data)
			return runEmit(a, func(eng *cairn.Engine) (memory.KGEntity, error) {
				return eng.CreateEntity(cmd.Context(), req)
			}, func(ent memory.KGEntity) error {
				fmt.Fprintf(a.out, "entity %s %s (%s)\n", ent.ID, ent.Name, ent.Type)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Type, "type", "", "its type, e.g. person, project, service, library, decision (required)")
	f.StringVar(&data, "data", "", `properties as a JSON object, e.g. '{"team":"identity"}'`)
	f.Var(scopeFlag{&req.ScopeIDs}, "scope", "scope as session=..,repo=..,agent=..,user=.. (repeatable)")
	f.StringVar(&req.EntityID, "id", "", "id to use (default: a new ent_ id)")
	return cmd
}

func newKGEntityUpdateCmd(a *app) *cobra.Command {
	var req cairn.EntityRequest
	var data string
	cmd := &cobra.Command{
		Use:   "update ENTITY",
		Short: "Change an entity's name, type or data (what is not given stays)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (out memory.KGEntity, err error) {
				if req.EntityID, err = entityID(cmd.Context(), eng, args[0]); err != nil {
					return out, err
				}
				req.Data = dataFlag(data)
				return eng.UpdateEntity(cmd.Context(), req)
			}, func(ent memory.KGEntity) error {
				fmt.Fprintf(a.out, "entity %s %s (%s)\n", ent.ID, ent.Name, ent.Type)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Name, "name", "", "new name")
	f.StringVar(&req.Type, "type", "", "new type")
	f.StringVar(&data, "data", "", "new properties (a JSON object; replaces the old ones)")
	return cmd
}

func newKGEntityDeleteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ENTITY",
		Short: "Delete an entity with its facts and edges",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (out cairn.Deleted, err error) {
				id, err := entityID(cmd.Context(), eng, args[0])
				if err != nil {
					return out, err
				}
				return eng.DeleteEntity(cmd.Context(), id)
			}, func(d cairn.Deleted) error {
				fmt.Fprintf(a.out, "deleted %s\n", d.Deleted)
				return nil
			})
		},
	}
}

func newKGObserveCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "observe ENTITY [fact...]",
		Short: "Record a fact about an entity",
		Long:  `Record a fact about an entity. The fact is the arguments after the entity, or standard input when there are none (or "-").`,
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := a.readText(args[1:], "fact")
			if err != nil {
				return err
			}
			return runEmit(a, func(eng *cairn.Engine) (out memory.KGObservation, err error) {
				id, err := entityID(cmd.Context(), eng, args[0])
				if err != nil {
					return out, err
				}
				return eng.Observe(cmd.Context(), cairn.ObserveRequest{EntityID: id, Content: text})
			}, func(o memory.KGObservation) error {
				fmt.Fprintf(a.out, "observed %s on %s\n", o.ID, o.EntityID)
				return nil
			})
		},
	}
}

func newKGUnobserveCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "unobserve KGO_ID",
		Short: "Delete a fact recorded about an entity",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (cairn.Deleted, error) {
				return eng.DeleteKGObservation(cmd.Context(), args[0])
			}, func(d cairn.Deleted) error {
				fmt.Fprintf(a.out, "deleted %s\n", d.Deleted)
				return nil
			})
		},
	}
}

func newKGEdgeCreateCmd(a *app) *cobra.Command {
	var data string
	cmd := &cobra.Command{
		Use:   "create SOURCE RELATION TARGET",
		Short: "Relate two entities",
		Args:  usageArgs(cobra.ExactArgs(3)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (out memory.KGEdge, err error) {
				src, err := entityID(cmd.Context(), eng, args[0])
				if err != nil {
					return out, err
				}
				dst, err := entityID(cmd.Context(), eng, args[2])
				if err != nil {
					return out, err
				}
				return eng.CreateEdge(cmd.Context(), cairn.EdgeRequest{Source: src, Target: dst, Relation: args[1], Data: dataFlag(data)})
			}, func(g memory.KGEdge) error {
				fmt.Fprintf(a.out, "edge %s: %s %s %s\n", g.ID, g.Source, g.Relation, g.Target)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "properties as a JSON object")
	return cmd
}

func newKGEdgeDeleteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "delete EDGE_ID",
		Short: "Delete an edge",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (cairn.Deleted, error) {
				return eng.DeleteEdge(cmd.Context(), args[0])
			}, func(d cairn.Deleted) error {
				fmt.Fprintf(a.out, "deleted %s\n", d.Deleted)
				return nil
			})
		},
	}
}

func newKGEdgeListCmd(a *app) *cobra.Command {
	var req cairn.EdgesRequest
	var entity string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List edges",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (out cairn.EdgeList, err error) {
				if entity != "" {
					if req.EntityID, err = entityID(cmd.Context(), eng, entity); err != nil {
						return out, err
					}
				}
				return eng.Edges(cmd.Context(), req)
			}, func(list cairn.EdgeList) error {
				for _, g := range list.Edges {
					fmt.Fprintf(a.out, "%s  %s %s %s\n", g.ID, g.Source, g.Relation, g.Target)
				}
				if len(list.Edges) == 0 {
					fmt.Fprintln(a.out, "no edges")
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&entity, "entity", "", "only edges touching this entity")
	cmd.Flags().IntVar(&req.Limit, "limit", 100, "most edges to list (1 to 1000)")
	return cmd
}

func newKGShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show ENTITY",
		Short: "Show an entity with its facts and edges",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (out cairn.EntityView, err error) {
				id, err := entityID(cmd.Context(), eng, args[0])
				if err != nil {
					return out, err
				}
				return eng.Entity(cmd.Context(), id)
			}, func(v cairn.EntityView) error {
				e := v.Entity
				fmt.Fprintf(a.out, "%s  %s (%s)  %s%s\n", e.ID, e.Name, e.Type, fmtTime(e.UpdatedAt), scopeSuffix(e.Scope))
				if d := string(e.Data); d != "" && d != "{}" {
					fmt.Fprintf(a.out, "data: %s\n", d)
				}
				if len(v.Observations) > 0 {
					fmt.Fprintln(a.out, "facts:")
					for _, o := range v.Observations {
						fmt.Fprintf(a.out, "  %s  %s\n", o.ID, text.Excerpt(o.Content, 100))
					}
				}
				if len(v.Edges) > 0 {
					fmt.Fprintln(a.out, "edges:")
					for _, g := range v.Edges {
						fmt.Fprintf(a.out, "  %s  %s %s %s\n", g.ID, g.Source, g.Relation, g.Target)
					}
				}
				return nil
			})
		},
	}
}

func newKGListCmd(a *app) *cobra.Command {
	var req cairn.EntitiesRequest
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List entities, or find them by name",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEmit(a, func(eng *cairn.Engine) (cairn.EntityList, error) {
				return eng.Entities(cmd.Context(), req)
			}, func(list cairn.EntityList) error {
				for _, e := range list.Entities {
					fmt.Fprintf(a.out, "%s  %s (%s)\n", e.ID, e.Name, e.Type)
				}
				if len(list.Entities) == 0 {
					fmt.Fprintln(a.out, "no entities")
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Name, "name", "", "only entities with this exact name (any case)")
	f.StringVar(&req.Type, "type", "", "only entities of this type")
	f.IntVar(&req.Limit, "limit", 100, "most entities to list (1 to 1000)")
	f.Var(scopeFlag{&req.ScopeIDs}, "scope", "only entities in this scope")
	return cmd
}
