package cairn_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/internal/forgettest"
	"github.com/cairnhq/cairn/internal/pgtest"
	"github.com/cairnhq/cairn/memory"
)

func exportOf(t *testing.T, path string) (string, memory.VectorStats) {
	t.Helper()
	eng, err := cairn.Open(path, &cairn.Options{IndexDir: cairn.IndexInMemory})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var b bytes.Buffer
	if _, err := eng.Export(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	st, err := eng.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), st.Embedder.VectorStats
}

// A SQLite database moves to PostgreSQL and back: every record of every
// kind arrives (the three exports are byte for byte the same, and the
// digest Migrate prints is the export's SHA-256), the vectors come along,
// and hybrid retrieval answers the same on all three.
func TestMigrateSQLiteToPostgresAndBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lite := filepath.Join(dir, "from.db")
	eng, err := cairn.Open(lite, &cairn.Options{IndexDir: cairn.IndexInMemory})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(parityDataset)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Import(ctx, f, cairn.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	forgettest.Seed(t, eng, t.TempDir())
	if _, err := eng.Reembed(ctx, cairn.ReembedRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	eng.Close()
	want, wantVec := exportOf(t, lite)
	sum := sha256.Sum256([]byte(want))

	g, _ := embed.NewGloVe()
	pg := pgURL(t)
	var stages []string
	rep, err := cairn.Migrate(ctx, lite, pg, cairn.MigrateOptions{Space: g.Space(), PartSize: 700,
		Progress: func(stage string, done, total int) {
			if len(stages) == 0 || stages[len(stages)-1] != stage {
				stages = append(stages, stage)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SourceDigest != hex.EncodeToString(sum[:]) || rep.TargetDigest != rep.SourceDigest {
		t.Fatalf("digests %s / %s; want the export's %x", rep.SourceDigest, rep.TargetDigest, sum)
	}
	if strings.Join(stages, ",") != "records,verifying,vectors" || rep.Vectors != wantVec.InSpace || rep.Records < 2200 {
		t.Fatalf("report %+v, stages %v; want %d vectors", rep, stages, wantVec.InSpace)
	}
	got, gotVec := exportOf(t, pg)
	if got != want || gotVec.InSpace != wantVec.InSpace || gotVec.Pending != wantVec.Pending {
		t.Fatalf("PostgreSQL holds something else: vectors %+v vs %+v", gotVec, wantVec)
	}
	back := filepath.Join(dir, "back.db")
	if _, err := cairn.Migrate(ctx, pg, back, cairn.MigrateOptions{Space: g.Space()}); err != nil {
		t.Fatal(err)
	}
	again, againVec := exportOf(t, back)
	if again != want || againVec != wantVec {
		t.Fatalf("the round trip changed the records or vectors: %+v vs %+v", againVec, wantVec)
	}
	// The same question gets the same answer on all three.
	var answers []string
	for _, path := range []string{lite, pg, back} {
		e, err := cairn.Open(path, &cairn.Options{IndexDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Retrieve(ctx, cairn.RetrieveRequest{Query: "What did Caroline research about adoption?"})
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range res.Candidates {
			ids = append(ids, c.Entity.ID())
		}
		answers = append(answers, strings.Join(ids, " "))
	}
	if answers[0] != answers[1] || answers[0] != answers[2] || answers[0] == "" {
		t.Fatalf("hybrid answers differ:\n%s\n%s\n%s", answers[0], answers[1], answers[2])
	}
}

// Migrate refuses a target that holds records, a missing source and the
// same database twice, and changes nothing.
func TestMigrateRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	eng, err := cairn.Open(a, &cairn.Options{IndexDir: cairn.IndexInMemory})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Log(ctx, cairn.LogRequest{Kind: memory.KindMessage, Content: "already here"}); err != nil {
		t.Fatal(err)
	}
	eng.Close()
	before, _ := exportOf(t, a)
	pg := pgURL(t)
	if _, err := cairn.Migrate(ctx, a, pg, cairn.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		from, to string
		code     memory.Code
	}{
		"a target with records": {a, pg, memory.CodeConflict},
		"back onto the source":  {pg, a, memory.CodeConflict},
		"a missing source":      {filepath.Join(dir, "none.db"), filepath.Join(dir, "new.db"), memory.CodeNotFound},
		"the same database":     {a, a, memory.CodeInvalidParams},
	} {
		if _, err := cairn.Migrate(ctx, tc.from, tc.to, cairn.MigrateOptions{}); memory.CodeOf(err) != tc.code {
			t.Errorf("%s: %v; want %s", name, err, tc.code)
		}
	}
	if after, _ := exportOf(t, a); after != before {
		t.Fatal("a refused migration changed the source")
	}
	if _, err := os.Stat(filepath.Join(dir, "new.db")); err == nil {
		t.Fatal("a migration from a missing source created the target")
	}
}

// A migration that fails part-way (here: the caller gives up) leaves the
// target empty, so it can simply be run again.
func TestMigrateIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	lite := filepath.Join(dir, "from.db")
	eng, err := cairn.Open(lite, &cairn.Options{IndexDir: cairn.IndexInMemory})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(parityDataset)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Import(context.Background(), f, cairn.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	eng.Close()
	pg := pgURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err = cairn.Migrate(ctx, lite, pg, cairn.MigrateOptions{PartSize: 100, Progress: func(stage string, done, total int) {
		if stage == "records" && done >= 1000 {
			cancel()
		}
	}})
	if err == nil {
		t.Fatal("a migration canceled part-way succeeded")
	}
	if got, _ := exportOf(t, pg); got != "" {
		t.Fatalf("a failed migration left %d bytes of records in the target", len(got))
	}
	if _, err := cairn.Migrate(context.Background(), lite, pg, cairn.MigrateOptions{}); err != nil {
		t.Fatalf("running it again: %v", err)
	}
}

// A migration into a target that does not keep what it is given fails
// verification with a db_error that names no internals, and so does one
// whose vectors fail to copy; either way the target is left as it was
// (verification and vectors run inside the load's transaction), so once
// the cause is gone the same command simply succeeds.
func TestMigrateThatDoesNotVerifyChangesNothing(t *testing.T) {
	ctx := context.Background()
	lite := filepath.Join(t.TempDir(), "from.db")
	eng, err := cairn.Open(lite, &cairn.Options{IndexDir: cairn.IndexInMemory})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(parityDataset)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Import(ctx, f, cairn.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := eng.Reembed(ctx, cairn.ReembedRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	eng.Close()
	want, wantVec := exportOf(t, lite)
	pins := strings.Count(want, `{"pin":`)
	if pins == 0 {
		t.Fatal("the source holds no pins")
	}

	srv := pgtest.Shared(t)
	pg := pgURL(t)
	u, _ := url.Parse(pg)
	schema := u.Query().Get("cairn_schema")
	if _, empty := exportOf(t, pg); empty.InSpace != 0 { // creates the schema
		t.Fatal("a new schema holds vectors")
	}
	exec := func(sql string) {
		t.Helper()
		if _, err := srv.Exec(pg, strings.ReplaceAll(sql, "SCHEMA", schema)); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE FUNCTION SCHEMA.alter_content() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.content := NEW.content || ' (altered)'; RETURN NEW; END $$;
		CREATE FUNCTION SCHEMA.drop_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
		CREATE FUNCTION SCHEMA.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the secret-trigger'; END $$`)
	g, _ := embed.NewGloVe()
	for _, tc := range []struct {
		name, trigger, message string
	}{
		{"content altered on insert", "BEFORE INSERT ON SCHEMA.observations FOR EACH ROW EXECUTE FUNCTION SCHEMA.alter_content()", "does not verify: the source's export has SHA-256"},
		{"pins dropped on insert", "BEFORE INSERT ON SCHEMA.pins FOR EACH ROW EXECUTE FUNCTION SCHEMA.drop_row()", fmt.Sprintf("does not verify: pins %d in the source, 0 in the target", pins)},
		{"vectors refused", "BEFORE INSERT ON SCHEMA.embeddings FOR EACH ROW EXECUTE FUNCTION SCHEMA.refuse()", "copying the vectors failed"},
	} {
		exec("CREATE TRIGGER t_test " + tc.trigger)
		_, err := cairn.Migrate(ctx, lite, pg, cairn.MigrateOptions{Space: g.Space(), PartSize: 500})
		if memory.CodeOf(err) != memory.CodeDBError || !strings.Contains(err.Error(), tc.message) {
			t.Fatalf("%s: %v; want db_error %q", tc.name, err, tc.message)
		}
		msg := memory.Public(err).Message
		for _, internal := range []string{"postgres", "127.0.0.1", schema + ".", "SELECT", "INSERT", "trigger", "secret", "SQLSTATE", "pgx", "altered"} {
			if strings.Contains(msg, internal) {
				t.Errorf("%s: the error shows %q: %s", tc.name, internal, msg)
			}
		}
		if got, vec := exportOf(t, pg); got != "" || vec.InSpace != 0 {
			t.Fatalf("%s: the failed migration left %d bytes of records and %d vectors in the target", tc.name, len(got), vec.InSpace)
		}
		exec("DROP TRIGGER t_test ON " + strings.Fields(tc.trigger)[3])
	}
	rep, err := cairn.Migrate(ctx, lite, pg, cairn.MigrateOptions{Space: g.Space(), PartSize: 500})
	if err != nil {
		t.Fatalf("running it again once the target keeps what it is given: %v", err)
	}
	if got, vec := exportOf(t, pg); got != want || vec.InSpace != wantVec.InSpace || rep.Vectors != wantVec.InSpace || rep.TargetDigest != rep.SourceDigest {
		t.Fatalf("the migration run again: report %+v, vectors %+v; want %+v", rep, vec, wantVec)
	}
}
