package code

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// DefaultETVTTL is how long a file's verification is trusted while its
// size and modification time stay the same.
const DefaultETVTTL = 5 * time.Second

// hitWindow is the number of lookups over which the cache hit rate is
// judged; below minHitRate the verifier warns (failure mode 2).
const (
	hitWindow  = 100
	minHitRate = 0.5
)

// ETVResult is one External Truth Verification of an entity: whether the
// disk still holds the entity's artifact.
type ETVResult struct {
	LastCheck  time.Time `json:"last_check"`
	IsStale    bool      `json:"is_stale"`
	DiskExists bool      `json:"disk_exists"`
	// DiskHash is the SHA-256 of the entity's text as the disk has it now
	// ("" when the file or the symbol is gone).
	DiskHash  string `json:"disk_hash"`
	VaultHash string `json:"vault_hash"`
	CacheHit  bool   `json:"cache_hit"`
	// Reason explains the verdict in a sentence.
	Reason string `json:"reason"`
}

// ETVStats counts cache lookups since the verifier started.
type ETVStats struct {
	Hits    int64   `json:"hits"`
	Misses  int64   `json:"misses"`
	HitRate float64 `json:"hit_rate"`
	TTL     string  `json:"ttl"`
	// Warnings counts the windows of lookups whose hit rate fell below 50%.
	Warnings int64 `json:"warnings"`
}

// Verifier checks entities against the files on disk. Files are read only
// under their repository's root. Results are cached per file for TTL and
// dropped early when the file's size or modification time changes. It is
// safe for concurrent use.
type Verifier struct {
	ttl time.Duration
	now func() time.Time
	log *slog.Logger

	mu    sync.Mutex
	cache map[string]fileTruth

	hits, misses, warnings atomic.Int64
	winHits, winTotal      int // guarded by mu
}

// fileTruth is what one read of a file found.
type fileTruth struct {
	checked time.Time
	size    int64
	mod     int64
	exists  bool
	problem string            // why the file could not be read
	symbols map[string]string // symbol name -> SHA-256 of its text
}

