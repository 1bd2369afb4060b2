package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/embed"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
	"github.com/cairnhq/cairn/retrieve"
)

// Scale benchmark defaults.
const (
	DefaultScaleQueries  = 500
	DefaultScaleBatch    = 10_000
	DefaultScaleOneByOne = 2000
	// MaxScaleSize bounds one size (records).
	MaxScaleSize = 10_000_000
	// scaleQuestions is how many distinct questions each run cycles through.
	scaleQuestions = 200
	// embedSample is how many texts the pure embedding rate is measured on.
	embedSample = 20_000
)

// ScaleOptions configure the scale benchmark.
type ScaleOptions struct {
	// Binary is the cairn executable: each size is built by one child
	// process (`cairn bench scale --child build`) and measured by another
	// (`--child serve`), so memory figures belong to one size and the
	// serving process opens the database cold. Empty runs both phases in
	// this process (tests).
	Binary string
	// Sizes are the records to generate, one database each.
	Sizes []int
	// Queries is the number of measured calls per run; Concurrency the
	// concurrent callers of each run; Providers the retrieval providers
	// measured (hybrid, local-fts).
	Queries     int
	Concurrency []int
	Providers   []string
	// Seed seeds the generator.
	Seed uint64
	// ApproximateFrom, when positive, also measures every size of at least
	// that many records with the semantic side approximate from that many
	// vectors (ServeApproximate), against the default exact search.
	ApproximateFrom int
	// Batch is the records per import transaction (default 10,000);
	// OneByOne how many records are written one per transaction (default
	// 2,000; 0 skips).
	Batch, OneByOne int
	// Dir is where the temporary databases go (a new directory inside it,
	// removed afterwards); default the system's temporary directory.
	Dir string
	// Log receives one line per step; Stderr the child processes' standard
	// error (their progress bars). Both default to io.Discard.
	Log, Stderr io.Writer
	// Progress, when set, is told how far a long step is (in this process).
	Progress func(stage string, done, total int)
	// Postgres, when set, is a PostgreSQL database (a postgres:// URL) in
	// which every size is measured too, right after SQLite, from the same
	// seed: in a schema of its own (dropped afterwards), with the
	// retrieval index in the size's temporary directory.
	Postgres string
}

// target is where a size's database lives: a SQLite file in the size's
// directory, or a schema of a PostgreSQL database.
type target struct {
	// Postgres is the connection string of the size's schema ("" for a
	// SQLite file).
	Postgres string
}

// store names the kind of database.
func (t target) store() string {
	if t.Postgres != "" {
		return "postgres"
	}
	return "sqlite"
}

// path is the database: the file in dir, or the connection string.
func (t target) path(dir string) string {
	if t.Postgres != "" {
		return t.Postgres
	}
	return filepath.Join(dir, scaleDBName)
}

// indexDir is the retrieval index's directory ("" for the default beside
// a SQLite file).
func (t target) indexDir(dir string) string {
	if t.Postgres != "" {
		return filepath.Join(dir, "index")
	}
	return ""
}

// indexFiles is the retrieval index's directory, default included.
func (t target) indexFiles(dir string) string {
	if d := t.indexDir(dir); d != "" {
		return d
	}
	return t.path(dir) + "-index"
}

// env is the environment of a cairn process on the database (nil: this
// process's).
func (t target) env(dir string) []string {
	if t.Postgres == "" {
		return nil
	}
	return append(os.Environ(), cairn.EnvIndexDir+"="+t.indexDir(dir))
}

// DropSchema deletes a benchmark's cairn schema (see postgres.DropSchema).
func DropSchema(conn string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return postgres.DropSchema(ctx, conn)
}

