package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	// log is what the server wrote to its standard error.
	logMu sync.Mutex
	log   strings.Builder
	// exited is closed once the process has been waited for.
	exited chan struct{}
}

func startReplica(t *testing.T, db string, env ...string) *replica {
	t.Helper()
	return startReplicaIn(t, db, t.TempDir(), env...)
}

// startReplicaIn starts a replica whose index and cache live in dir.
func startReplicaIn(t *testing.T, db, dir string, env ...string) *replica {
	t.Helper()
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
	r := &replica{cmd: cmd, exited: make(chan struct{})}
	addr := make(chan string, 1)
	gone := make(chan struct{})
	// Wait closes stderr once the process exits: what the reader has not
	// read by then is lost, which only an exited replica's last lines are.
	go func() { cmd.Wait(); close(r.exited) }()
	go func() {
		defer close(gone)
		buf := make([]byte, 4096)
		for {
			n, err := stderr.Read(buf)
			r.logMu.Lock()
			r.log.Write(buf[:n])
			m := listening.FindStringSubmatch(r.log.String())
			r.logMu.Unlock()
			if m != nil {
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
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-r.exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-r.exited
		}
	})
	r.base = waitListening(t, addr, gone)
	return r
}

// stop shuts the replica down (SIGINT) and waits for it to exit.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	r.cmd.Process.Signal(os.Interrupt)
	select {
	case <-r.exited:
	case <-time.After(stuck):
		t.Fatal("cairn serve did not stop on SIGINT")
	}
}

// logText is what the replica has logged so far.
func (r *replica) logText() string {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	return r.log.String()
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

// A replica stopped and started again with the same index directory
// catches up from the database's change log: its persisted index files
// are behind by what other replicas wrote and forgot meanwhile, and its
// first hybrid retrieves after the restart return every new write and no
// forgotten one, without rebuilding the index.
func TestRestartedReplicaCatchesUpFromTheChangeLog(t *testing.T) {
	db := pgDatabase(t)
	dir := t.TempDir()
	a := startReplicaIn(t, db, dir)
	b := startReplica(t, db)
	write := func(r *replica, text string) string {
		t.Helper()
		res := call(t, "POST", r.base+"/v1/observations", fmt.Sprintf(`{"kind":"message","content":%q,"scopeIds":{"repoId":"/restart"}}`, text))
		if res.status != 201 {
			t.Fatalf("write: %d %s", res.status, res.body)
		}
		var o memory.Observation
		json.Unmarshal(res.body, &o)
		return o.ID
	}
	hybrid := func(r *replica, word string) []byte {
		t.Helper()
		res := call(t, "POST", r.base+"/v1/retrieve", fmt.Sprintf(`{"query":%q,"provider":"hybrid","scopeIds":{"repoId":"/restart"}}`, word))
		if res.status != 200 || !bytes.Contains(res.body, []byte(`"providerUsed":"hybrid"`)) {
			t.Fatalf("retrieve %s: %d %s", word, res.status, res.body)
		}
		return res.body
	}
	before := map[string]string{}
	for i := range 5 {
		word := fmt.Sprintf("beforeword%dq", i)
		before[word] = write(a, "the "+word+" was logged before the restart")
	}
	for word, id := range before {
		if !bytes.Contains(hybrid(a, word), []byte(id)) {
			t.Fatalf("replica A does not return its own write %s", word)
		}
	}
	a.stop(t)
	if _, err := os.Stat(filepath.Join(dir, "index", "MANIFEST")); err != nil {
		t.Fatalf("replica A left no index files behind: %v", err)
	}

	// While A is down: new writes through B, and one of A's writes
	// forgotten through B.
	after := map[string]string{}
	for i := range 5 {
		word := fmt.Sprintf("afterword%dq", i)
		after[word] = write(b, "the "+word+" was logged while replica A was down")
	}
	if res := call(t, "POST", b.base+"/v1/observations/"+before["beforeword0q"]+"/forget", `{}`); res.status != 200 {
		t.Fatalf("forget through B: %d %s", res.status, res.body)
	}

	a = startReplicaIn(t, db, dir)
	for word, id := range after {
		if !bytes.Contains(hybrid(a, word), []byte(id)) {
			t.Fatalf("the restarted replica A does not return %s, written through B while it was down", word)
		}
	}
	for word, id := range before {
		got := bytes.Contains(hybrid(a, word), []byte(id))
		if forgotten := word == "beforeword0q"; got == forgotten {
			t.Fatalf("the restarted replica A: %s returned %v; forgotten through B while A was down: %v", word, got, forgotten)
		}
	}
	if log := a.logText(); strings.Contains(log, "rebuilding the retrieval index") || strings.Contains(log, "in memory for this process") {
		t.Fatalf("the restarted replica did not use its index files:\n%s", log)
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
// run, find the database sound. The kill comes at a moment when at least
// one import has been sent whole to the replica and not yet answered.
func TestReplicaKilledMidWrite(t *testing.T) {
	db := pgDatabase(t)
	victim := startReplica(t, db)
	survivor := startReplica(t, db)
	const perBatch = 200
	var acked sync.Map
	// Under mu: imports written whole to the replica (sent), those of
	// them answered since, and the imports acknowledged (200).
	var mu sync.Mutex
	var sent, answered, acks int
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
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
				// 0: not yet sent whole; 1: sent, awaiting the answer; 2: done.
				state := 0
				trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
					mu.Lock()
					if info.Err == nil && state == 0 {
						state = 1
						sent++
					}
					mu.Unlock()
					notify()
				}}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), "POST", victim.base+"/v1/import", strings.NewReader(lines.String()))
				res, err := http.DefaultClient.Do(req)
				ok := err == nil && res.StatusCode == 200
				if err == nil {
					res.Body.Close()
				}
				mu.Lock()
				if state == 1 {
					answered++
				}
				state = 2
				if ok {
					acked.Store(batch, true)
					acks++
				}
				mu.Unlock()
				notify()
				if err != nil {
					return // the replica died
				}
			}
		}()
	}
	// Kill it once some batches are acknowledged and at least one other
	// has been sent and not answered: the check and the kill hold mu, so
	// no answer is counted in between.
	timeout := time.After(stuck)
	inFlight := 0
	for inFlight == 0 {
		select {
		case <-changed:
		case <-timeout:
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("no moment with 6 imports acknowledged and one in flight (sent %d, answered %d, acknowledged %d)", sent, answered, acks)
		}
		mu.Lock()
		if acks >= 6 && sent-answered > 0 {
			inFlight = sent - answered
			if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				mu.Unlock()
				t.Fatal(err)
			}
		}
		mu.Unlock()
	}
	wg.Wait()
	if inFlight < 1 {
		t.Fatalf("%d imports in flight at the kill; want at least 1", inFlight)
	}

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
	t.Logf("%d imports in flight at the kill; %d acknowledged, %d in the database", inFlight, n, len(counts))
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
