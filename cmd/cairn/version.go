package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn"
)

// buildInfo is what `cairn version` reports: cairn's release, the commit it
// was built from when the Go toolchain recorded one, and the toolchain.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"commit_time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// readBuildInfo reads the version control settings the Go toolchain
// stamps into a binary built from a clone (go build, go install ./cmd/cairn);
// `go run` and test binaries carry none, and the commit is then left out.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: cairn.Version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line `cairn --version` prints.
func (b buildInfo) String() string {
	s := "cairn " + b.Version
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (" + c
		if b.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + b.Go + " " + b.Platform
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show cairn's version, the commit it was built from and the Go toolchain",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b := readBuildInfo()
			if a.json {
				return a.emit(b)
			}
			_, err := fmt.Fprintln(a.out, b.String())
			return err
		},
	}
}
