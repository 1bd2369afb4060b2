package code_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/sqlite"
)

// Decisions are logged with structured fields; neither code nor query text
// reaches the info level (the seed's example logs the query at info, which
// would put a user's words in every log: cairn keeps them for debug).
func TestLoggingKeepsContentOutOfInfo(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		root := t.TempDir()
		write(t, root, "vault.go", "package vault\n\n// Open unlocks with the passphrase CODE-SECRET-7781.\nfunc Open() string { return \"CODE-SECRET-7781\" }\n")
		db, err := sqlite.Open(filepath.Join(t.TempDir(), "cairn.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		mem := code.New(db, code.Options{Embedder: embed.Hash{Dim: 32}, Now: func() time.Time { now = now.Add(time.Millisecond); return now },
			NewID:  func(p string) string { now = now.Add(time.Millisecond); return p + now.Format("150405.000") },
			Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: level}))})
		ctx := context.Background()
		if _, err := mem.Index(ctx, code.IndexRequest{Root: root, RepoID: "r"}); err != nil {
			t.Fatal(err)
		}
		if _, err := mem.Hydrate(ctx, code.HydrateRequest{Query: "QUERY-SECRET-4412 Open in vault.go", EpisodeID: "e1", SessionID: "s1", BudgetTokens: 5}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		out := logs.String()
		for _, want := range []string{`"msg":"hydration"`, `"episode":"e1"`, `"msg":"hydration budget exhausted"`} {
			if !strings.Contains(out, want) {
				t.Errorf("level %v: the logs lack %s:\n%s", level, want, out)
			}
		}
		if strings.Contains(out, "CODE-SECRET-7781") {
			t.Errorf("level %v: code content reached the logs:\n%s", level, out)
		}
		if got := strings.Contains(out, "QUERY-SECRET-4412"); got != (level == slog.LevelDebug) {
			t.Errorf("level %v: query text in the logs is %v; want it at debug only:\n%s", level, got, out)
		}
	}
}
