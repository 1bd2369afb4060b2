package main

import (
	"fmt"
	"net"
	"os/exec"
	"runtime"

	"github.com/cairnhq/cairn/httpapi"
	"github.com/cairnhq/cairn/memory"
	"github.com/spf13/cobra"
)

func newUICmd(a *app) *cobra.Command {
	var addr string
	var noOpen bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Open the web page in a browser, served on a free loopback port",
		Long: `Serve cairn on a free port of 127.0.0.1 (what 'cairn serve' serves: the web page
at /, the HTTP API, MCP) and open the web page in the default browser. The
page searches memories with each score explained, shows the timeline of
capsules and observations, thoughts and the knowledge graph, code memory's
episodes, and the engine's health; records can be pinned, unpinned and
forgotten from it. Stop it with Ctrl-C.

Only this machine can reach it. With $CAIRN_TOKEN set, the page asks for the
token first.`,
		Example: `  cairn ui
  cairn ui --no-open --addr 127.0.0.1:4748`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, _, err := net.SplitHostPort(addr)
			if err != nil || !(host == "localhost" || isLoopbackIP(host)) {
				return memory.Errorf(memory.CodeInvalidParams, "--addr %q: cairn ui serves on loopback only (127.0.0.1:PORT); use cairn serve for other addresses", addr)
			}
			return a.serveHTTP(cmd.Context(), addr, httpapi.Options{}, func(url string) {
				fmt.Fprintf(a.err, "cairn: the web page is at %s\n", url)
				if noOpen {
					return
				}
				if openBrowser(url) != nil {
					fmt.Fprintf(a.err, "cairn: could not start a browser; open %s yourself\n", url)
				}
			})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "loopback address to listen on (port 0: a free one)")
	cmd.Flags().BoolVar(&noOpen, "no-open", false, "print the address without opening a browser")
	return cmd
}

// openBrowser asks the desktop to open url, without waiting for the
// browser.
func openBrowser(url string) error {
	var c *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		c = exec.Command("open", url)
	case "windows":
		c = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		c = exec.Command("xdg-open", url)
	}
	if err := c.Start(); err != nil {
		return err
	}
	go c.Wait()
	return nil
}
