package segment

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// Writer writes one file, section by section. Sections are written in
// order: Begin, any number of Write calls, End (or Section for data at
// hand). Finish writes the table of contents and the footer.
type Writer struct {
	w    *bufio.Writer
	file *os.File // nil when writing to a plain io.Writer
	path string   // final name (Create)
	tmp  string
	off  int64
	toc  []entry
	cur  *entry
	// crc is the running checksum of the current block of the current
	// section, and inBlock how many of its bytes are written.
	crc     uint32
	inBlock int
	err     error
	kind    string
	names   map[string]bool
	// hook, when set, is called at each step of Finish (tests inject
	// crashes there).
	hook func(step string)
}

// entry is one section of the table of contents.
type entry struct {
	name  string
	eager bool
	off   int64
	n     int64
	block int
	crcs  []uint32
}

// NewWriter writes a file of kind (four bytes naming what the file holds)
// to w. Finish does not sync or close w.
func NewWriter(w io.Writer, kind string) *Writer {
	sw := &Writer{w: bufio.NewWriterSize(w, 1<<20), kind: kind, names: map[string]bool{}}
	sw.raw(header(kind))
	return sw
}

// Create writes a file of kind at path: to a temporary file beside it,
// which Finish syncs and renames to path (then syncs the directory), so
// path holds either nothing, its old content or the whole new file. Abort
// removes the temporary file.
func Create(path, kind string) (*Writer, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+hex.EncodeToString(b[:]))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	w := NewWriter(f, kind)
	w.file, w.path, w.tmp = f, path, tmp
	return w, nil
}

// TempPrefix reports whether name is a temporary file of a Writer (left
// behind by a writer that crashed; safe to remove while no writer runs).
func TempPrefix(name string) bool {
	return len(name) > 0 && name[0] == '.' && containsTmp(name)
}

func containsTmp(s string) bool {
	for i := 0; i+5 <= len(s); i++ {
		if s[i:i+5] == ".tmp-" {
			return true
		}
	}
	return false
}

func (w *Writer) raw(p []byte) {
	if w.err != nil {
		return
	}
	_, w.err = w.w.Write(p)
	w.off += int64(len(p))
}

// Begin starts a section. An eager section is verified whole when the
// file is opened; a lazy one block by block as readers check ranges of it.
func (w *Writer) Begin(name string, eager bool) { w.BeginBlocks(name, eager, DefaultBlock) }

// BeginBlocks starts a section checksummed in blocks of block bytes (a
// power of two from SmallBlock to 16 MiB).
func (w *Writer) BeginBlocks(name string, eager bool, block int) {
	if w.err != nil {
		return
	}
	if w.cur != nil {
		w.err = fmt.Errorf("segment: section %q begun inside %q", name, w.cur.name)
		return
	}
	if name == "" || len(name) > 255 || w.names[name] || len(w.toc) >= maxSections {
		w.err = fmt.Errorf("segment: bad or repeated section name %q", name)
		return
	}
	if block < SmallBlock || block > maxBlock || block&(block-1) != 0 {
		w.err = fmt.Errorf("segment: block size %d", block)
		return
	}
	w.names[name] = true
	w.step("begin " + name)
	if pad := (align - int(w.off%align)) % align; pad > 0 {
		w.raw(make([]byte, pad))
	}
	w.toc = append(w.toc, entry{name: name, eager: eager, off: w.off, block: block})
	w.cur = &w.toc[len(w.toc)-1]
	w.crc, w.inBlock = 0, 0
}

// Write appends p to the current section.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err == nil && w.cur == nil {
		w.err = errors.New("segment: write outside a section")
	}
	if w.err != nil {
		return 0, w.err
	}
	for rest := p; len(rest) > 0; {
		k := min(len(rest), w.cur.block-w.inBlock)
		w.crc = crc32.Update(w.crc, castagnoli, rest[:k])
		w.inBlock += k
		if w.inBlock == w.cur.block {
			w.cur.crcs = append(w.cur.crcs, w.crc)
			w.crc, w.inBlock = 0, 0
			w.step("block")
		}
		rest = rest[k:]
	}
	w.cur.n += int64(len(p))
	w.raw(p)
	return len(p), w.err
}

