package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/mcpserver"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newCallCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "call TOOL [ARGUMENTS_JSON]",
		Short: "Call any tool by name with JSON arguments, as MCP and HTTP clients do",
		Long: `Call a tool by name with a JSON object of arguments (the argument, or
standard input with "-"): the same tools, arguments, results and errors as the
MCP server and the HTTP API. 'cairn tools' lists them.`,
		Example: `  cairn call retrieve '{"query":"deploy failure","scopeIds":{"repoId":"/src/shop"},"maxCandidates":5}'
  echo '{"kind":"message","content":"hello"}' | cairn call log -`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return cairn.ToolNames(), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := "{}"
			if len(args) == 2 {
				text, err := a.readText(args[1:], "arguments")
				if err != nil {
					return err
				}
				raw = text
			}
			eng, err := a.engine()
			if err != nil {
				return err
			}
			out, err := eng.CallJSON(cmd.Context(), args[0], []byte(raw))
			if err != nil {
				return err
			}
			return a.emit(out)
		},
	}
}

func newToolsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "tools",
		Short: "List the tools (MCP tools, HTTP routes, 'cairn call' names)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := toolSchemas()
			if err != nil {
				return err
			}
			return a.show(list, func() error {
				tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "TOOL\tHTTP\tWHAT")
				for _, t := range cairn.Tools() {
					fmt.Fprintf(tw, "%s\t%s %s\t%s\n", t.Name, t.Method, t.Path, t.Title)
				}
				return tw.Flush()
			})
		},
	}
}

// describedTool is a tool as cairn tools --json lists it.
type describedTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Method       string          `json:"method"`
	Path         string          `json:"path"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// toolSchemas lists the tools with their input and output schemas.
func toolSchemas() ([]describedTool, error) {
	var out []describedTool
	for _, t := range cairn.Tools() {
		in, err := mcpserver.Schema(t.In)
		if err != nil {
			return nil, memory.Wrap(memory.CodeInternal, err, "schema of %s", t.Name)
		}
		res, err := mcpserver.Schema(t.Out)
		if err != nil {
			return nil, memory.Wrap(memory.CodeInternal, err, "schema of %s", t.Name)
		}
		inJSON, _ := json.Marshal(in)
		outJSON, _ := json.Marshal(res)
		out = append(out, describedTool{t.Name, t.Title, t.Method, t.Path, t.Description, inJSON, outJSON})
	}
	return out, nil
}
