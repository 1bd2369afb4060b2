package segment_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/cairnhq/cairn/segment"
)

// sample writes a file with an eager section, a lazy section several
// blocks long, typed arrays and an empty section.
func sample(t testing.TB, w *segment.Writer) (lazy []byte) {
	t.Helper()
	w.Section("meta", true, []byte(`{"docs":3}`))
	lazy = make([]byte, 200_000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range lazy {
		lazy[i] = byte(r.IntN(256))
	}
	w.Begin("lazy", false)
	w.Write(lazy[:70_000])
	w.Write(lazy[70_000:])
	w.End()
	w.Begin("u32", true)
	w.WriteUint32s([]uint32{1, 2, 0xdeadbeef})
	w.End()
	w.Begin("f32", true)
	w.WriteFloat32s([]float32{0.5, -1.25})
	w.End()
	w.Begin("i64", true)
	w.WriteInt64s([]int64{-7, 1 << 40})
	w.End()
	w.Section("empty", true, nil)
	return lazy
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.seg")
	w, err := segment.Create(path, "TEST")
	if err != nil {
		t.Fatal(err)
	}
	lazy := sample(t, w)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the file exists before Finish: %v", err)
	}
	info, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("want only the file, got %v", entries)
	}
	f, err := segment.Open(path, "TEST")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Size() != info.Size || f.TOC() != info.TOC {
		t.Fatalf("size/toc %d/%x, writer said %d/%x", f.Size(), f.TOC(), info.Size, info.TOC)
	}
	if got := string(f.Section("meta").Bytes()); got != `{"docs":3}` {
		t.Fatalf("meta %q", got)
	}
	if s := f.Section("lazy"); !bytes.Equal(s.Bytes(), lazy) || s.Check(0, s.Len()) != nil {
		t.Fatal("lazy section differs or fails its check")
	}
	u, err := segment.Uint32s(f.Section("u32").Bytes())
	if err != nil || !slices.Equal(u, []uint32{1, 2, 0xdeadbeef}) {
		t.Fatalf("u32 %v %v", u, err)
	}
	fl, _ := segment.Float32s(f.Section("f32").Bytes())
	i64, _ := segment.Int64s(f.Section("i64").Bytes())
	if !slices.Equal(fl, []float32{0.5, -1.25}) || !slices.Equal(i64, []int64{-7, 1 << 40}) {
		t.Fatalf("f32 %v i64 %v", fl, i64)
	}
	if s := f.Section("empty"); s == nil || s.Len() != 0 {
		t.Fatal("empty section missing")
	}
	if f.Section("nope") != nil {
		t.Fatal("a section that was never written")
	}
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	if _, err := segment.Open(path, "OTHR"); !errors.Is(err, segment.ErrFormat) {
		t.Fatalf("opening as another kind: %v", err)
	}
}

func TestWriterRefusesMisuse(t *testing.T) {
	var buf bytes.Buffer
	w := segment.NewWriter(&buf, "TEST")
	w.Section("a", true, nil)
	w.Section("a", true, nil)
	if _, err := w.Finish(); err == nil {
		t.Fatal("a repeated section name was accepted")
	}
	w = segment.NewWriter(&buf, "TEST")
	w.Begin("a", true)
	if _, err := w.Finish(); err == nil {
		t.Fatal("a section left open was accepted")
	}
	w = segment.NewWriter(&buf, "TEST")
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("a write outside a section was accepted")
	}
}

// TestEveryByteIsCovered flips each byte of a file in turn: the file must
// then fail to open, fail Verify, or fail the Check of the section the
// byte is in — never read back as valid. Alignment padding is the only
// exception, and only if it changes nothing a reader sees. Inside the large
// lazy section every 997th byte is tried, elsewhere every byte.
func TestEveryByteIsCovered(t *testing.T) {
	var buf bytes.Buffer
	w := segment.NewWriter(&buf, "TEST")
	w.Section("meta", true, []byte(`{"docs":3}`))
	w.Section("lazy", false, bytes.Repeat([]byte("abcdefgh"), 20_000))
	w.Begin("u32", true)
	w.WriteUint32s([]uint32{1, 2, 3})
	w.End()
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	ref, err := segment.OpenBytes(good, "TEST")
	if err != nil {
		t.Fatal(err)
	}
	same := func(f *segment.File) bool {
		for _, s := range ref.Sections() {
			o := f.Section(s.Name())
			if o == nil || !bytes.Equal(o.Bytes(), s.Bytes()) {
				return false
			}
		}
		return len(f.Sections()) == len(ref.Sections())
	}
	lazy := ref.Section("lazy")
	lazyOff := int(uintptr(unsafe.Pointer(&lazy.Bytes()[0]))-uintptr(unsafe.Pointer(&ref.Sections()[0].Bytes()[0]))) + 64
	for i := 0; i < len(good); i++ {
		if i > lazyOff+1 && i < lazyOff+lazy.Len()-1 && (i-lazyOff)%997 != 0 {
			continue
		}
		bad := bytes.Clone(good)
		bad[i] ^= 0x40
		f, err := segment.OpenBytes(bad, "TEST")
		if err != nil {
			if !errors.Is(err, segment.ErrCorrupt) && !errors.Is(err, segment.ErrFormat) {
				t.Fatalf("byte %d: error %v is neither corrupt nor format", i, err)
			}
			continue
		}
		caught := f.Verify() != nil
		for _, s := range f.Sections() {
			if s.Check(0, s.Len()) != nil {
				caught = true
			}
		}
		if !caught && !same(f) {
			t.Fatalf("byte %d: a changed file reads back as valid with different content", i)
		}
	}
}

