package cairn

import (
	"context"
	"log/slog"
	"time"

	"github.com/cairnhq/cairn/capture"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/sqlite"
)

// EnvRedact turns the secret redactor off when set to "off" (or 0, false,
// no): every write then stores text as given. On by default.
const EnvRedact = "CAIRN_REDACT"

// Recorder is the lean write path of capture hooks: the database alone,
// without the retrieval index or an embedder, so that a process started
// for one hook call writes and exits in milliseconds. What it writes is
// searchable as soon as another process's index catches up with the
// database (every engine does when it opens); its vectors are computed by
// a long-running cairn (serve, mcp) or by cairn reembed.
type Recorder struct {
	store memory.Store
	checks
	ids *IDs
}

// RecorderOptions configure a Recorder; nil gives the defaults.
type RecorderOptions struct {
	Now func() time.Time
	// NoRedact stores text without redacting secrets.
	NoRedact        bool
	MaxContentBytes int
	Logger          *slog.Logger
}

// OpenRecorder opens the database at path for capture writes.
func OpenRecorder(path string, opts *RecorderOptions) (*Recorder, error) {
	var o RecorderOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxContentBytes <= 0 {
		o.MaxContentBytes = memory.DefaultMaxContentBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var db memory.Store
	if IsPostgres(path) {
		st, _, err := openStore(path, Options{Logger: o.Logger, Now: o.Now})
		if err != nil {
			return nil, err
		}
		db = st
	} else {
		st, err := sqlite.Open(path, &sqlite.Options{Logger: o.Logger, ReadConns: 1, Now: o.Now})
		if err != nil {
			return nil, err
		}
		db = st
	}
	return &Recorder{store: db, checks: newChecks(o.MaxContentBytes, o.NoRedact), ids: NewIDs(o.Now)}, nil
}

// Close closes the database.
func (r *Recorder) Close() error { return r.store.Close() }

// CaptureResult says what applying a hook batch wrote.
type CaptureResult = capture.Result

// Apply writes a hook batch (see capture.Batch). Applying a batch that
// was already written changes nothing.
func (r *Recorder) Apply(ctx context.Context, b capture.Batch) (CaptureResult, error) {
	return r.checks.writer(r.store, r.ids).Apply(ctx, b)
}

// ApplyCapture writes a hook batch as Recorder.Apply does, and embeds
// what it wrote.
func (e *Engine) ApplyCapture(ctx context.Context, b capture.Batch) (CaptureResult, error) {
	res, err := e.checks.writer(e.store, e.ids).Apply(ctx, b)
	if err != nil {
		return res, err
	}
	var jobs []memory.EmbedJob
	for _, id := range res.Observations {
		if o, err := e.store.Observation(ctx, id); err == nil {
			jobs = append(jobs, memory.EmbedJob{Kind: memory.VectorObservation, ID: o.ID, Content: o.Content})
		}
	}
	if res.Summary != nil {
		jobs = append(jobs, memory.EmbedJob{Kind: memory.VectorSummary, ID: res.Summary.ID, Content: res.Summary.Content})
	}
	e.embedAfterWrite(ctx, jobs)
	return res, nil
}
