package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestManyProcessesOneDatabase runs four `cairn mcp` processes (one per
// agent) and a `cairn serve` on one database file at once, each writing and
// reading concurrently, then checks that every acknowledged write is there
// and the database is sound.
func TestManyProcessesOneDatabase(t *testing.T) {
	const agents, writes = 4, 60
	db := filepath.Join(t.TempDir(), "shared.db")
	base := serve(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), stuck)
	defer cancel()

	var mu sync.Mutex
	var acked []string
	ack := func(id string) {
		mu.Lock()
		acked = append(acked, id)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	errs := make(chan error, agents+1)
	for a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("agent-%d", a), Version: "1"}, nil)
			session, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(cairnBin, "--db", db, "mcp")}, nil)
			if err != nil {
				errs <- err
				return
			}
			defer session.Close()
			for i := range writes {
				res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "log", Arguments: map[string]any{
					"kind": "message", "content": fmt.Sprintf("agent %d note %d about the shared deploy", a, i),
					"scopeIds": map[string]string{"agentId": fmt.Sprintf("agent-%d", a), "repoId": "/shared"},
				}})
				if err != nil || res.IsError {
					errs <- fmt.Errorf("agent %d write %d: %v %v", a, i, err, res)
					return
				}
				var o memory.Observation
				b, _ := json.Marshal(res.StructuredContent)
				json.Unmarshal(b, &o)
				ack(o.ID)
				if i%5 == 0 {
					res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "retrieve", Arguments: map[string]any{"query": "shared deploy", "maxCandidates": 5}})
					if err != nil || res.IsError {
						errs <- fmt.Errorf("agent %d read: %v %v", a, err, res)
						return
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range writes {
			body := fmt.Sprintf(`{"kind":"command","content":"http note %d about the shared deploy","scopeIds":{"agentId":"http","repoId":"/shared"}}`, i)
			res, err := http.Post(base+"/v1/observations", "application/json", bytes.NewBufferString(body))
			if err != nil {
				errs <- err
				return
			}
			var o memory.Observation
			json.NewDecoder(res.Body).Decode(&o)
			res.Body.Close()
			if res.StatusCode != 201 {
				errs <- fmt.Errorf("http write %d: %d", i, res.StatusCode)
				return
			}
			ack(o.ID)
			if i%5 == 0 {
				res, err := http.Post(base+"/v1/retrieve", "application/json", bytes.NewBufferString(`{"query":"shared deploy","maxCandidates":5}`))
				if err != nil || res.StatusCode != 200 {
					errs <- fmt.Errorf("http read: %v %v", err, res)
					return
				}
				res.Body.Close()
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	eng, err := cairn.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	want := (agents + 1) * writes
	if len(acked) != want {
		t.Fatalf("%d writes acknowledged; want %d", len(acked), want)
	}
	slices.Sort(acked)
	if len(slices.Compact(slices.Clone(acked))) != want {
		t.Fatal("duplicate ids acknowledged")
	}
	for _, id := range acked {
		if _, err := eng.Observation(ctx, id); err != nil {
			t.Fatalf("acknowledged write %s is missing: %v", id, err)
		}
	}
	rep, err := eng.Doctor(ctx, cairn.DoctorRequest{})
	if err != nil || !rep.OK {
		t.Fatalf("doctor after concurrent writers: %+v %v", rep, err)
	}
	st, _ := eng.Stats(ctx)
	if st.Observations != want || st.IndexedObservations != want {
		t.Fatalf("stats %+v; want %d observations", st, want)
	}
}
