package segment

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"unsafe"
)

// File is an open, read-only file. Its sections' bytes stay valid until
// Close; it is safe for concurrent use.
type File struct {
	data   []byte
	unmap  func() error
	osFile *os.File // for Verify, which reads without touching the mapping
	kind   string
	size   int64
	toc    uint32
	secs   map[string]*Section
	order  []*Section
	closed atomic.Bool
}

// Section is one named section of a File.
type Section struct {
	f     *File
	name  string
	off   int
	n     int
	block int
	eager bool
	crcs  []uint32
	// verified has a bit per block already checked.
	verified []atomic.Uint32
}

// Open maps the file at path, checks its structure and verifies its eager
// sections. kind must match the kind it was written with.
func Open(path, kind string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := st.Size()
	if size < headerSize+footerSize || size > maxMapped {
		f.Close()
		return nil, fmt.Errorf("%w: %s is %d bytes", ErrCorrupt, path, size)
	}
	data, unmap, err := mapFile(f, int(size))
	if err != nil {
		f.Close()
		return nil, err
	}
	sf, err := parse(data, kind)
	if err != nil {
		unmap()
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sf.unmap, sf.osFile = unmap, f
	return sf, nil
}

// OpenBytes reads a file held in memory (written by NewWriter to a
// buffer). data must not change while the File is in use.
func OpenBytes(data []byte, kind string) (*File, error) {
	if uintptr(unsafe.Pointer(unsafe.SliceData(data)))%8 != 0 {
		// Typed views need aligned sections: copy into aligned memory.
		words := make([]uint64, (len(data)+7)/8)
		buf := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:len(data)]
		copy(buf, data)
		data = buf
	}
	return parse(data, kind)
}

