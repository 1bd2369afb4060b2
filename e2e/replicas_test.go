package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/internal/pgtest"
	"github.com/cairnhq/cairn/memory"
)

// replica is a `cairn serve` on a shared PostgreSQL database, with a
// retrieval index of its own, as a server on another host would have.
type replica struct {
	base string
	cmd  *exec.Cmd
}

func startReplica(t *testing.T, db string, env ...string) *replica {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(cairnBin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), append([]string{"CAIRN_DB=" + db, "CAIRN_INDEX_DIR=" + filepath.Join(dir, "index"),
		"XDG_CACHE_HOME=" + dir}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{cmd: cmd}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	addr := make(chan string, 1)
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		buf := make([]byte, 4096)
		var line strings.Builder
		for {
			n, err := stderr.Read(buf)
			line.Write(buf[:n])
			if m := listening.FindStringSubmatch(line.String()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	r.base = waitListening(t, addr, gone)
	return r
}

// pgDatabase is a fresh database on the package's PostgreSQL server.
func pgDatabase(t *testing.T) string {
	t.Helper()
	return pgtest.Shared(t).NewDatabase(t)
}

type reply struct {
	status int
	body   []byte
}

func (r reply) code() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func call(t testing.TB, method, url, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return reply{res.StatusCode, b.Bytes()}
}

// A write acknowledged by any replica is found by the very next retrieve
// on every other replica: each retrieve first replays the database's
// change log into that replica's index.
func TestReplicasReadTheirWritesEverywhere(t *testing.T) {
	db := pgDatabase(t)
	reps := []*replica{startReplica(t, db), startReplica(t, db), startReplica(t, db)}
	for i := range 30 {
		w := reps[i%len(reps)]
		word := fmt.Sprintf("zebraword%dq", i)
		r := call(t, "POST", w.base+"/v1/observations", fmt.Sprintf(`{"kind":"message","content":"the %s was logged here","scopeIds":{"repoId":"/r"}}`, word))
		if r.status != 201 {
			t.Fatalf("write %d: %d %s", i, r.status, r.body)
		}
		var o memory.Observation
		json.Unmarshal(r.body, &o)
		for j, other := range reps {
			for _, provider := range []string{"hybrid", "local-fts"} {
				res := call(t, "POST", other.base+"/v1/retrieve", fmt.Sprintf(`{"query":%q,"provider":%q,"scopeIds":{"repoId":"/r"}}`, word, provider))
				if res.status != 200 || !bytes.Contains(res.body, []byte(o.ID)) {
					t.Fatalf("write %d acknowledged by replica %d is not returned by replica %d's next retrieve (%s): %d %s",
						i, i%len(reps), j, provider, res.status, res.body)
				}
			}
		}
	}
}

// Replicas racing to open a capsule for one session: the database lets
// exactly one of them win; the others answer 409 conflict.
func TestReplicasOneOpenCapsulePerSession(t *testing.T) {
	db := pgDatabase(t)
	reps := []*replica{startReplica(t, db), startReplica(t, db), startReplica(t, db)}
	for round := range 10 {
		var wg sync.WaitGroup
		statuses := make([]reply, len(reps)*2)
		start := make(chan struct{})
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				statuses[i] = call(t, "POST", reps[i%len(reps)].base+"/v1/capsules",
					fmt.Sprintf(`{"type":"session","intent":"race %d","scopeIds":{"sessionId":"race-%d"}}`, round, round))
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for _, s := range statuses {
			switch {
			case s.status == 201:
				won++
			case s.status == 409 && s.code() == "conflict":
			default:
				t.Fatalf("round %d: %d %s", round, s.status, s.body)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d replicas opened a capsule for one session; want 1", round, won)
		}
	}
}

// A replica killed (SIGKILL) while clients write through it loses no
// acknowledged write and leaves no batch half-written: every import is in
// the database whole or not at all, and the other replicas, and a doctor
// run, find the database sound.
func TestReplicaKilledMidWrite(t *testing.T) {
	db := pgDatabase(t)
	victim := startReplica(t, db)
	survivor := startReplica(t, db)
	const perBatch = 200
	var acked sync.Map
	var nacked atomic.Int64
	enough := make(chan struct{})
	var once sync.Once
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := 0; ctx.Err() == nil; b++ {
				batch := fmt.Sprintf("w%d-b%d", w, b)
				var lines strings.Builder
				for i := range perBatch {
					fmt.Fprintf(&lines, `{"observation":{"id":"%s-%d","kind":"message","content":"batch %s line %d about the outage","provenance":{},"ts":%d,"scopeIds":{"repoId":"/kill"}}}`+"\n",
						batch, i, batch, i, 1700000000000+int64(i))
				}
				req, _ := http.NewRequestWithContext(ctx, "POST", victim.base+"/v1/import", strings.NewReader(lines.String()))
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					return // the replica died
				}
				res.Body.Close()
				if res.StatusCode == 200 {
					acked.Store(batch, true)
					if nacked.Add(1) >= 6 {
						once.Do(func() { close(enough) })
					}
				}
			}
		}()
	}
	// Kill it once some batches are acknowledged and others are in
	// flight.
	select {
	case <-enough:
	case <-time.After(stuck):
		t.Fatal("no batch acknowledged")
	}
	victim.cmd.Process.Signal(syscall.SIGKILL)
	wg.Wait()

	eng, err := cairn.Open(db, &cairn.Options{IndexDir: cairn.IndexInMemory})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	counts := map[string]int{}
	var out bytes.Buffer
	if _, err := eng.Export(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
		var r memory.Record
		if json.Unmarshal(line, &r) == nil && r.Observation != nil {
			id := r.Observation.ID
			counts[id[:strings.LastIndexByte(id, '-')]]++
		}
	}
	n := 0
	acked.Range(func(k, _ any) bool {
		n++
		if counts[k.(string)] != perBatch {
			t.Errorf("acknowledged batch %s holds %d of its %d records", k, counts[k.(string)], perBatch)
		}
		return true
	})
	for b, c := range counts {
		if c != perBatch {
			t.Errorf("batch %s was half-written: %d of %d records", b, c, perBatch)
		}
	}
	rep, err := eng.Doctor(context.Background(), cairn.DoctorRequest{})
	if err != nil || !rep.OK {
		t.Fatalf("doctor after the kill: %+v %v", rep, err)
	}
	res := call(t, "POST", survivor.base+"/v1/retrieve", `{"query":"outage","scopeIds":{"repoId":"/kill"},"maxCandidates":3}`)
	if res.status != 200 || !bytes.Contains(res.body, []byte("outage")) {
		t.Fatalf("the surviving replica after the kill: %d %s", res.status, res.body)
	}
	t.Logf("%d batches acknowledged before the kill, %d in the database", n, len(counts))
}

// /healthz answers 200 while the database answers and 503 with a
// db_error once it is gone; the process keeps serving.
func TestHealthzChecksTheDatabase(t *testing.T) {
	srv, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		pgtest.Unavailable(t, err)
	}
	defer srv.Stop()
	if err := srv.CreateDatabase("h"); err != nil {
		t.Fatal(err)
	}
	// A connect timeout bounds the health check once the server is gone
	// (refused at once here), and is far above what connecting to a
	// running server takes on a loaded machine.
	r := startReplica(t, srv.URL("h")+"&connect_timeout=10")
	if res := call(t, "GET", r.base+"/healthz", ""); res.status != 200 || !bytes.Contains(res.body, []byte(`"database":"ok"`)) {
		t.Fatalf("healthz with the database up: %d %s", res.status, res.body)
	}
	srv.Stop()
	res := call(t, "GET", r.base+"/healthz", "")
	if res.status != 503 || res.code() != "db_error" {
		t.Fatalf("healthz with the database down: %d %s; want 503 db_error", res.status, res.body)
	}
	if bytes.Contains(res.body, []byte("127.0.0.1")) {
		t.Fatalf("healthz shows the database's address: %s", res.body)
	}
}