// End ends the current section.
func (w *Writer) End() {
	if w.err != nil {
		return
	}
	if w.cur == nil {
		w.err = errors.New("segment: End without Begin")
		return
	}
	if w.inBlock > 0 {
		w.cur.crcs = append(w.cur.crcs, w.crc)
	}
	w.cur = nil
}

// Section writes a whole section.
func (w *Writer) Section(name string, eager bool, data []byte) {
	w.Begin(name, eager)
	w.Write(data)
	w.End()
}

// Err is the first error the writer met.
func (w *Writer) Err() error { return w.err }

// Info describes a finished file.
type Info struct {
	// Size is the file's length in bytes; TOC the checksum of its table of
	// contents, which names the file's content (a manifest records both).
	Size int64
	TOC  uint32
}

// SetHook sets a function called at each step of writing: "begin NAME"
// as each section starts, "block" as each checksum block completes, then
// "written", "synced" and "renamed" in Finish. Tests use it to stop a
// writer at each point.
func (w *Writer) SetHook(h func(step string)) { w.hook = h }

func (w *Writer) step(s string) {
	if w.hook != nil {
		w.hook(s)
	}
}

// Finish writes the table of contents and the footer. For a file made by
// Create, it syncs the file, renames it into place and syncs the
// directory.
func (w *Writer) Finish() (Info, error) {
	if w.err == nil && w.cur != nil {
		w.err = fmt.Errorf("segment: section %q not ended", w.cur.name)
	}
	if w.err != nil {
		w.Abort()
		return Info{}, w.err
	}
	if pad := (align - int(w.off%align)) % align; pad > 0 {
		w.raw(make([]byte, pad))
	}
	toc := le.AppendUint32(nil, uint32(len(w.toc)))
	for _, e := range w.toc {
		toc = append(toc, byte(len(e.name)))
		toc = append(toc, e.name...)
		var flags byte
		if e.eager {
			flags |= flagEager
		}
		toc = append(toc, flags)
		toc = le.AppendUint64(toc, uint64(e.off))
		toc = le.AppendUint64(toc, uint64(e.n))
		toc = le.AppendUint32(toc, uint32(e.block))
		for _, c := range e.crcs {
			toc = le.AppendUint32(toc, c)
		}
	}
	tocOff := w.off
	w.raw(toc)
	foot := le.AppendUint64(nil, uint64(tocOff))
	foot = le.AppendUint64(foot, uint64(len(toc)))
	tc := checksum(toc)
	foot = le.AppendUint32(foot, tc)
	foot = le.AppendUint32(foot, checksum(header(w.kind)))
	foot = append(foot, endMagic...)
	w.raw(foot)
	if w.err == nil {
		w.err = w.w.Flush()
	}
	info := Info{Size: w.off, TOC: tc}
	if w.file == nil || w.err != nil {
		if w.err != nil {
			w.Abort()
		}
		return info, w.err
	}
	w.step("written")
	if err := w.file.Sync(); err != nil {
		w.Abort()
		return Info{}, err
	}
	w.step("synced")
	if err := w.file.Close(); err != nil {
		w.file = nil
		w.Abort()
		return Info{}, err
	}
	w.file = nil
	if err := os.Rename(w.tmp, w.path); err != nil {
		os.Remove(w.tmp)
		return Info{}, err
	}
	w.step("renamed")
	if err := SyncDir(filepath.Dir(w.path)); err != nil {
		return Info{}, err
	}
	return info, nil
}

// Abort abandons the file: a temporary file is closed and removed.
func (w *Writer) Abort() {
	if w.file != nil {
		w.file.Close()
		w.file = nil
	}
	if w.tmp != "" {
		os.Remove(w.tmp)
	}
	if w.err == nil {
		w.err = errors.New("segment: aborted")
	}
}