// WithSchema is a connection string naming another cairn schema.
func WithSchema(conn, schema string) string {
	u, err := url.Parse(conn)
	if err != nil {
		return conn
	}
	q := u.Query()
	q.Set("cairn_schema", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// ScaleReport is what the scale benchmark measured.
type ScaleReport struct {
	Machine     Machine      `json:"machine"`
	Seed        uint64       `json:"seed"`
	Queries     int          `json:"queries"`
	Concurrency []int        `json:"concurrency"`
	Providers   []string     `json:"providers"`
	Isolated    bool         `json:"isolated"`
	Sizes       []SizeReport `json:"sizes"`
	Seconds     float64      `json:"seconds"`
}

// Machine describes where a benchmark ran.
type Machine struct {
	GOOS        string `json:"goos"`
	GOARCH      string `json:"goarch"`
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpuModel,omitempty"`
	MemTotalMiB int    `json:"memTotalMiB,omitempty"`
	GoVersion   string `json:"goVersion"`
}

// SizeReport is one size's figures.
type SizeReport struct {
	Size int `json:"size"`
	// Store is the database: sqlite or postgres.
	Store string      `json:"store"`
	Build BuildResult `json:"build"`
	Serve ServeResult `json:"serve"`
	// ServeApproximate is Serve again, in another fresh process, with the
	// semantic side approximate (ScaleOptions.ApproximateFrom).
	ServeApproximate *ServeResult `json:"serveApproximate,omitempty"`
	// Processes is measured with the cairn binary only (Binary set).
	Processes *ProcessResult `json:"processes,omitempty"`
}

// BuildResult is what building one size's database measured.
type BuildResult struct {
	// Records counts the generated records by section.
	Records map[memory.Section]int `json:"records"`
	Total   int                    `json:"total"`
	// Batch is the records per transaction of the batched ingest;
	// IngestSeconds the time spent in ImportDump (generation and
	// embedding excluded); IngestPerSec the records per second.
	Batch         int     `json:"batch"`
	IngestSeconds float64 `json:"ingestSeconds"`
	IngestPerSec  float64 `json:"ingestPerSec"`
	// IngestCPUSeconds is the process's CPU time (user + system, all
	// threads) over the same calls, and IngestPerCPUSec the records per
	// CPU-second: a figure less sensitive to other work on the machine.
	IngestCPUSeconds float64 `json:"ingestCpuSeconds"`
	IngestPerCPUSec  float64 `json:"ingestPerCpuSec"`
	// OneByOne records were written into a separate database, one
	// transaction each (the write path of a single observation);
	// OneByOneP50Ms and OneByOneP99Ms are the latency of one such write.
	OneByOne       int     `json:"oneByOne"`
	OneByOnePerSec float64 `json:"oneByOnePerSec"`
	OneByOneP50Ms  float64 `json:"oneByOneP50Ms"`
	OneByOneP99Ms  float64 `json:"oneByOneP99Ms"`
	// EmbedPerSec is the GloVe embedder alone on EmbedSample texts of the
	// stream; ReembedSeconds and ReembedPerSec embedding every record and
	// storing its vector (cairn reembed).
	EmbedSample    int     `json:"embedSample"`
	EmbedPerSec    float64 `json:"embedPerSec"`
	ReembedSeconds float64 `json:"reembedSeconds"`
	ReembedPerSec  float64 `json:"reembedPerSec"`
	// IndexBuildSeconds is building the retrieval index's files from
	// scratch, once, for all but the last UpkeepRecords records.
	IndexBuildSeconds float64 `json:"indexBuildSeconds"`
	// UpkeepRecords are ingested (batched) after the index is built:
	// UpkeepIngestSeconds is their ingest, UpkeepIndexSeconds bringing the
	// index's files up to them (replay, write-out, merges: cairn index
	// optimize), and UpkeepPerSec the records per second of both.
	UpkeepRecords       int     `json:"upkeepRecords"`
	UpkeepIngestSeconds float64 `json:"upkeepIngestSeconds"`
	UpkeepIndexSeconds  float64 `json:"upkeepIndexSeconds"`
	UpkeepPerSec        float64 `json:"upkeepPerSec"`
	// DBBytes is the database on disk after closing (with any -wal/-shm);
	// IndexBytes the retrieval index's files.
	DBBytes    int64 `json:"dbBytes"`
	IndexBytes int64 `json:"indexBytes"`
	// PeakRSSMiB is the building process's VmHWM.
	PeakRSSMiB float64 `json:"peakRssMiB"`
	Load1      float64 `json:"load1"`
}

// ServeResult is what serving one size's database measured, in a process
// that opened it afresh.
type ServeResult struct {
	// OpenMs is cairn.Open; ColdStartMs open to the first hybrid Retrieve
	// answer (the in-memory index loads then); InnerVoiceFirstMs the first
	// inner_voice.retrieve after that. SettleMs is the wait for background
	// work (the approximate vector index builds from 250,000 vectors) to
	// finish before latency is measured.
	OpenMs            float64 `json:"openMs"`
	ColdStartMs       float64 `json:"coldStartMs"`
	InnerVoiceFirstMs float64 `json:"innerVoiceFirstMs"`
	SettleMs          float64 `json:"settleMs"`
	// Memory after the index is warm (before the latency runs): VmRSS,
	// RssAnon (without mapped files such as the database) and the Go heap
	// in use; PeakRSSMiB is VmHWM after all runs.
	RSSMiB     float64 `json:"rssMiB"`
	RSSAnonMiB float64 `json:"rssAnonMiB"`
	HeapMiB    float64 `json:"heapMiB"`
	PeakRSSMiB float64 `json:"peakRssMiB"`
	// LiveHeapMiB is the Go heap in use right after a forced collection
	// (measured after the RSS figures): what the index and engine keep.
	// GCPercent is the collector's setting in the serving process (the
	// cairn binary sets 400 unless GOGC is set), which lets the heap grow
	// that much over the live heap between collections.
	LiveHeapMiB float64 `json:"liveHeapMiB"`
	GCPercent   int     `json:"gcPercent"`
	Runs        []Run   `json:"runs"`
	Load1       float64 `json:"load1"`
	// ApproximateFrom is the option the process ran with (0: exact);
	// when set, of Compared retrieve questions, SameAsExact counts those
	// whose hybrid answer was byte-identical to the exact search's, and
	// SameCandidates those whose candidates were (the rest differ in
	// provenance's counts only).
	ApproximateFrom int `json:"approximateFrom,omitempty"`
	// HNSWBuildSeconds is building pgvector's HNSW index of the
	// observations' vectors for the push-down measurement (PostgreSQL
	// with pgvector only).
	HNSWBuildSeconds float64 `json:"hnswBuildSeconds,omitempty"`
	SameAsExact      int     `json:"sameAsExact,omitempty"`
	SameCandidates   int     `json:"sameCandidates,omitempty"`
	Compared         int     `json:"compared,omitempty"`
}

// scaleQuestionsFile is where the build phase leaves the questions and
// clock for the serve phase.
type scaleQuestionsFile struct {
	NowMs      int64                        `json:"nowMs"`
	Retrieve   []cairn.RetrieveRequest      `json:"retrieve"`
	InnerVoice []retrieve.InnerVoiceRequest `json:"innerVoice"`
}

const (
	scaleDBName        = "scale.db"
	scaleQuestionsName = "questions.json"
)

// ParseSizes reads a comma-separated list of record counts: 300, 10k,
// 100k, 1M, 2.5m, 10_000.
func ParseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, memory.Errorf(memory.CodeInvalidParams, "--sizes %q: empty entry (want e.g. 10k,100k,1M)", s)
		}
		mult := 1.0
		num := f
		switch f[len(f)-1] {
		case 'k', 'K':
			mult, num = 1e3, f[:len(f)-1]
		case 'm', 'M':
			mult, num = 1e6, f[:len(f)-1]
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(num, "_", ""), 64)
		n := v * mult
		if err != nil || n != float64(int(n)) {
			return nil, memory.Errorf(memory.CodeInvalidParams, "--sizes: %q is not a record count (want e.g. 10k, 100k, 1M)", f)
		}
		if n < 1 || n > MaxScaleSize {
			return nil, memory.Errorf(memory.CodeInvalidParams, "--sizes: %q is out of range [1, %d]", f, MaxScaleSize)
		}
		out = append(out, int(n))
	}
	return out, nil
}

