package segment

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// Format is the container format this package writes and reads.
const Format = 1

const (
	magic       = "CAIRNSEG"
	endMagic    = "CAIRNEND"
	headerSize  = 64
	footerSize  = 32
	align       = 64
	blockSize   = 64 << 10
	flagEager   = 1
	maxSections = 1 << 12
)

// ErrCorrupt says a file is damaged: truncated, altered or torn. Its data
// must not be used; what it was derived from must rebuild it.
var ErrCorrupt = errors.New("segment: file is corrupt")

// ErrFormat says a file is of another container format or kind than the
// reader expects (older or newer): it is not misread.
var ErrFormat = errors.New("segment: unsupported format")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

var le = binary.LittleEndian

// blocks is the number of checksum blocks of a section of n bytes.
func blocks(n int) int { return (n + blockSize - 1) / blockSize }

// header renders a file header of kind.
func header(kind string) []byte {
	h := make([]byte, headerSize)
	copy(h, magic)
	le.PutUint32(h[8:], Format)
	copy(h[12:16], kind)
	return h
}
