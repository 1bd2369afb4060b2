package sqlite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

var ctx = context.Background()

func obs(id, content string, ts int64) memory.NewObservation {
	return memory.NewObservation{Observation: memory.Observation{ID: id, Kind: memory.KindMessage, Content: content,
		Provenance: json.RawMessage(`{}`), TS: ts, Scope: memory.Scope{RepoID: "r"}}}
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func rawExec(t *testing.T, path, stmt string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

func TestNewerSchemaIsRefusedAndUntouched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	rawExec(t, path, fmt.Sprintf("PRAGMA user_version=%d", sqlite.SchemaVersion()+1))
	before := fileHash(t, path)
	_, err = sqlite.Open(path, nil)
	if memory.CodeOf(err) != memory.CodeDBError || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("opening a newer database: %v; want a db_error saying it is newer", err)
	}
	if fileHash(t, path) != before {
		t.Fatal("the refused database file changed")
	}
}

func TestForeignDatabaseIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	rawExec(t, path, "CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER)")
	before := fileHash(t, path)
	_, err := sqlite.Open(path, nil)
	if memory.CodeOf(err) != memory.CodeDBError || !strings.Contains(err.Error(), "not a cairn database") {
		t.Fatalf("opening another application's database: %v", err)
	}
	if fileHash(t, path) != before {
		t.Fatal("the foreign database file changed")
	}
	for name, content := range map[string][]byte{
		"text.db":  bytes.Repeat([]byte("not a database "), 500),
		"short.db": []byte("hello"),
		"noise.db": bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef, 0x01}, 2000),
	} {
		notDB := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(notDB, content, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := sqlite.Open(notDB, nil)
		if memory.CodeOf(err) != memory.CodeDBError || !strings.Contains(err.Error(), "not a cairn database") {
			t.Fatalf("opening %s: %v; want a db_error saying it is not a cairn database", name, err)
		}
		if got, _ := os.ReadFile(notDB); !bytes.Equal(got, content) {
			t.Fatalf("the refused file %s changed", name)
		}
	}
}

func TestReopenKeepsDataAndSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "dir", "cairn.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{obs("o1", "persisted", 1)}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("database mode %v; want 0600", info.Mode().Perm())
	}
	for range 2 {
		db, err = sqlite.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		st, err := db.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Observations != 1 || st.SchemaVersion != sqlite.SchemaVersion() {
			t.Fatalf("after reopen: %+v", st)
		}
		db.Close()
	}
}

func TestForgetErasesTextFromDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cairn.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "zebracorn-secret-4411"
	var batch []memory.NewObservation
	for i := range 200 {
		batch = append(batch, obs(fmt.Sprintf("filler%03d", i), strings.Repeat("ordinary words ", 20), int64(i)))
	}
	batch = append(batch, obs("secret", "the deploy key is "+secret, 1000))
	if _, err := db.AppendObservations(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Redact(ctx, "secret"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("zebracorn")) {
			t.Errorf("%s still holds the forgotten text", filepath.Base(f))
		}
	}
}