// parse checks the header, footer and table of contents of data, and
// verifies the eager sections.
func parse(data []byte, kind string) (*File, error) {
	if len(data) < headerSize+footerSize || string(data[:8]) != magic {
		return nil, ErrCorrupt
	}
	foot := data[len(data)-footerSize:]
	if string(foot[24:]) != endMagic {
		return nil, ErrCorrupt
	}
	if le.Uint32(foot[20:]) != checksum(data[:headerSize]) {
		return nil, ErrCorrupt
	}
	if v := le.Uint32(data[8:]); v != Format {
		return nil, &FormatError{Found: int(v), Want: Format}
	}
	if got := string(data[12:16]); got != kind {
		return nil, fmt.Errorf("%w: a %q file, not %q", ErrFormat, got, kind)
	}
	tocOff, tocLen := le.Uint64(foot), le.Uint64(foot[8:])
	end := uint64(len(data) - footerSize)
	if tocOff > end || tocLen > end-tocOff || tocOff < headerSize {
		return nil, ErrCorrupt
	}
	toc := data[tocOff : tocOff+tocLen]
	if checksum(toc) != le.Uint32(foot[16:]) {
		return nil, ErrCorrupt
	}
	f := &File{data: data, kind: kind, size: int64(len(data)), toc: le.Uint32(foot[16:]), secs: map[string]*Section{}}
	if len(toc) < 4 {
		return nil, ErrCorrupt
	}
	count := int(le.Uint32(toc))
	toc = toc[4:]
	if count > maxSections {
		return nil, ErrCorrupt
	}
	for range count {
		if len(toc) < 1 {
			return nil, ErrCorrupt
		}
		nl := int(toc[0])
		if len(toc) < 1+nl+1+20 {
			return nil, ErrCorrupt
		}
		s := &Section{f: f, name: string(toc[1 : 1+nl])}
		flags := toc[1+nl]
		off, n, bs := le.Uint64(toc[2+nl:]), le.Uint64(toc[10+nl:]), int(le.Uint32(toc[18+nl:]))
		toc = toc[22+nl:]
		if off%align != 0 || off < headerSize || off > tocOff || n > tocOff-off || bs < SmallBlock || bs > maxBlock || bs&(bs-1) != 0 {
			return nil, ErrCorrupt
		}
		s.off, s.n, s.block, s.eager = int(off), int(n), bs, flags&flagEager != 0
		nb := blocks(s.n, bs)
		if len(toc) < 4*nb {
			return nil, ErrCorrupt
		}
		s.crcs = make([]uint32, nb)
		for i := range s.crcs {
			s.crcs[i] = le.Uint32(toc[4*i:])
		}
		toc = toc[4*nb:]
		if _, dup := f.secs[s.name]; dup {
			return nil, ErrCorrupt
		}
		s.verified = make([]atomic.Uint32, (nb+31)/32)
		f.secs[s.name] = s
		f.order = append(f.order, s)
	}
	if len(toc) != 0 {
		return nil, ErrCorrupt
	}
	for _, s := range f.order {
		if s.eager {
			if err := s.Check(0, s.n); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// Kind is the kind the file was written with.
func (f *File) Kind() string { return f.kind }

// Size is the file's length in bytes.
func (f *File) Size() int64 { return f.size }

// TOC is the checksum of the file's table of contents.
func (f *File) TOC() uint32 { return f.toc }

// Section returns the named section, or nil when the file has none.
func (f *File) Section(name string) *Section { return f.secs[name] }

// Sections lists the sections in file order.
func (f *File) Sections() []*Section { return f.order }

// Close unmaps the file. Slices taken from it must not be used after.
func (f *File) Close() error {
	if !f.closed.CompareAndSwap(false, true) {
		return nil
	}
	var err error
	if f.unmap != nil {
		err = f.unmap()
	}
	if f.osFile != nil {
		if cerr := f.osFile.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Verify checks every block of every section, including those a reader
// checked before (the file may have changed on disk since). For a file on
// disk it reads with ordinary reads rather than through the mapping, so
// verifying a large file does not add its pages to the process's resident
// memory.
func (f *File) Verify() error {
	var buf []byte
	for _, s := range f.order {
		for b := range len(s.crcs) {
			lo, hi := s.off+b*s.block, s.off+min(s.n, (b+1)*s.block)
			var p []byte
			if f.osFile != nil {
				if cap(buf) < s.block {
					buf = make([]byte, s.block)
				}
				p = buf[:hi-lo]
				if _, err := f.osFile.ReadAt(p, int64(lo)); err != nil && err != io.EOF {
					return err
				}
			} else {
				p = f.data[lo:hi]
			}
			if checksum(p) != s.crcs[b] {
				return fmt.Errorf("%w: section %s, block %d", ErrCorrupt, s.name, b)
			}
			s.markVerified(b)
		}
	}
	return nil
}

// Name is the section's name.
func (s *Section) Name() string { return s.name }

// AdviseRandom tells the system the section is read at random, a few
// bytes here and there: the pages around one read are not mapped with it
// (on Unix; elsewhere it does nothing). The file must be mapped.
func (s *Section) AdviseRandom() {
	if s.f.unmap != nil {
		adviseRandom(s.f.data, s.off, s.n)
	}
}

// Block is the section's checksum block size in bytes.
func (s *Section) Block() int { return s.block }

// Len is the section's length in bytes.
func (s *Section) Len() int { return s.n }

// Bytes returns the section's bytes. A lazy section's bytes are verified
// only where Check was called.
func (s *Section) Bytes() []byte { return s.f.data[s.off : s.off+s.n : s.off+s.n] }

// Check verifies the blocks that hold bytes [off, off+n) of the section,
// each once per File. A range outside the section is corrupt.
func (s *Section) Check(off, n int) error {
	if off < 0 || n < 0 || off > s.n || n > s.n-off {
		return fmt.Errorf("%w: section %s: range %d+%d out of %d bytes", ErrCorrupt, s.name, off, n, s.n)
	}
	if n == 0 {
		return nil
	}
	for b := off / s.block; b <= (off+n-1)/s.block; b++ {
		if s.isVerified(b) {
			continue
		}
		lo, hi := s.off+b*s.block, s.off+min(s.n, (b+1)*s.block)
		if checksum(s.f.data[lo:hi]) != s.crcs[b] {
			return fmt.Errorf("%w: section %s, block %d", ErrCorrupt, s.name, b)
		}
		s.markVerified(b)
	}
	return nil
}

func (s *Section) isVerified(b int) bool {
	return s.verified[b/32].Load()&(1<<(b%32)) != 0
}

func (s *Section) markVerified(b int) {
	s.verified[b/32].Or(1 << (b % 32))
}
