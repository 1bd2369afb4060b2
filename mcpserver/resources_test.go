package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/mcpserver"
	"github.com/cairnhq/cairn/memory"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client browsing resources (an @-picker) pages through the pins and
// recent sessions with the protocol's cursor, gets the engine's list in
// its order, and can read every resource it was offered.
func TestResourceListPagesAndReads(t *testing.T) {
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	eng, err := cairn.Open(filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	ctx := context.Background()
	for i := range 4 {
		sid := fmt.Sprintf("s%d", i)
		c, err := eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{Intent: "task " + sid, ScopeIDs: memory.Scope{SessionID: sid, RepoID: "/src/shop"}})
		if err != nil {
			t.Fatal(err)
		}
		o, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindMessage, Content: "note " + sid, ScopeIDs: memory.Scope{SessionID: sid}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eng.CloseCapsule(ctx, cairn.CloseCapsuleRequest{CapsuleID: c.ID, Summary: &cairn.SummaryInput{Content: "done " + sid}}); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Pin(ctx, cairn.PinRequest{TargetID: o.ID}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	want, err := eng.ListRecords(ctx, "", cairn.MaxPageSize)
	if err != nil || len(want.Records) != 12 {
		t.Fatalf("the engine lists %d records (%v); want 4 pins, 4 capsules, 4 summaries", len(want.Records), err)
	}

	srv, err := mcpserver.New(eng, &mcpserver.Options{ResourcePageSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "resources-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	var got []string
	pages := 0
	cursor := ""
	for {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(res.Resources) > 5 {
			t.Fatalf("page %d holds %d resources; the page size is 5", pages, len(res.Resources))
		}
		for _, r := range res.Resources {
			got = append(got, r.URI)
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
			if err != nil {
				t.Fatalf("reading %s: %v", r.URI, err)
			}
			var body struct {
				ID  string `json:"id"`
				Pin struct {
					ID string `json:"id"`
				} `json:"pin"`
				Active bool `json:"active"`
			}
			if len(read.Contents) != 1 || json.Unmarshal([]byte(read.Contents[0].Text), &body) != nil {
				t.Fatalf("%s reads as %+v", r.URI, read.Contents)
			}
			if id := body.ID + body.Pin.ID; id != r.Name || !strings.HasSuffix(r.URI, "/"+id) {
				t.Errorf("%s (named %s) reads as the record %s", r.URI, r.Name, id)
			}
			if strings.HasPrefix(r.URI, "cairn://pin/") && !body.Active {
				t.Errorf("listed pin %s reads as not active", r.URI)
			}
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
		if pages > 3 {
			t.Fatal("more pages than 12 resources in pages of 5 make")
		}
	}
	var wantURIs []string
	for _, r := range want.Records {
		wantURIs = append(wantURIs, "cairn://"+r.Kind+"/"+r.ID)
	}
	if pages != 3 || !slices.Equal(got, wantURIs) {
		t.Fatalf("%d pages listed %v; want 3 pages of %v", pages, got, wantURIs)
	}
	if _, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "bogus"}); err == nil || !strings.Contains(err.Error(), "invalid_params") {
		t.Fatalf("a cursor the server did not give: %v", err)
	}
}
