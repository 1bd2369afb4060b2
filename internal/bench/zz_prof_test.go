package bench

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
)

func TestZZLoadProf(t *testing.T) {
	url := os.Getenv("ZZ_PROF_URL")
	if url == "" {
		t.Skip()
	}
	n := 100000
	now := genNow(n)
	eng, err := cairn.Open(url, &cairn.Options{Now: func() time.Time { return now }, SkipEmbedOnWrite: true, IndexDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	gen := NewMemoryGen(1, n)
	for !gen.Done() {
		if err := eng.ImportDump(context.Background(), gen.Next(10000)); err != nil {
			t.Fatal(err)
		}
	}
	rs, _ := gen.Questions(200)
	b, _ := json.Marshal(rs)
	os.WriteFile("/tmp/postgres-scratch/questions.json", b, 0o644)
}
