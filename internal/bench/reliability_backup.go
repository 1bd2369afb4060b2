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
	// A database of some size first: 20 records per concurrent write.
	eng, err := r.open(db)
	if err != nil {
		return rep, err
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
			return rep, err
		}
		seed = seed[n:]
	}
	if err := eng.Close(); err != nil {
		return rep, err
	}
	check := func(name string, ok bool, format string, args ...any) {
		c := Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)}
		rep.Checks = append(rep.Checks, c)
		if !ok {
			r.fail("backup: %s: %s", name, c.Detail)
		}
		r.logf("   %-40s %v  %s", name, ok, c.Detail)
	}

	// Writers: `cairn serve` with an HTTP client, and `cairn mcp`.
	s, err := r.startServer(db, nil)
	if err != nil {
		return rep, err
	}
	if s.base == "" {
		return rep, memory.Errorf(memory.CodeInternal, "cairn serve ended before listening")
	}
	m, err := r.startStdio(db)
	if err != nil {
		r.stop(s)
		return rep, err
	}
	type acked struct {
		w  write
		at time.Time
	}
	var mu sync.Mutex
	var acks []acked
	var writeErrs []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			w := r.newWrite("backuphttp", i)
			body, _ := json.Marshal(logArgs(w, "reliability-backup-http"))
			res, err := http.Post(s.base+"/v1/observations", "application/json", bytes.NewReader(body))
			if err != nil {
				mu.Lock()
				writeErrs = append(writeErrs, err.Error())
				mu.Unlock()
				return
			}
			b := readAll(res)
			mu.Lock()
			if res.StatusCode == http.StatusCreated {
				acks = append(acks, acked{w, time.Now()})
			} else {
				writeErrs = append(writeErrs, fmt.Sprintf("%d %s", res.StatusCode, brief(b)))
			}
			mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			w := r.newWrite("backupmcp", i)
			res, err := m.tool("log", logArgs(w, "reliability-backup-mcp"))
			mu.Lock()
			if err == nil && res.Result != nil && !res.Result.IsError {
				acks = append(acks, acked{w, time.Now()})
			} else {
				writeErrs = append(writeErrs, fmt.Sprintf("%v %s", err, toolText(res)))
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// Let the writers get going: wait for a few acknowledged writes.
	for deadline := time.Now().Add(safety); ; {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 10 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	var copies []string
	for i := range 3 {
		dest := filepath.Join(dir, fmt.Sprintf("during-%d.db", i))
		began := time.Now()
		out, err := r.cmd(db, nil, "--json", "backup", dest).CombinedOutput()
		took := time.Since(began)
		rep.MaxMs = max(rep.MaxMs, float64(took.Microseconds())/1000)
		if err != nil {
			check(fmt.Sprintf("backup %d while writing", i+1), false, "cairn backup: %v: %s", err, brief(out))
			continue
		}
		rep.Backups++
		copies = append(copies, dest)
		mu.Lock()
		var before []write
		for _, a := range acks {
			if a.at.Before(began) {
				before = append(before, a.w)
			}
		}
		mu.Unlock()
		info, _ := os.Stat(dest)
		mode := info.Mode().Perm()
		doctor := r.cliDoctor(dest)
		eng, err := r.open(dest)
		if err != nil {
			check(fmt.Sprintf("backup %d while writing", i+1), false, "the copy does not open: %v", err)
			continue
		}
		missing := 0
		for _, w := range before {
			if o, err := eng.Observation(ctx, w.ID); err != nil || o.Content != w.Content {
				missing++
			}
		}
		st, _ := eng.Stats(ctx)
		eng.Close()
		check(fmt.Sprintf("backup %d while writing", i+1), mode == 0o600 && doctor == nil && missing == 0,
			"%.0f ms, mode %v, %d observations; cairn doctor on the copy: %v; %d of %d writes acknowledged before it began are missing",
			float64(took.Microseconds())/1000, mode, st.Observations, errText(doctor), missing, len(before))
	}
	close(stop)
	wg.Wait()
	mu.Lock()
	rep.WritesDuring = len(acks)
	errs := writeErrs
	mu.Unlock()
	check("writers undisturbed", len(errs) == 0, "%d writes acknowledged during the backups, %d errors %s", rep.WritesDuring, len(errs), strings.Join(errs, "; "))
	if err := r.closeStdio(m); err != nil {
		check("cairn mcp exits cleanly", false, "%v", err)
	}
	if err := r.stop(s); err != nil {
		check("cairn serve exits cleanly", false, "%v", err)
	}

	// An existing file is not replaced.
	if len(copies) > 0 {
		before := fileSum(copies[0])
		c := r.cmd(db, nil, "backup", copies[0])
		var errb bytes.Buffer
		c.Stderr = &errb
		err := c.Run()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		check("existing file kept", code == 4 && fileSum(copies[0]) == before, "exit %d (4: conflict), %s", code, strings.TrimSpace(errb.String()))
	}

	// A quiet copy answers retrievals byte for byte as the database does.
	final := filepath.Join(dir, "final.db")
	if out, err := r.cmd(db, nil, "backup", final).CombinedOutput(); err != nil {
		return rep, memory.Errorf(memory.CodeInternal, "cairn backup: %v: %s", err, brief(out))
	}
	info, _ := os.Stat(final)
	rep.Bytes = info.Size()
	mu.Lock()
	var queries []string
	for i := 0; i < len(acks); i += max(1, len(acks)/5) {
		queries = append(queries, acks[i].w.Token)
	}
	mu.Unlock()
	queries = append(queries, "deploy pipeline retry", "why did the webhook duplicate")
	answers := func(path string) ([]string, error) {
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
	want, err := answers(db)
	if err != nil {
		return rep, err
	}
	got, err := answers(final)
	if err != nil {
		return rep, err
	}
	check("copy answers the same", equalStrings(want, got) && r.cliDoctor(final) == nil,
		"%d retrievals byte-identical on the copy (%.1f MiB) and the database; cairn doctor on the copy passes", len(queries), float64(rep.Bytes)/(1<<20))

	// Restore: the database moves on, then the copy is moved back in
	// place (every process stopped, the -wal and -shm files gone), its
	// index directory left as it was: it answers as the copy did, and
	// the write made after the copy is gone.
	if out, err := r.cmd(db, nil, "log", "--id", "obs_rel_after_backup", "written after the backup zqafterbackup").CombinedOutput(); err != nil {
		return rep, memory.Errorf(memory.CodeInternal, "cairn log: %v: %s", err, brief(out))
	}
	if out, err := r.cmd(db, nil, "index", "optimize").CombinedOutput(); err != nil {
		return rep, memory.Errorf(memory.CodeInternal, "cairn index optimize: %v: %s", err, brief(out))
	}
	if err := copyFile(final, db); err != nil {
		return rep, err
	}
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	restored, err := answers(db)
	if err != nil {
		return rep, err
	}
	after, _ := r.cmd(db, nil, "--json", "retrieve", "zqafterbackup").Output()
	shown := r.cmd(db, nil, "show", "obs_rel_after_backup").Run()
	gone := false
	if ee, ok := shown.(*exec.ExitError); ok && ee.ExitCode() == 3 {
		gone = true
	}
	check("restore answers as the copy", equalStrings(want, restored) && r.cliDoctor(db) == nil && !found(after, "obs_rel_after_backup") && gone,
		"the copy moved back over the database: the same %d retrievals, cairn doctor passes, the later write is not found", len(queries))
	return rep, nil
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