func TestTruncatedAndForeignFiles(t *testing.T) {
	var buf bytes.Buffer
	w := segment.NewWriter(&buf, "TEST")
	sample(t, w)
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	for _, n := range []int{0, 10, 64, 100, len(good) / 2, len(good) - 1} {
		if _, err := segment.OpenBytes(good[:n], "TEST"); !errors.Is(err, segment.ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	// A newer container format (its header checksum right): refused as a
	// format error that says which.
	newer := bytes.Clone(good)
	newer[8] = 99
	h := crc32.Checksum(newer[:64], crc32.MakeTable(crc32.Castagnoli))
	binary.LittleEndian.PutUint32(newer[len(newer)-12:], h)
	var fe *segment.FormatError
	if _, err := segment.OpenBytes(newer, "TEST"); !errors.Is(err, segment.ErrFormat) || !errors.As(err, &fe) || fe.Found != 99 {
		t.Fatalf("a newer container format: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "x.seg")
	os.WriteFile(path, []byte("SQLite format 3\x00 and then some more bytes that are not a segment at all......."), 0o600)
	if _, err := segment.Open(path, "TEST"); !errors.Is(err, segment.ErrCorrupt) {
		t.Fatalf("a foreign file: %v", err)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, err := segment.Create(filepath.Join(dir, "a.seg"), "TEST")
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || !segment.TempPrefix(entries[0].Name()) {
		t.Fatalf("want one temporary file, got %v", entries)
	}
	w.Section("a", true, []byte("x"))
	w.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("abort left %v", entries)
	}
	if segment.TempPrefix("seg-000001.cseg") || !segment.TempPrefix(".seg-1.cseg.tmp-ab12") {
		t.Fatal("TempPrefix misjudges names")
	}
}

func TestLazyCheckFindsDamage(t *testing.T) {
	var buf bytes.Buffer
	w := segment.NewWriter(&buf, "TEST")
	w.Section("lazy", false, bytes.Repeat([]byte{7}, 300_000))
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	data := bytes.Clone(buf.Bytes())
	f, err := segment.OpenBytes(data, "TEST")
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section("lazy")
	// Damage the third block after opening (a disk error under a mapping).
	sb := s.Bytes()
	sb[2*65536+5] = 0
	if err := s.Check(0, 65536); err != nil {
		t.Fatalf("the first block is intact: %v", err)
	}
	if err := s.Check(65536, 2*65536); !errors.Is(err, segment.ErrCorrupt) {
		t.Fatalf("the damaged block passed: %v", err)
	}
	if err := s.Check(299_999, 2); !errors.Is(err, segment.ErrCorrupt) {
		t.Fatalf("a range past the end passed: %v", err)
	}
	if err := f.Verify(); !errors.Is(err, segment.ErrCorrupt) {
		t.Fatalf("Verify missed it: %v", err)
	}
}

func FuzzOpenBytes(f *testing.F) {
	var buf bytes.Buffer
	w := segment.NewWriter(&buf, "TEST")
	w.Section("meta", true, []byte(`{}`))
	w.Section("lazy", false, bytes.Repeat([]byte("z"), 1000))
	w.Finish()
	f.Add(buf.Bytes())
	f.Add([]byte("CAIRNSEG"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := segment.OpenBytes(data, "TEST")
		if err != nil {
			return
		}
		for _, s := range sf.Sections() {
			_ = s.Check(0, s.Len())
			_, _ = segment.Uint32s(s.Bytes())
		}
		_ = sf.Verify()
	})
}
