package index

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/segment"
)

// manifestName is the file that names the live segments. It is replaced
// whole (written beside, synced, renamed over), so a reader sees the old
// set or the new one.
const manifestName = "MANIFEST"

// manifest names one committed state of the index.
type manifest struct {
	Format int `json:"format"`
	// ID is random, new at every commit: a writer commits only over the
	// manifest its work started from (generations can repeat after a
	// rebuild).
	ID string `json:"id"`
	// Generation counts commits; a writer commits only over the
	// generation its work started from.
	Generation uint64 `json:"generation"`
	// Seq is the store's change sequence number the segments reflect, and
	// SeqRef the change's fingerprint there: a store restored from a
	// backup or replaced by another file no longer matches, and the index
	// is rebuilt.
	Seq      int64        `json:"seq"`
	SeqRef   string       `json:"seqRef"`
	Space    memory.Space `json:"space"`
	Analyzer string       `json:"analyzer"`
	// Segments are the live segments, oldest first.
	Segments []segRef `json:"segments"`
	// Centroids are the approximate search's centroid sets, per vector
	// group.
	Centroids []centRef `json:"centroids,omitempty"`
	// WrittenMs is when the manifest was written (Unix ms; for people).
	WrittenMs int64 `json:"writtenMs"`

	// dead holds, per segment, its deleted documents, ascending (the
	// manifest's "dead" section).
	dead [][]uint32
}

// segRef names a segment file and what it holds.
type segRef struct {
	Name string `json:"name"`
	Docs int    `json:"docs"`
	// Size and TOC must match the file: a manifest never names a file it
	// did not see written whole.
	Size int64  `json:"size"`
	TOC  uint32 `json:"toc"`
	// Level is the segment's merge level (see planMerge); Vectors its
	// rows per vector group.
	Level   int          `json:"level"`
	Vectors [nGroups]int `json:"vectors"`
}

// centRef names a centroid set.
type centRef struct {
	Group int    `json:"group"`
	Name  string `json:"name"`
	Lists int    `json:"lists"`
	// Trained is how many vectors the group had when they were trained.
	Trained int    `json:"trained"`
	Size    int64  `json:"size"`
	TOC     uint32 `json:"toc"`
}

func (m *manifest) deadCount() int {
	n := 0
	for _, d := range m.dead {
		n += len(d)
	}
	return n
}

func (m *manifest) docs() int {
	n := 0
	for _, s := range m.Segments {
		n += s.Docs
	}
	return n
}

// writeManifest commits m, giving it a new id.
func writeManifest(s storage, m *manifest) error {
	var b [8]byte
	_, _ = rand.Read(b[:])
	m.ID = hex.EncodeToString(b[:])
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = s.write(manifestName, kindManifest, func(w *segment.Writer) error {
		w.Section("manifest", true, body)
		w.Begin("dead", true)
		for _, d := range m.dead {
			w.WriteUint32s([]uint32{uint32(len(d))})
			w.WriteUint32s(d)
		}
		w.End()
		return nil
	})
	return err
}

// readManifest reads the committed manifest; (nil, nil) when there is
// none.
func readManifest(s storage) (*manifest, error) {
	f, err := s.read(manifestName, kindManifest)
	if err != nil || f == nil {
		return nil, err
	}
	var m manifest
	sec := f.Section("manifest")
	if sec == nil {
		return nil, fmt.Errorf("%w: manifest: no manifest section", segment.ErrCorrupt)
	}
	if err := json.Unmarshal(sec.Bytes(), &m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", segment.ErrCorrupt, err)
	}
	if m.Format != Format {
		return &m, nil // the caller compares formats
	}
	var words []uint32
	if s := f.Section("dead"); s != nil {
		if words, err = segment.Uint32s(s.Bytes()); err != nil {
			return nil, err
		}
	}
	for range m.Segments {
		if len(words) < 1 || int(words[0]) > len(words)-1 {
			return nil, fmt.Errorf("%w: manifest: deletions malformed", segment.ErrCorrupt)
		}
		n := int(words[0])
		d := append([]uint32(nil), words[1:1+n]...)
		for i := 1; i < len(d); i++ {
			if d[i] <= d[i-1] {
				return nil, fmt.Errorf("%w: manifest: deletions not ascending", segment.ErrCorrupt)
			}
		}
		m.dead = append(m.dead, d)
		words = words[1+n:]
	}
	if len(words) != 0 {
		return nil, fmt.Errorf("%w: manifest: deletions malformed", segment.ErrCorrupt)
	}
	return &m, nil
}