// NewVerifier returns a verifier with the given cache TTL (0: DefaultETVTTL;
// negative: no caching).
func NewVerifier(ttl time.Duration, now func() time.Time, log *slog.Logger) *Verifier {
	if ttl == 0 {
		ttl = DefaultETVTTL
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Verifier{ttl: ttl, now: now, log: log, cache: map[string]fileTruth{}}
}

// Stats reports the cache counters.
func (v *Verifier) Stats() ETVStats {
	h, m := v.hits.Load(), v.misses.Load()
	s := ETVStats{Hits: h, Misses: m, TTL: v.ttl.String(), Warnings: v.warnings.Load()}
	if h+m > 0 {
		s.HitRate = float64(h) / float64(h+m)
	}
	return s
}

// Check verifies e, whose repository root is root, against the disk.
// maxBytes bounds the file size read (0: no bound).
func (v *Verifier) Check(root string, e memory.CodeEntity, maxBytes int64) ETVResult {
	ft, hit := v.cached(root, e.Path)
	if !hit {
		if res, ok := v.inPlace(root, e, maxBytes); ok {
			return res
		}
		ft, hit = v.truth(root, e.Path, maxBytes)
	}
	res := ETVResult{LastCheck: ft.checked, CacheHit: hit, VaultHash: e.ArtifactHash, DiskExists: ft.exists}
	symbol := e.Symbol
	switch {
	case !ft.exists:
		res.IsStale = true
		res.Reason = "ETV: " + e.Path + " " + ft.problem
	case ft.problem != "":
		res.IsStale = true
		res.Reason = "ETV: " + e.Path + " " + ft.problem
	default:
		res.DiskHash = ft.symbols[symbol]
		switch {
		case res.DiskHash == "":
			res.IsStale = true
			res.Reason = "ETV: " + symbol + " is no longer in " + e.Path
		case res.DiskHash != e.ArtifactHash:
			res.IsStale = true
			res.Reason = "ETV: disk hash mismatch (vault: " + short(e.ArtifactHash) + ", disk: " + short(res.DiskHash) + ")"
		default:
			res.Reason = "ETV: disk hash matches vault hash (" + short(res.DiskHash) + ")"
		}
	}
	return res
}

// inPlace verifies e without parsing its file when the file's lines
// StartLine..EndLine still hash to e's artifact: a symbol's text is
// exactly those lines (Symbol.Text), so the disk holds the vault's text
// where the index found it. Otherwise (the file changed, the symbol moved,
// the file cannot be read) it reports false and Check parses the file.
// A fresh process thus verifies what it hydrates by reading, not parsing.
func (v *Verifier) inPlace(root string, e memory.CodeEntity, maxBytes int64) (ETVResult, bool) {
	if e.StartLine < 1 || e.EndLine < e.StartLine {
		return ETVResult{}, false
	}
	abs, err := Confine(root, e.Path)
	if err != nil {
		return ETVResult{}, false
	}
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() || (maxBytes > 0 && st.Size() > maxBytes) {
		return ETVResult{}, false
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return ETVResult{}, false
	}
	if h := HashArtifact(newSrcLines(src).text(e.StartLine, e.EndLine)); h != e.ArtifactHash {
		return ETVResult{}, false
	}
	return ETVResult{LastCheck: v.now(), VaultHash: e.ArtifactHash, DiskHash: e.ArtifactHash, DiskExists: true,
		Reason: "ETV: disk hash matches vault hash (" + short(e.ArtifactHash) + ")"}, true
}

// Prime caches what an index just read of a file, so the gates it
// evaluates next do not read it again.
func (v *Verifier) Prime(root, rel string, size, mod int64, symbols []Symbol) {
	abs, err := Confine(root, rel)
	if err != nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cache[abs] = fileTruth{checked: v.now(), size: size, mod: mod, exists: true, symbols: symbolHashes(symbols)}
}

// Forget drops every cached verification.
func (v *Verifier) Forget() {
	v.mu.Lock()
	defer v.mu.Unlock()
	clear(v.cache)
}

func symbolHashes(syms []Symbol) map[string]string {
	m := make(map[string]string, len(syms))
	for _, s := range syms {
		m[s.Name] = HashArtifact(s.Text)
	}
	return m
}

// cached returns the cache's entry for rel when it is younger than the TTL
// and the file's size and modification time are unchanged (counted as a
// hit).
func (v *Verifier) cached(root, rel string) (fileTruth, bool) {
	if v.ttl <= 0 {
		return fileTruth{}, false
	}
	abs, err := Confine(root, rel)
	if err != nil {
		return fileTruth{}, false
	}
	st, err := os.Stat(abs)
	if err != nil {
		return fileTruth{}, false
	}
	v.mu.Lock()
	ft, ok := v.cache[abs]
	v.mu.Unlock()
	if ok && v.now().Sub(ft.checked) < v.ttl && ft.size == st.Size() && ft.mod == st.ModTime().UnixNano() {
		v.count(true)
		return ft, true
	}
	return fileTruth{}, false
}

// truth returns what the disk holds for rel, from the cache when the entry
// is younger than the TTL and the file's size and modification time are
// unchanged.
func (v *Verifier) truth(root, rel string, maxBytes int64) (fileTruth, bool) {
	now := v.now()
	abs, err := Confine(root, rel)
	if err != nil {
		v.count(false)
		ft := fileTruth{checked: now, problem: "is unreadable: " + message(err)}
		if memory.IsCode(err, memory.CodeNotFound) {
			ft.problem = "no longer exists"
		}
		return ft, false
	}
	st, err := os.Stat(abs)
	if err != nil {
		v.count(false)
		if errors.Is(err, fs.ErrNotExist) {
			return fileTruth{checked: now, problem: "no longer exists"}, false
		}
		return fileTruth{checked: now, exists: true, problem: "is unreadable: " + pathProblem(err)}, false
	}
	size, mod := st.Size(), st.ModTime().UnixNano()
	if v.ttl > 0 {
		v.mu.Lock()
		ft, ok := v.cache[abs]
		v.mu.Unlock()
		if ok && now.Sub(ft.checked) < v.ttl && ft.size == size && ft.mod == mod {
			v.count(true)
			return ft, true
		}
	}
	v.count(false)
	ft := fileTruth{checked: now, size: size, mod: mod, exists: true}
	switch {
	case st.IsDir():
		ft.problem = "is a directory"
	case maxBytes > 0 && size > maxBytes:
		ft.problem = "is larger than the size limit"
	default:
		src, err := os.ReadFile(abs)
		if err != nil {
			ft.problem = "is unreadable: " + pathProblem(err)
			break
		}
		ft.symbols = symbolHashes(Resolve(rel, src).Symbols)
	}
	if v.ttl > 0 {
		v.mu.Lock()
		v.cache[abs] = ft
		v.mu.Unlock()
	}
	return ft, false
}

// count records a lookup and warns when a window of lookups hit the cache
// less than half the time.
func (v *Verifier) count(hit bool) {
	if hit {
		v.hits.Add(1)
	} else {
		v.misses.Add(1)
	}
	v.mu.Lock()
	v.winTotal++
	if hit {
		v.winHits++
	}
	var rate float64
	warn := false
	if v.winTotal >= hitWindow {
		rate = float64(v.winHits) / float64(v.winTotal)
		warn = rate < minHitRate
		v.winHits, v.winTotal = 0, 0
	}
	v.mu.Unlock()
	if warn {
		v.warnings.Add(1)
		v.log.Warn("ETV cache hit rate below 50%: files change faster than the cache TTL; consider a longer TTL (CAIRN_ETV_TTL)",
			"hit_rate", rate, "window", hitWindow, "ttl", v.ttl.String())
	}
}

// fileHash is the SHA-256 of a whole file's bytes.
func fileHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// message is the caller-safe message of a typed error.
func message(err error) string {
	var me *memory.Error
	if errors.As(err, &me) {
		return me.Message
	}
	return "unreadable"
}
