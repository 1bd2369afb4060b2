package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// BackupReport is the backup and restore round trip's tally.
type BackupReport struct {
	// Backups were taken with `cairn backup` while WritersDuring
	// processes wrote; WritesDuring writes were acknowledged meanwhile.
	Backups       int `json:"backups"`
	WritersDuring int `json:"writersDuring"`
	WritesDuring  int `json:"writesDuring"`
	// Bytes is the last backup's size, MaxMs the longest backup.
	Bytes  int64   `json:"bytes"`
	MaxMs  float64 `json:"maxMs"`
	Checks []Check `json:"checks"`
}

// backup takes backups with `cairn backup` while `cairn serve` and `cairn
// mcp` write, checks each copy (mode 0600, `cairn doctor`, every write
// acknowledged before it began), that an existing file is not replaced,
// that a copy answers retrievals as the database does, and that a copy
// moved back in place (a restore) does too.
func (r *rel) backup(ctx context.Context) (BackupReport, error) {
	rep := BackupReport{WritersDuring: 2}
	dir := filepath.Join(r.o.Dir, "backup")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return rep, err
	}
	db := filepath.Join(dir, "cairn.db")
	if err := r.seedBackup(ctx, db); err != nil {
		return rep, err
	}
	cl := r.checks("backup", 40, &rep.Checks)
	copies, tokens, err := r.backupsWhileWriting(ctx, dir, db, &rep, cl)
	if err != nil {
		return rep, err
	}
	if len(copies) > 0 {
		r.backupKeepsExisting(db, copies[0], cl)
	}
	queries := append(tokens, "deploy pipeline retry", "why did the webhook duplicate")
	want, err := r.backupAnswers(dir, db, queries, &rep, cl)
	if err != nil {
		return rep, err
	}
	return rep, r.restore(db, filepath.Join(dir, "final.db"), queries, want, cl)
}

// seedBackup writes a database of some size: 20 records per concurrent
// write.
func (r *rel) seedBackup(ctx context.Context, db string) error {
	eng, err := r.open(db)
	if err != nil {
		return err
	}
	var seed []cairn.LogRequest
	for i := range 20 * r.o.Writes {
		w := r.newWrite("backupseed", i)
		seed = append(seed, cairn.LogRequest{ID: w.ID, Kind: memory.KindMessage, Content: w.Content,
			ScopeIDs: memory.Scope{SessionID: "reliability-backup-seed", RepoID: "/reliability"}})
	}
	for len(seed) > 0 {
		n := min(len(seed), 500)
		if _, err := eng.LogBatch(ctx, seed[:n]); err != nil {
			eng.Close()
			return err
		}
		seed = seed[n:]
	}
	return eng.Close()
}