// TestForgetEveryKindErasesTextFromDisk: forgetting a summary, a thought or
// a code artifact, and deleting knowledge-graph records, overwrite their
// text in the database and its write-ahead log, while the database is
// open (the log is checkpointed) and after it closes.
func TestForgetEveryKindErasesTextFromDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cairn.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var batch []memory.NewObservation
	for i := range 200 {
		batch = append(batch, obs(fmt.Sprintf("filler%03d", i), strings.Repeat("ordinary words ", 20), int64(i)))
	}
	if _, err := db.AppendObservations(ctx, batch); err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{
		"summary":  "zebrasumm4411",
		"thought":  "zebrathot4412",
		"tag":      "zebratagg4413",
		"artifact": "zebraarti4414",
		"entity":   "zebraenti4415",
		"fact":     "zebrafact4416",
		"edge":     "zebraedge4417",
		"cascade":  "zebracasc4418",
	}
	if _, err := db.OpenCapsule(ctx, memory.Capsule{ID: "c1", Type: "session", OpenedAt: 1, Scope: memory.Scope{SessionID: "s"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutSummary(ctx, memory.Summary{ID: "m1", CapsuleID: "c1", Content: "the key is " + secrets["summary"], Confidence: 1, CreatedAt: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddThought(ctx, memory.Thought{ID: "t1", Content: "the key is " + secrets["thought"], Origin: memory.OriginHuman,
		Tags: []string{secrets["tag"]}, Status: memory.StatusActive, Significance: 0.5, CreatedAt: 3}); err != nil {
		t.Fatal(err)
	}
	code := "func Key() string { return \"" + secrets["artifact"] + "\" }"
	sum := sha256.Sum256([]byte(code))
	art := memory.Artifact{Hash: fmt.Sprintf("%x", sum), Type: memory.ArtifactUserPaste, Content: code, CreatedAt: 4}
	if err := db.ApplyCode(ctx, memory.CodeChange{Artifacts: []memory.Artifact{art}}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []memory.KGEntity{
		{ID: "e1", Name: "vault " + secrets["entity"], Type: "service", CreatedAt: 5, UpdatedAt: 5},
		{ID: "e2", Name: "gateway", Type: "service", CreatedAt: 5, UpdatedAt: 5},
		{ID: "e3", Name: "proxy", Type: "service", CreatedAt: 5, UpdatedAt: 5},
	} {
		if _, err := db.PutEntity(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []memory.KGObservation{
		{ID: "k1", EntityID: "e2", Content: "its password is " + secrets["fact"], CreatedAt: 6},
		{ID: "k2", EntityID: "e1", Content: "cascades with " + secrets["cascade"], CreatedAt: 6},
	} {
		if _, err := db.AddKGObservation(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.AddEdge(ctx, memory.KGEdge{ID: "g1", Source: "e2", Target: "e3", Relation: "trusts",
		Data: memory.RawObject(`{"token":"` + secrets["edge"] + `"}`), CreatedAt: 7}); err != nil {
		t.Fatal(err)
	}
	holding := func(needle string) []string {
		var out []string
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if bytes.Contains(b, []byte(needle)) {
				out = append(out, filepath.Base(f))
			}
		}
		return out
	}
	if got := holding(secrets["thought"]); len(got) == 0 {
		t.Fatal("the thought is in no file before it is forgotten: the test would prove nothing")
	}
	steps := []error{
		func() error { _, err := db.RedactSummary(ctx, "m1"); return err }(),
		func() error { _, err := db.RedactThought(ctx, "t1"); return err }(),
		func() error { _, err := db.RedactArtifact(ctx, art.Hash, 8); return err }(),
		db.DeleteKGObservation(ctx, "k1"),
		db.DeleteEdge(ctx, "g1"),
		db.DeleteEntity(ctx, "e1"),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	for what, s := range secrets {
		if got := holding(s); len(got) > 0 {
			t.Errorf("open: %s's text is still in %v", what, got)
		}
	}
	db.Close()
	for what, s := range secrets {
		if got := holding(s); len(got) > 0 {
			t.Errorf("closed: %s's text is still in %v", what, got)
		}
	}
}

// A forgotten row leaves the index exactly: bm25 statistics afterwards equal
// those of an index that never held it.
func TestForgetLeavesBM25AsIfNeverIndexed(t *testing.T) {
	a := openTemp(t)
	defer a.Close()
	b := openTemp(t)
	defer b.Close()
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}
	var all, kept []memory.NewObservation
	for i := range 60 {
		text := strings.Repeat(words[i%6]+" ", 1+i%4) + words[(i*7)%6] + " tail"
		o := obs(fmt.Sprintf("o%02d", i), text, int64(i))
		all = append(all, o)
		if i%5 != 0 {
			kept = append(kept, o)
		}
	}
	if _, err := a.AppendObservations(ctx, all); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i += 5 {
		if _, err := a.Redact(ctx, fmt.Sprintf("o%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.AppendObservations(ctx, kept); err != nil {
		t.Fatal(err)
	}
	for _, w := range words {
		q := memory.TextSearch{Query: memory.TextQuery{Terms: []string{w, "tail"}}, Limit: 100}
		ra, err := a.SearchText(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := b.SearchText(ctx, q)
		if len(ra.Observations) != len(rb.Observations) {
			t.Fatalf("%s: %d hits after forgetting; %d in a fresh index", w, len(ra.Observations), len(rb.Observations))
		}
		for i := range ra.Observations {
			ha, hb := ra.Observations[i], rb.Observations[i]
			if ha.Entity.ID() != hb.Entity.ID() || ha.Rank != hb.Rank {
				t.Fatalf("%s hit %d: %s %v; fresh index %s %v", w, i, ha.Entity.ID(), ha.Rank, hb.Entity.ID(), hb.Rank)
			}
		}
	}
}

// Several handles on one file (as several processes would hold) write at
// once; every acknowledged write is there afterwards.
func TestConcurrentHandlesLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	const writers, each = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := sqlite.Open(path, nil)
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			for i := range each {
				if _, err := db.AppendObservations(ctx, []memory.NewObservation{obs(fmt.Sprintf("w%d-%03d", w, i), "concurrent write", int64(i))}); err != nil {
					errs <- err
					return
				}
				if _, err := db.SearchText(ctx, memory.TextSearch{Query: memory.TextQuery{Terms: []string{"concurrent"}}, Limit: 5}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	db := openAt(t, path)
	defer db.Close()
	st, _ := db.Stats(ctx)
	if st.Observations != writers*each || st.IndexedObservations != writers*each {
		t.Fatalf("stats after concurrent writes %+v; want %d observations", st, writers*each)
	}
}

func openAt(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}
