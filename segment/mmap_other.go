//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package segment

import (
	"io"
	"os"
	"unsafe"
)

// maxMapped bounds a file's size: without a mapping the file is read
// into memory.
const maxMapped = 1 << 34

// mapFile reads f into aligned memory: the fallback where cairn does not
// map files. Each process then holds its own copy.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	words := make([]uint64, (size+7)/8)
	data := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:size]
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, int64(size)), data); err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}

// adviseRandom does nothing here.
func adviseRandom([]byte, int, int) {}