// backupsWhileWriting takes three backups while `cairn serve` (an HTTP
// client) and `cairn mcp` write, and checks each copy and the writers.
// It returns the copies and a sample of the acknowledged writes' tokens.
func (r *rel) backupsWhileWriting(ctx context.Context, dir, db string, rep *BackupReport, cl *checkList) (copies, tokens []string, err error) {
	s, err := r.startServer(db, nil)
	if err != nil {
		return nil, nil, err
	}
	if s.base == "" {
		return nil, nil, memory.Errorf(memory.CodeInternal, "cairn serve ended before listening")
	}
	m, err := r.startStdio(db)
	if err != nil {
		r.stop(s)
		return nil, nil, err
	}
	bw := r.startBackupWriters(s, m)
	// Let the writers get going: wait for a few acknowledged writes.
	for deadline := time.Now().Add(safety); bw.count() < 10 && !time.Now().After(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 3 {
		if dest := r.backupDuring(ctx, dir, db, i, bw, rep, cl); dest != "" {
			copies = append(copies, dest)
		}
	}
	close(bw.stop)
	bw.wg.Wait()
	bw.mu.Lock()
	rep.WritesDuring = len(bw.acks)
	errs := bw.errs
	bw.mu.Unlock()
	cl.add("writers undisturbed", len(errs) == 0, "%d writes acknowledged during the backups, %d errors %s", rep.WritesDuring, len(errs), strings.Join(errs, "; "))
	if err := r.closeStdio(m); err != nil {
		cl.add("cairn mcp exits cleanly", false, "%v", err)
	}
	if err := r.stop(s); err != nil {
		cl.add("cairn serve exits cleanly", false, "%v", err)
	}
	return copies, bw.sample(), nil
}

// backupDuring takes backup i while the writers write and checks the
// copy: mode 0600, `cairn doctor`, every write acknowledged before it
// began. It returns the copy's path ("" when the backup failed).
func (r *rel) backupDuring(ctx context.Context, dir, db string, i int, bw *backupWriters, rep *BackupReport, cl *checkList) string {
	name := fmt.Sprintf("backup %d while writing", i+1)
	dest := filepath.Join(dir, fmt.Sprintf("during-%d.db", i))
	began := time.Now()
	out, err := r.cmd(db, nil, "--json", "backup", dest).CombinedOutput()
	took := time.Since(began)
	rep.MaxMs = max(rep.MaxMs, float64(took.Microseconds())/1000)
	if err != nil {
		cl.add(name, false, "cairn backup: %v: %s", err, brief(out))
		return ""
	}
	rep.Backups++
	before := bw.before(began)
	info, _ := os.Stat(dest)
	mode := info.Mode().Perm()
	doctor := r.cliDoctor(dest)
	eng, err := r.open(dest)
	if err != nil {
		cl.add(name, false, "the copy does not open: %v", err)
		return dest
	}
	missing := 0
	for _, w := range before {
		if o, err := eng.Observation(ctx, w.ID); err != nil || o.Content != w.Content {
			missing++
		}
	}
	st, _ := eng.Stats(ctx)
	eng.Close()
	cl.add(name, mode == 0o600 && doctor == nil && missing == 0,
		"%.0f ms, mode %v, %d observations; cairn doctor on the copy: %v; %d of %d writes acknowledged before it began are missing",
		float64(took.Microseconds())/1000, mode, st.Observations, errText(doctor), missing, len(before))
	return dest
}

// backupKeepsExisting checks that a backup onto an existing file fails
// with a conflict and leaves the file alone.
func (r *rel) backupKeepsExisting(db, existing string, cl *checkList) {
	before := fileSum(existing)
	c := r.cmd(db, nil, "backup", existing)
	var errb bytes.Buffer
	c.Stderr = &errb
	err := c.Run()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	cl.add("existing file kept", code == 4 && fileSum(existing) == before, "exit %d (4: conflict), %s", code, strings.TrimSpace(errb.String()))
}

// answers runs queries against the database at path.
func (r *rel) answers(path string, queries []string) ([]string, error) {
	var out []string
	for _, q := range queries {
		b, err := r.cmd(path, nil, "--json", "--now", "2030-01-01", "retrieve", "--max-candidates", "5", q).Output()
		if err != nil {
			return nil, fmt.Errorf("cairn retrieve %q: %v", q, err)
		}
		out = append(out, string(b))
	}
	return out, nil
}

// backupAnswers takes a quiet copy (dir/final.db) and checks it answers
// retrievals byte for byte as the database does; it returns the
// database's answers.
func (r *rel) backupAnswers(dir, db string, queries []string, rep *BackupReport, cl *checkList) ([]string, error) {
	final := filepath.Join(dir, "final.db")
	if out, err := r.cmd(db, nil, "backup", final).CombinedOutput(); err != nil {
		return nil, memory.Errorf(memory.CodeInternal, "cairn backup: %v: %s", err, brief(out))
	}
	info, _ := os.Stat(final)
	rep.Bytes = info.Size()
	want, err := r.answers(db, queries)
	if err != nil {
		return nil, err
	}
	got, err := r.answers(final, queries)
	if err != nil {
		return nil, err
	}
	cl.add("copy answers the same", equalStrings(want, got) && r.cliDoctor(final) == nil,
		"%d retrievals byte-identical on the copy (%.1f MiB) and the database; cairn doctor on the copy passes", len(queries), float64(rep.Bytes)/(1<<20))
	return want, nil
}

// restore: the database moves on, then the copy final is moved back in
// place (every process stopped, the -wal and -shm files gone), its index
// directory left as it was: it answers as the copy did (want), and the
// write made after the copy is gone.
func (r *rel) restore(db, final string, queries, want []string, cl *checkList) error {
	if out, err := r.cmd(db, nil, "log", "--id", "obs_rel_after_backup", "written after the backup zqafterbackup").CombinedOutput(); err != nil {
		return memory.Errorf(memory.CodeInternal, "cairn log: %v: %s", err, brief(out))
	}
	if out, err := r.cmd(db, nil, "index", "optimize").CombinedOutput(); err != nil {
		return memory.Errorf(memory.CodeInternal, "cairn index optimize: %v: %s", err, brief(out))
	}
	if err := copyFile(final, db); err != nil {
		return err
	}
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	restored, err := r.answers(db, queries)
	if err != nil {
		return err
	}
	after, _ := r.cmd(db, nil, "--json", "retrieve", "zqafterbackup").Output()
	shown := r.cmd(db, nil, "show", "obs_rel_after_backup").Run()
	gone := false
	if ee, ok := shown.(*exec.ExitError); ok && ee.ExitCode() == 3 {
		gone = true
	}
	cl.add("restore answers as the copy", equalStrings(want, restored) && r.cliDoctor(db) == nil && !found(after, "obs_rel_after_backup") && gone,
		"the copy moved back over the database: the same %d retrievals, cairn doctor passes, the later write is not found", len(queries))
	return nil
}

// backupWriters are the two processes writing during the backups: an
// HTTP client of `cairn serve` and a `cairn mcp` session.
type backupWriters struct {
	mu   sync.Mutex
	acks []ackedWrite
	errs []string
	stop chan struct{}
	wg   sync.WaitGroup
}

// ackedWrite is a write and when it was acknowledged.
type ackedWrite struct {
	w  write
	at time.Time
}

// startBackupWriters starts the writers; close stop and wait for wg to
// end them.
func (r *rel) startBackupWriters(s *server, m *stdio) *backupWriters {
	bw := &backupWriters{stop: make(chan struct{})}
	bw.wg.Add(2)
	go func() {
		defer bw.wg.Done()
		for i := 0; !bw.stopped(); i++ {
			w := r.newWrite("backuphttp", i)
			body, _ := json.Marshal(logArgs(w, "reliability-backup-http"))
			res, err := http.Post(s.base+"/v1/observations", "application/json", bytes.NewReader(body))
			if err != nil {
				bw.record(w, false, err.Error())
				return
			}
			b := readAll(res)
			bw.record(w, res.StatusCode == http.StatusCreated, fmt.Sprintf("%d %s", res.StatusCode, brief(b)))
		}
	}()
	go func() {
		defer bw.wg.Done()
		for i := 0; !bw.stopped(); i++ {
			w := r.newWrite("backupmcp", i)
			res, err := m.tool("log", logArgs(w, "reliability-backup-mcp"))
			bw.record(w, err == nil && res.Result != nil && !res.Result.IsError, fmt.Sprintf("%v %s", err, toolText(res)))
			if err != nil {
				return
			}
		}
	}()
	return bw
}

func (bw *backupWriters) stopped() bool {
	select {
	case <-bw.stop:
		return true
	default:
		return false
	}
}

// record notes a write: acknowledged now, or failed with problem.
func (bw *backupWriters) record(w write, acked bool, problem string) {
	bw.mu.Lock()
	if acked {
		bw.acks = append(bw.acks, ackedWrite{w, time.Now()})
	} else {
		bw.errs = append(bw.errs, problem)
	}
	bw.mu.Unlock()
}

// count is the writes acknowledged so far.
func (bw *backupWriters) count() int {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	return len(bw.acks)
}

// before lists the writes acknowledged before t.
func (bw *backupWriters) before(t time.Time) []write {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	var out []write
	for _, a := range bw.acks {
		if a.at.Before(t) {
			out = append(out, a.w)
		}
	}
	return out
}

// sample is the tokens of about five acknowledged writes, spread over
// them.
func (bw *backupWriters) sample() []string {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	var out []string
	for i := 0; i < len(bw.acks); i += max(1, len(bw.acks)/5) {
		out = append(out, bw.acks[i].w.Token)
	}
	return out
}

func fileSum(path string) [32]byte {
	b, _ := os.ReadFile(path)
	return sha256.Sum256(b)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func errText(err error) string {
	if err == nil {
		return "passes"
	}
	return err.Error()
}