// ParseConcurrency reads a comma-separated list of caller counts (1..256).
func ParseConcurrency(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 256 {
			return nil, memory.Errorf(memory.CodeInvalidParams, "--concurrency: %q is not a caller count in [1, 256]", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseProviders reads a comma-separated list of retrieval providers.
func ParseProviders(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f != retrieve.HybridName && f != retrieve.LocalFTSName {
			return nil, memory.Errorf(memory.CodeInvalidParams, "--provider: unknown provider %q (want hybrid, local-fts or both, comma-separated)", f)
		}
		out = append(out, f)
	}
	return out, nil
}

// SizeName names a record count: 300, 10k, 1M.
func SizeName(n int) string {
	switch {
	case n >= 1e6 && n%1e6 == 0:
		return fmt.Sprintf("%dM", n/1e6)
	case n >= 1e3 && n%1e3 == 0:
		return fmt.Sprintf("%dk", n/1e3)
	}
	return strconv.Itoa(n)
}

func (o *ScaleOptions) check() error {
	if len(o.Sizes) == 0 {
		return memory.Errorf(memory.CodeInvalidParams, "no sizes given")
	}
	for _, n := range o.Sizes {
		if n < 1 || n > MaxScaleSize {
			return memory.Errorf(memory.CodeInvalidParams, "size %d is out of range [1, %d]", n, MaxScaleSize)
		}
	}
	if o.Queries < 1 || o.Queries > 1_000_000 {
		return memory.Errorf(memory.CodeInvalidParams, "--queries %d is out of range [1, 1000000]", o.Queries)
	}
	if len(o.Concurrency) == 0 {
		o.Concurrency = []int{1, 8}
	}
	for _, c := range o.Concurrency {
		if c < 1 || c > 256 {
			return memory.Errorf(memory.CodeInvalidParams, "concurrency %d is out of range [1, 256]", c)
		}
	}
	if len(o.Providers) == 0 {
		o.Providers = []string{retrieve.HybridName, retrieve.LocalFTSName}
	}
	if _, err := ParseProviders(strings.Join(o.Providers, ",")); err != nil {
		return err
	}
	if o.Batch == 0 {
		o.Batch = DefaultScaleBatch
	}
	if o.Batch < 1 || o.OneByOne < 0 {
		return memory.Errorf(memory.CodeInvalidParams, "batch must be ≥ 1 and one-by-one ≥ 0")
	}
	if o.Dir != "" {
		if st, err := os.Stat(o.Dir); err != nil || !st.IsDir() {
			return memory.Errorf(memory.CodeInvalidParams, "--dir %q is not an existing directory", o.Dir)
		}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return nil
}

// Scale builds a database of generated memory per size and measures
// ingest, size on disk, memory, cold start and latency on it. Temporary
// databases are removed when it returns, also on error or cancellation.
func Scale(ctx context.Context, o ScaleOptions) (ScaleReport, error) {
	if err := o.check(); err != nil {
		return ScaleReport{}, err
	}
	start := time.Now()
	rep := ScaleReport{Machine: machine(), Seed: o.Seed, Queries: o.Queries, Concurrency: o.Concurrency,
		Providers: o.Providers, Isolated: o.Binary != ""}
	dir, err := workDir(o.Dir, "cairn-scale-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	targets := []target{{}}
	if o.Postgres != "" {
		targets = append(targets, target{Postgres: o.Postgres})
	}
	for _, n := range o.Sizes {
		for _, t := range targets {
			if t.Postgres != "" {
				t.Postgres = WithSchema(o.Postgres, fmt.Sprintf("cairn_scale_%s_%d", strings.ToLower(SizeName(n)), os.Getpid()))
			}
			sr, err := o.measureSize(ctx, dir, n, t)
			if t.Postgres != "" {
				if derr := postgres.DropSchema(context.WithoutCancel(ctx), t.Postgres); derr != nil && err == nil {
					err = derr
				}
			}
			if err != nil {
				return rep, err
			}
			rep.Sizes = append(rep.Sizes, sr)
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// measureSize builds and measures one size on one target.
func (o *ScaleOptions) measureSize(ctx context.Context, dir string, n int, t target) (SizeReport, error) {
	name := SizeName(n)
	sub := filepath.Join(dir, name)
	if t.Postgres != "" {
		name += " on PostgreSQL"
		sub += "-postgres"
	}
	defer os.RemoveAll(sub) // free the disk before the next size
	sr := SizeReport{Size: n, Store: t.store()}
	if err := os.Mkdir(sub, 0o755); err != nil {
		return sr, memory.Wrap(memory.CodeInternal, err, "temporary directory: %v", err)
	}
	var err error
	fmt.Fprintf(o.Log, "%s: generating and loading %d records\n", name, n)
	b := BuildOptions{Dir: sub, Size: n, Seed: o.Seed, Batch: o.Batch, OneByOne: o.OneByOne, Progress: o.Progress, Postgres: t.Postgres}
	s := ServeOptions{Dir: sub, Queries: o.Queries, Concurrency: o.Concurrency, Providers: o.Providers, Progress: o.Log, Postgres: t.Postgres}
	if o.Binary == "" {
		if sr.Build, err = ScaleBuild(ctx, b); err != nil {
			return sr, err
		}
		fmt.Fprintf(o.Log, "%s: measuring\n", name)
		if sr.Serve, err = ScaleServe(ctx, s); err != nil {
			return sr, err
		}
		if o.ApproximateFrom > 0 && n >= o.ApproximateFrom {
			s.ApproximateFrom = o.ApproximateFrom
			ap, err := ScaleServe(ctx, s)
			if err != nil {
				return sr, err
			}
			sr.ServeApproximate = &ap
		}
	} else {
		if err := o.child(ctx, &sr.Build, t, "build", "--dir", sub, "--size", strconv.Itoa(n), "--seed", strconv.FormatUint(o.Seed, 10),
			"--batch", strconv.Itoa(o.Batch), "--one-by-one", strconv.Itoa(o.OneByOne)); err != nil {
			return sr, err
		}
		fmt.Fprintf(o.Log, "%s: measuring in a fresh process\n", name)
		if err := o.child(ctx, &sr.Serve, t, "serve", "--dir", sub, "--queries", strconv.Itoa(o.Queries),
			"--concurrency", joinInts(o.Concurrency), "--provider", strings.Join(o.Providers, ",")); err != nil {
			return sr, err
		}
		if o.ApproximateFrom > 0 && n >= o.ApproximateFrom {
			fmt.Fprintf(o.Log, "%s: measuring in a fresh process, approximate from %d vectors\n", name, o.ApproximateFrom)
			var ap ServeResult
			if err := o.child(ctx, &ap, t, "serve", "--dir", sub, "--queries", strconv.Itoa(o.Queries),
				"--concurrency", joinInts(o.Concurrency), "--provider", strings.Join(o.Providers, ","),
				"--approximate-from", strconv.Itoa(o.ApproximateFrom)); err != nil {
				return sr, err
			}
			sr.ServeApproximate = &ap
		}
		fmt.Fprintf(o.Log, "%s: measuring new cairn processes\n", name)
		pr, err := measureProcesses(ctx, o.Binary, sub, t, o.Log)
		if err != nil {
			return sr, err
		}
		sr.Processes = &pr
	}
	return sr, nil
}

// child runs one phase in a child process and decodes its JSON answer.
// Cancelling ctx interrupts the child (SIGINT), which stops cleanly.
func (o *ScaleOptions) child(ctx context.Context, out any, t target, phase string, args ...string) error {
	if t.Postgres != "" {
		// The connection string goes in the environment, not on the
		// command line.
		args = append(args, "--postgres", "env")
	}
	cmd := exec.CommandContext(ctx, o.Binary, append([]string{"bench", "scale", "--child", phase}, args...)...)
	cmd.Env = append(os.Environ(), ScalePostgresEnv+"="+t.Postgres)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, o.Stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return memory.Wrap(memory.CodeInternal, ctx.Err(), "interrupted")
	}
	if err != nil {
		return memory.Wrap(memory.CodeInternal, err, "the %s phase failed: %v", phase, err)
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return memory.Wrap(memory.CodeInternal, err, "reading the %s phase's answer: %v", phase, err)
	}
	return nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// ScalePostgresEnv carries a size's connection string to the child
// processes of the scale benchmark.
const ScalePostgresEnv = "CAIRN_BENCH_POSTGRES"

// BuildOptions configure the build phase of one size.
type BuildOptions struct {
	Dir string
	// Postgres is the size's schema ("" for a SQLite file in Dir).
	Postgres            string
	Size                int
	Seed                uint64
	Batch, OneByOne     int
	Progress            func(stage string, done, total int)
	embedSampleOverride int
}

func (o BuildOptions) progress(stage string) func(done, total int) {
	if o.Progress == nil {
		return nil
	}
	return func(done, total int) { o.Progress(stage, done, total) }
}

// genNow is the clock of a generated database: after every record.
func genNow(size int) time.Time {
	return time.UnixMilli(1_700_000_000_000 + int64(size+1)*60_000)
}

// ScaleBuild generates Size records into Dir/scale.db in transactions of
// Batch records, embeds them, writes the questions for the serve phase,
// and measures the one-by-one rate on a separate database.
func ScaleBuild(ctx context.Context, o BuildOptions) (BuildResult, error) {
	res := BuildResult{Batch: o.Batch, OneByOne: o.OneByOne}
	if o.Size < 1 || o.Batch < 1 || o.OneByOne < 0 {
		return res, memory.Errorf(memory.CodeInvalidParams, "size and batch must be ≥ 1, one-by-one ≥ 0")
	}
	t := target{Postgres: o.Postgres}
	path := t.path(o.Dir)
	if _, err := os.Stat(path); err == nil && t.Postgres == "" {
		return res, memory.Errorf(memory.CodeConflict, "%s already exists; give an empty directory", path)
	}
	now := genNow(o.Size)
	eng, err := cairn.Open(path, &cairn.Options{Now: func() time.Time { return now }, SkipEmbedOnWrite: true, IndexDir: t.indexDir(o.Dir)})
	if err != nil {
		return res, err
	}
	sl := &scaleLoad{o: o, eng: eng, gen: NewMemoryGen(o.Seed, o.Size), sample: embedSample, loaded: o.progress("loading")}
	defer func() {
		if sl.eng != nil {
			sl.eng.Close()
		}
	}()
	if o.embedSampleOverride > 0 {
		sl.sample = o.embedSampleOverride
	}
	if err := sl.run(ctx, &res); err != nil {
		return res, err
	}
	var st memory.Stats
	if t.Postgres != "" {
		if st, err = eng.Stats(ctx); err != nil {
			return res, err
		}
	}
	err = eng.Close()
	sl.eng = nil
	if err != nil {
		return res, err
	}
	if t.Postgres != "" {
		res.DBBytes = st.SizeBytes
	} else if res.DBBytes, err = dbBytes(path); err != nil {
		return res, err
	}
	res.IndexBytes = dirBytes(t.indexFiles(o.Dir))
	if err := embedRate(ctx, sl.texts, &res); err != nil {
		return res, err
	}
	rs, ivs := sl.gen.Questions(scaleQuestions)
	qf, _ := json.Marshal(scaleQuestionsFile{NowMs: now.UnixMilli(), Retrieve: rs, InnerVoice: ivs})
	if err := os.WriteFile(filepath.Join(o.Dir, scaleQuestionsName), qf, 0o644); err != nil {
		return res, memory.Wrap(memory.CodeInternal, err, "writing the questions: %v", err)
	}
	if o.OneByOne > 0 {
		lat, err := oneByOne(ctx, o.Dir, t, o.Seed+1, o.OneByOne)
		if err != nil {
			return res, err
		}
		var spent time.Duration
		for _, d := range lat {
			spent += d
		}
		res.OneByOnePerSec = float64(len(lat)) / spent.Seconds()
		res.OneByOneP50Ms, res.OneByOneP99Ms = Percentile(lat, 0.50), Percentile(lat, 0.99)
	}
	res.PeakRSSMiB = procStatus()["VmHWM"]
	res.Load1 = load1()
	return res, nil
}

// scaleLoad is ScaleBuild's loading of generated records: what it
// ingested and embedded, in how long, and a sample of the texts.
type scaleLoad struct {
	o        BuildOptions
	eng      *cairn.Engine
	gen      *MemoryGen
	sample   int      // the texts to keep
	texts    []string // the first sample texts
	ingest   time.Duration
	cpu      int64 // clock ticks spent ingesting
	loaded   func(done, total int)
	reembed  time.Duration
	embedded int
}

// run ingests the records, embeds them and builds the retrieval index;
// the last tenth is ingested after the index is built, to measure what
// keeping it current costs.
func (sl *scaleLoad) run(ctx context.Context, res *BuildResult) error {
	o, eng := sl.o, sl.eng
	upkeep := o.Size / 10
	if err := sl.ingestUntil(ctx, o.Size-upkeep); err != nil {
		return err
	}
	if err := sl.embedAll(ctx); err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := eng.RebuildIndex(ctx); err != nil {
		return err
	}
	res.IndexBuildSeconds = time.Since(t0).Seconds()
	before := sl.ingest
	if err := sl.ingestUntil(ctx, o.Size); err != nil {
		return err
	}
	res.UpkeepRecords, res.UpkeepIngestSeconds = sl.gen.sent-(o.Size-upkeep), (sl.ingest - before).Seconds()
	if err := sl.embedAll(ctx); err != nil {
		return err
	}
	t0 = time.Now()
	if _, err := eng.OptimizeIndex(ctx, true); err != nil {
		return err
	}
	res.UpkeepIndexSeconds = time.Since(t0).Seconds()
	if res.UpkeepRecords > 0 {
		res.UpkeepPerSec = float64(res.UpkeepRecords) / (res.UpkeepIngestSeconds + res.UpkeepIndexSeconds)
	}
	res.Records, res.Total = sl.gen.Counts(), sl.gen.sent
	res.IngestSeconds = sl.ingest.Seconds()
	res.IngestPerSec = float64(res.Total) / sl.ingest.Seconds()
	if sl.cpu > 0 {
		res.IngestCPUSeconds = float64(sl.cpu) / clockTicks
		res.IngestPerCPUSec = float64(res.Total) / res.IngestCPUSeconds
	}
	res.ReembedSeconds = sl.reembed.Seconds()
	res.ReembedPerSec = float64(sl.embedded) / res.ReembedSeconds
	return nil
}

// ingestUntil ingests generated records in batches until n are sent.
func (sl *scaleLoad) ingestUntil(ctx context.Context, n int) error {
	gen := sl.gen
	for !gen.Done() && gen.sent < n {
		d := gen.Next(min(sl.o.Batch, n-gen.sent))
		for _, ob := range d.Observations {
			if len(sl.texts) < sl.sample {
				sl.texts = append(sl.texts, ob.Content)
			}
		}
		for _, t := range d.Thoughts {
			if len(sl.texts) < sl.sample {
				sl.texts = append(sl.texts, t.Content)
			}
		}
		c0, _ := cpuTicks()
		t0 := time.Now()
		if err := sl.eng.ImportDump(ctx, d); err != nil {
			return err
		}
		sl.ingest += time.Since(t0)
		c1, _ := cpuTicks()
		sl.cpu += c1 - c0
		if sl.loaded != nil {
			sl.loaded(gen.sent, sl.o.Size)
		}
	}
	return nil
}

// embedAll embeds the records waiting for a vector.
func (sl *scaleLoad) embedAll(ctx context.Context) error {
	t0 := time.Now()
	rr, err := sl.eng.Reembed(ctx, cairn.ReembedRequest{}, sl.o.progress("embedding"))
	sl.reembed += time.Since(t0)
	sl.embedded += rr.Embedded
	return err
}

// embedRate measures the built-in embedder on the sample texts.
func embedRate(ctx context.Context, texts []string, res *BuildResult) error {
	g, err := embed.NewGloVe()
	if err != nil {
		return err
	}
	t0 := time.Now()
	for i := 0; i < len(texts); i += 64 {
		if _, err := g.Embed(ctx, texts[i:min(i+64, len(texts))]); err != nil {
			return err
		}
	}
	res.EmbedSample = len(texts)
	res.EmbedPerSec = float64(len(texts)) / time.Since(t0).Seconds()
	return nil
}

// oneByOne writes n generated records into a new database, one
// transaction each, and returns how long each write took. The database is
// removed afterwards.
func oneByOne(ctx context.Context, dir string, t target, seed uint64, n int) ([]time.Duration, error) {
	path := filepath.Join(dir, "one-by-one.db")
	index := ""
	if t.Postgres != "" {
		path = WithSchema(t.Postgres, "cairn_scale_one_"+strconv.Itoa(os.Getpid()))
		index = filepath.Join(dir, "one-by-one-index")
		defer postgres.DropSchema(context.WithoutCancel(ctx), path)
	} else {
		defer removeDB(path)
	}
	now := genNow(n)
	eng, err := cairn.Open(path, &cairn.Options{Now: func() time.Time { return now }, SkipEmbedOnWrite: true, IndexDir: index})
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	gen := NewMemoryGen(seed, n)
	lat := make([]time.Duration, 0, n)
	for !gen.Done() {
		d := gen.Next(1)
		t0 := time.Now()
		if err := eng.ImportDump(ctx, d); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, nil
}

func removeDB(path string) {
	for _, s := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + s)
	}
	os.RemoveAll(path + "-index")
}

// dirBytes is the size of the files in dir.
func dirBytes(dir string) int64 {
	es, _ := os.ReadDir(dir)
	var n int64
	for _, e := range es {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

func dbBytes(path string) (int64, error) {
	var total int64
	for _, s := range []string{"", "-wal", "-shm"} {
		st, err := os.Stat(path + s)
		if errors.Is(err, os.ErrNotExist) && s != "" {
			continue
		}
		if err != nil {
			return 0, memory.Wrap(memory.CodeInternal, err, "measuring the database: %v", err)
		}
		total += st.Size()
	}
	return total, nil
}

// ServeOptions configure the serve phase of one size.
type ServeOptions struct {
	Dir string
	// Postgres is the size's schema ("" for a SQLite file in Dir).
	Postgres    string
	Queries     int
	Concurrency []int
	Providers   []string
	Progress    io.Writer
	// ApproximateFrom opens the engine with IndexApproximateFrom.
	ApproximateFrom int
}

// ScaleServe opens Dir/scale.db afresh and measures cold start, memory
// and the latency of Retrieve per provider and of inner_voice.retrieve,
// under each concurrency.
func ScaleServe(ctx context.Context, o ServeOptions) (ServeResult, error) {
	var res ServeResult
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	qf, err := readQuestions(o.Dir)
	if err != nil {
		return res, err
	}
	now := time.UnixMilli(qf.NowMs)
	iv := retrieve.DefaultInnerVoiceConfig()
	iv.Enabled = true
	t0 := time.Now()
	t := target{Postgres: o.Postgres}
	opts := func(approx int) *cairn.Options {
		return &cairn.Options{Now: func() time.Time { return now }, InnerVoice: &iv, IndexApproximateFrom: approx, IndexDir: t.indexDir(o.Dir)}
	}
	eng, err := cairn.Open(t.path(o.Dir), opts(o.ApproximateFrom))
	if err != nil {
		return res, err
	}
	defer eng.Close()
	res.ApproximateFrom = o.ApproximateFrom
	res.OpenMs = ms(time.Since(t0))
	if _, err := eng.Retrieve(ctx, qf.Retrieve[0]); err != nil {
		return res, err
	}
	res.ColdStartMs = ms(time.Since(t0))
	t1 := time.Now()
	if _, err := eng.InnerVoice(ctx, qf.InnerVoice[0]); err != nil {
		return res, err
	}
	res.InnerVoiceFirstMs = ms(time.Since(t1))
	if o.ApproximateFrom > 0 {
		// Train the centroids now (a server does it in the background).
		fmt.Fprintln(o.Progress, "  training the approximate search's centroids")
		st, err := eng.OptimizeIndex(ctx, true)
		if err != nil {
			return res, err
		}
		if len(st.Approximate) == 0 {
			return res, memory.Errorf(memory.CodeInternal, "no vector group reached %d vectors: nothing is approximate", o.ApproximateFrom)
		}
	}
	fmt.Fprintln(o.Progress, "  waiting for background index builds to settle")
	res.SettleMs = ms(settle(ctx, 10*time.Minute))

	res.readMemory()
	runs := serveRuns(eng, qf, o)
	for _, r := range runs {
		fmt.Fprintf(o.Progress, "  measuring %s\n", r.path)
		Load(ctx, r.clients, min(50, o.Queries), r.do)
		s := Load(ctx, r.clients, o.Queries, r.do)
		if err := ctx.Err(); err != nil {
			return res, memory.Wrap(memory.CodeInternal, err, "interrupted")
		}
		if s.Errors > 0 {
			return res, memory.Errorf(memory.CodeInternal, "%s: %d of %d calls failed", r.path, s.Errors, s.Requests)
		}
		res.Runs = append(res.Runs, Run{Path: r.path, Stats: s})
	}
	// The kernel updates VmHWM lazily (RSS counters are cached per
	// thread): the peak is at least the RSS read before.
	res.PeakRSSMiB = max(procStatus()["VmHWM"], res.RSSMiB)
	if o.ApproximateFrom > 0 {
		if res.SameAsExact, res.SameCandidates, res.Compared, err = sameAnswers(ctx, eng, t.path(o.Dir), opts(0), qf.Retrieve); err != nil {
			return res, err
		}
	}
	if t.Postgres != "" && o.ApproximateFrom == 0 {
		if err := measurePushdown(ctx, t.Postgres, qf, o, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// readQuestions reads the questions ScaleBuild wrote in dir.
func readQuestions(dir string) (scaleQuestionsFile, error) {
	var qf scaleQuestionsFile
	raw, err := os.ReadFile(filepath.Join(dir, scaleQuestionsName))
	if err != nil {
		return qf, memory.Wrap(memory.CodeInvalidParams, err, "reading the questions: %v", err)
	}
	if err := json.Unmarshal(raw, &qf); err != nil {
		return qf, memory.Wrap(memory.CodeInvalidParams, err, "reading the questions: %v", err)
	}
	if len(qf.Retrieve) == 0 || len(qf.InnerVoice) == 0 {
		return qf, memory.Errorf(memory.CodeInvalidParams, "the generated database has too few records to ask questions about")
	}
	return qf, nil
}

// readMemory records the process's memory once the index settled: resident,
// heap in use, live heap after a collection (and, with
// CAIRN_MEMPROFILE, a heap profile), the collector's setting, the load.
func (res *ServeResult) readMemory() {
	st := procStatus()
	res.RSSMiB, res.RSSAnonMiB = st["VmRSS"], st["RssAnon"]
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	res.HeapMiB = float64(mem.HeapInuse) / (1 << 20)
	runtime.GC()
	runtime.ReadMemStats(&mem)
	res.LiveHeapMiB = float64(mem.HeapInuse) / (1 << 20)
	if path := os.Getenv("CAIRN_MEMPROFILE"); path != "" {
		// What the warm index keeps, for performance reports.
		if f, err := os.Create(path); err == nil {
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	res.GCPercent = debug.SetGCPercent(-1)
	debug.SetGCPercent(res.GCPercent)
	res.Load1 = load1()
}

// serveRun is one measured path of ScaleServe.
type serveRun struct {
	path    string
	clients int
	do      func(context.Context, int, int) error
}

// serveRuns are ScaleServe's paths: Retrieve per provider, then
// inner_voice.retrieve, under each concurrency.
func serveRuns(eng *cairn.Engine, qf scaleQuestionsFile, o ServeOptions) []serveRun {
	var runs []serveRun
	for _, p := range o.Providers {
		qs := make([]cairn.RetrieveRequest, len(qf.Retrieve))
		for i, q := range qf.Retrieve {
			q.Provider = p
			qs[i] = q
		}
		for _, c := range o.Concurrency {
			runs = append(runs, serveRun{fmt.Sprintf("retrieve %s, c=%d", p, c), c, func(ctx context.Context, _, i int) error {
				r, err := eng.Retrieve(ctx, qs[i%len(qs)])
				if err == nil && r.Provenance.ProviderUsed != p {
					err = fmt.Errorf("provider used %q, want %q", r.Provenance.ProviderUsed, p)
				}
				return err
			}})
		}
	}
	for _, c := range o.Concurrency {
		runs = append(runs, serveRun{fmt.Sprintf("inner_voice.retrieve, c=%d", c), c, func(ctx context.Context, _, i int) error {
			_, err := eng.InnerVoice(ctx, qf.InnerVoice[i%len(qf.InnerVoice)])
			return err
		}})
	}
	return runs
}

// measurePushdown measures semantic search done by PostgreSQL, the
// alternative to each server's retrieval index: the nearest observations
// to each question in its scope, from pgvector's HNSW index (built first,
// and timed) or, without pgvector, from an exact scan over the arrays.
func measurePushdown(ctx context.Context, conn string, qf scaleQuestionsFile, o ServeOptions, res *ServeResult) error {
	db, err := postgres.Open(ctx, conn, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	g, err := embed.NewGloVe()
	if err != nil {
		return err
	}
	space := g.Space()
	how := "exact scan over arrays"
	if db.Vectors() == "pgvector" {
		how = "pgvector HNSW"
		fmt.Fprintln(o.Progress, "  building the HNSW index")
		t0 := time.Now()
		if err := db.EnsureVectorIndex(ctx, space); err != nil {
			return err
		}
		res.HNSWBuildSeconds = time.Since(t0).Seconds()
	}
	vecs := make([][]float32, len(qf.Retrieve))
	for i, q := range qf.Retrieve {
		v, err := g.Embed(ctx, []string{q.Query})
		if err != nil {
			return err
		}
		vecs[i] = v[0]
	}
	for _, c := range o.Concurrency {
		path := fmt.Sprintf("pushdown: nearest 10 (%s), c=%d", how, c)
		fmt.Fprintf(o.Progress, "  measuring %s\n", path)
		do := func(ctx context.Context, _, i int) error {
			_, err := db.NearestObservations(ctx, space, vecs[i%len(vecs)], 10, qf.Retrieve[i%len(qf.Retrieve)].ScopeIDs)
			return err
		}
		Load(ctx, c, min(50, o.Queries), do)
		st := Load(ctx, c, o.Queries, do)
		if st.Errors > 0 {
			return memory.Errorf(memory.CodeInternal, "%s: %d of %d calls failed", path, st.Errors, st.Requests)
		}
		res.Runs = append(res.Runs, Run{Path: path, Stats: st})
	}
	return nil
}

// sameAnswers counts the questions eng answers byte for byte as an engine
// opened on path with opts does, and those whose candidates are alike.
func sameAnswers(ctx context.Context, eng *cairn.Engine, path string, opts *cairn.Options, qs []cairn.RetrieveRequest) (same, sameCands, n int, err error) {
	ref, err := cairn.Open(path, opts)
	if err != nil {
		return 0, 0, 0, err
	}
	defer ref.Close()
	for _, q := range qs {
		a, err := eng.Retrieve(ctx, q)
		if err != nil {
			return 0, 0, 0, err
		}
		b, err := ref.Retrieve(ctx, q)
		if err != nil {
			return 0, 0, 0, err
		}
		aj, _ := json.Marshal(a)
		bj, _ := json.Marshal(b)
		if bytes.Equal(aj, bj) {
			same++
		}
		aj, _ = json.Marshal(a.Candidates)
		bj, _ = json.Marshal(b.Candidates)
		if bytes.Equal(aj, bj) {
			sameCands++
		}
		n++
	}
	return same, sameCands, n, nil
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// settle waits until this process's CPU use drops below a tenth of a core
// over half a second (background work such as an approximate index build
// has finished), or until limit, and returns how long it waited. Without
// /proc it returns at once.
func settle(ctx context.Context, limit time.Duration) time.Duration {
	start := time.Now()
	prev, ok := cpuTicks()
	for ok && time.Since(start) < limit && ctx.Err() == nil {
		time.Sleep(500 * time.Millisecond)
		cur, _ := cpuTicks()
		if cur-prev <= 5 { // clock ticks are 10 ms: ≤ 50 ms of CPU in 500 ms
			break
		}
		prev = cur
	}
	return time.Since(start)
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/self/stat times
// (100 on every Linux architecture Go supports).
const clockTicks = 100

// cpuTicks is this process's user + system CPU time in clock ticks, from
// /proc/self/stat.
func cpuTicks() (int64, bool) { return procTicks("self") }

// procTicks is process pid's ("self": this one's) user + system CPU time
// in clock ticks, from /proc/PID/stat.
func procTicks(pid string) (int64, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	return u + k, err1 == nil && err2 == nil
}

// machineTicks is the CPU time all of the machine's cores spent busy
// (not idle or waiting for I/O), in clock ticks, from /proc/stat.
func machineTicks() (int64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		busy += n
	}
	return busy, true
}

// procStatus reads the kB figures of /proc/self/status, in MiB (empty off
// Linux).
func procStatus() map[string]float64 {
	out := map[string]float64{}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		f := strings.Fields(val)
		if !ok || len(f) != 2 || f[1] != "kB" {
			continue
		}
		if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
			out[key] = kb / 1024
		}
	}
	return out
}

// load1 is the one-minute load average (0 off Linux).
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func machine() Machine {
	m := Machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					kb, _ := strconv.Atoi(f[0])
					m.MemTotalMiB = kb / 1024
				}
			}
		}
	}
	return m
}

// run returns the run of path, if measured.
func (s ServeResult) run(path string) (Stats, bool) {
	for _, r := range s.Runs {
		if r.Path == path {
			return r.Stats, true
		}
	}
	return Stats{}, false
}

// sizeLabel names a size, and its database when it is PostgreSQL.
func sizeLabel(s SizeReport) string {
	if s.Store == "postgres" {
		return SizeName(s.Size) + " pg"
	}
	return SizeName(s.Size)
}

// WriteScaleTable prints the report as aligned tables.
func WriteScaleTable(w io.Writer, rep ScaleReport) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "size\trecords\tingest rec/s (batched)\trec/CPU-s\tone-by-one rec/s\twrite p50 ms\twrite p99 ms\tembed rec/s (GloVe)\treembed rec/s\tdb MiB\tbuild peak MiB\tload\t")
	for _, s := range rep.Sizes {
		b := s.Build
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.0f\t%.0f\t%.1f\t%.0f\t%.2f\t\n", sizeLabel(s), b.Total, b.IngestPerSec, b.IngestPerCPUSec,
			b.OneByOnePerSec, b.OneByOneP50Ms, b.OneByOneP99Ms, b.EmbedPerSec, b.ReembedPerSec, float64(b.DBBytes)/(1<<20), b.PeakRSSMiB, b.Load1)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "size\tindex build s\tindex MiB\tupkeep records\tingest s\tindex upkeep s\tingest + upkeep rec/s\t")
	for _, s := range rep.Sizes {
		b := s.Build
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%d\t%.2f\t%.2f\t%.0f\t\n", sizeLabel(s), b.IndexBuildSeconds, float64(b.IndexBytes)/(1<<20),
			b.UpkeepRecords, b.UpkeepIngestSeconds, b.UpkeepIndexSeconds, b.UpkeepPerSec)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "size\topen ms\tcold start ms\tfirst inner_voice ms\tsettle ms\tRSS MiB\tRssAnon MiB\theap MiB\tlive heap MiB\tpeak RSS MiB\tload\t")
	for _, s := range rep.Sizes {
		v := s.Serve
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t\n", sizeLabel(s), v.OpenMs, v.ColdStartMs,
			v.InnerVoiceFirstMs, v.SettleMs, v.RSSMiB, v.RSSAnonMiB, v.HeapMiB, v.LiveHeapMiB, v.PeakRSSMiB, v.Load1)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = newTable(w)
	var procs bool
	for _, s := range rep.Sizes {
		procs = procs || s.Processes != nil
	}
	if procs {
		fmt.Fprintln(tw, "size\tcairn retrieve p50 ms\tmax ms\tpeak RSS MiB (p50, max)\tnew cairn mcp first answer p50 ms\tmax ms\t4 cairn mcp after 100 queries: RSS MiB\tPSS MiB\tprivate MiB\tload\t")
		for _, s := range rep.Sizes {
			if p := s.Processes; p != nil {
				fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f, %.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t\n", sizeLabel(s), p.CLI.P50Ms, p.CLI.MaxMs, p.CLI.P50RSSMiB, p.CLI.PeakRSSMiB,
					p.MCPFirst.P50Ms, p.MCPFirst.MaxMs, p.ServersRSSMiB, p.ServersPSSMiB, p.ServersAnonMiB, p.Load1)
			}
		}
		tw.Flush()
		fmt.Fprintln(w)
		tw = newTable(w)
	}
	fmt.Fprintln(tw, "size\tcall\tcallers\trequests/s\tp50 ms\tp95 ms\tp99 ms\t")
	for _, s := range rep.Sizes {
		for _, r := range s.Serve.Runs {
			call, _, _ := strings.Cut(r.Path, ",")
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t\n", sizeLabel(s), call, r.Clients, r.RPS, r.P50, r.P95, r.P99)
		}
		if ap := s.ServeApproximate; ap != nil {
			for _, r := range ap.Runs {
				call, _, _ := strings.Cut(r.Path, ",")
				fmt.Fprintf(tw, "%s\t%s (approximate)\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t\n", sizeLabel(s), call, r.Clients, r.RPS, r.P50, r.P95, r.P99)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range rep.Sizes {
		if s.Serve.HNSWBuildSeconds > 0 {
			fmt.Fprintf(w, "\n%s: pgvector's HNSW index of the observations' vectors built in %.1f s\n", sizeLabel(s), s.Serve.HNSWBuildSeconds)
		}
		if ap := s.ServeApproximate; ap != nil {
			fmt.Fprintf(w, "\n%s, approximate from %d vectors: of %d hybrid answers, %d byte-identical to the exact search's and %d with the same candidates; cold start %.0f ms (exact %.0f ms)\n",
				sizeLabel(s), ap.ApproximateFrom, ap.Compared, ap.SameAsExact, ap.SameCandidates, ap.ColdStartMs, s.Serve.ColdStartMs)
		}
	}
	return nil
}

// ScaleChart is the latency against memory count plot: p50 and p99 of
// each measured call with one caller.
func ScaleChart(rep ScaleReport) Chart {
	c := Chart{Title: "Latency against memory count (1 caller)", XLabel: "memories (records)", YLabel: "latency (ms)", LogX: true, LogY: true}
	calls := []string{}
	for _, p := range rep.Providers {
		calls = append(calls, "retrieve "+p)
	}
	calls = append(calls, "inner_voice.retrieve")
	for _, call := range calls {
		for _, pc := range []struct {
			name string
			get  func(Stats) float64
		}{{"p50", func(s Stats) float64 { return s.P50 }}, {"p99", func(s Stats) float64 { return s.P99 }}} {
			ser := Series{Name: strings.TrimPrefix(call, "retrieve ") + " " + pc.name}
			for _, s := range rep.Sizes {
				if s.Store == "postgres" {
					continue // the plot is SQLite's
				}
				if st, ok := s.Serve.run(call + ", c=1"); ok {
					ser.X = append(ser.X, float64(s.Size))
					ser.Y = append(ser.Y, max(pc.get(st), 0.001))
				}
			}
			if len(ser.X) > 0 {
				c.Series = append(c.Series, ser)
			}
		}
	}
	return c
}
