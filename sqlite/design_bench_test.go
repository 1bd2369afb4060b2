package sqlite_test

import (
	"database/sql"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// The retrieval index could live inside the database (design 2 of the
// instant-start issue): its files as blobs, committed with the records.
// These benchmarks measure what that costs on this machine, against a
// real index directory (CAIRN_BENCH_INDEX, e.g. a 1M-record database's
// DB-index/ built by cairn bench scale --child build):
//
//	CAIRN_BENCH_INDEX=/tmp/s1m.db-index go test -run '^$' -bench IndexAsBlobs -benchtime 3x ./sqlite
//
// docs/BENCHMARKS.md (Instant start) compares them with the mapped
// files the index uses.

// indexFiles reads the index directory's files.
func indexFiles(b *testing.B) map[string][]byte {
	dir := os.Getenv("CAIRN_BENCH_INDEX")
	if dir == "" {
		b.Skip("set CAIRN_BENCH_INDEX to an index directory (DB-index/) to measure the index as SQLite blobs")
	}
	out := map[string][]byte{}
	names, _ := filepath.Glob(filepath.Join(dir, "*.cseg"))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		out[filepath.Base(n)] = data
	}
	if len(out) == 0 {
		b.Skipf("no segment files in %s", dir)
	}
	return out
}

// blobChunk is the size of one blob: 64 KiB, the block a search reads
// (a row per block lets a read take whole rows).
const blobChunk = 64 << 10

func blobDB(b *testing.B, path string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS index_blobs (name TEXT, chunk INTEGER, data BLOB, PRIMARY KEY (name, chunk)) WITHOUT ROWID"); err != nil {
		b.Fatal(err)
	}
	return db
}

// writeBlobs writes files as 64 KiB blobs in one transaction: the time a
// merge of that size would hold the database's one write lock.
func writeBlobs(b *testing.B, db *sql.DB, files map[string][]byte) {
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.Prepare("INSERT OR REPLACE INTO index_blobs VALUES (?, ?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	for name, data := range files {
		for c := 0; c*blobChunk < len(data); c++ {
			if _, err := stmt.Exec(name, c, data[c*blobChunk:min(len(data), (c+1)*blobChunk)]); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

func totalBytes(files map[string][]byte) int64 {
	var n int64
	for _, d := range files {
		n += int64(len(d))
	}
	return n
}

// BenchmarkIndexAsBlobsWrite: committing the whole index as blobs (what a
// build or a full merge would write, holding the write lock throughout).
func BenchmarkIndexAsBlobsWrite(b *testing.B) {
	files := indexFiles(b)
	n := totalBytes(files)
	b.SetBytes(n)
	var held time.Duration
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "blobs.db")
		db := blobDB(b, path)
		t0 := time.Now()
		writeBlobs(b, db, files)
		held += time.Since(t0)
		db.Close()
	}
	b.ReportMetric(held.Seconds()/float64(b.N), "s-lock-held/op")
}

// BenchmarkIndexAsBlobsRead: a new connection reading what a first search
// reads (64 MiB of 64 KiB ranges at random, about what a mapped index
// pages in for a first answer at a million records) into its own memory.
func BenchmarkIndexAsBlobsRead(b *testing.B) {
	files := indexFiles(b)
	path := filepath.Join(b.TempDir(), "blobs.db")
	db := blobDB(b, path)
	writeBlobs(b, db, files)
	db.Close()
	type chunk struct {
		name string
		c    int
	}
	var chunks []chunk
	for name, data := range files {
		for c := 0; c*blobChunk < len(data); c++ {
			chunks = append(chunks, chunk{name, c})
		}
	}
	const want, piece = 64 << 20, 64 << 10
	b.SetBytes(want)
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		db := blobDB(b, path)
		var got int
		for got < want {
			ch := chunks[rng.IntN(len(chunks))]
			var data []byte
			err := db.QueryRow("SELECT data FROM index_blobs WHERE name = ? AND chunk = ?", ch.name, ch.c).Scan(&data)
			if err != nil {
				b.Fatal(err)
			}
			got += piece
		}
		db.Close()
	}
}
