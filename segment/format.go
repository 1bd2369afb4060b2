package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Format is the container format this package writes and reads.
const Format = 1

const (
	magic      = "CAIRNSEG"
	endMagic   = "CAIRNEND"
	headerSize = 64
	footerSize = 32
	align      = 64
	// DefaultBlock is the checksum block of a section; SmallBlock suits a
	// lazy section read at random a few bytes at a time (a vector row),
	// where checking 64 KiB to read 400 bytes would page in 16 times
	// what the reader needs.
	DefaultBlock = 64 << 10
	SmallBlock   = 4 << 10
	maxBlock     = 1 << 24
	flagEager    = 1
	maxSections  = 1 << 12
)

// ErrCorrupt says a file is damaged: truncated, altered or torn. Its data
// must not be used; what it was derived from must rebuild it.
var ErrCorrupt = errors.New("segment: file is corrupt")

// ErrFormat says a file is of another container format or kind than the
// reader expects (older or newer): it is not misread.
var ErrFormat = errors.New("segment: unsupported format")

// FormatError says which format a file has and which the reader wants.
type FormatError struct {
	Found, Want int
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("segment: container format %d, this build reads %d", e.Found, e.Want)
}

// Is makes a FormatError an ErrFormat.
func (e *FormatError) Is(target error) bool { return target == ErrFormat }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

var le = binary.LittleEndian

// blocks is the number of checksum blocks of bs bytes of a section of n
// bytes.
func blocks(n, bs int) int { return (n + bs - 1) / bs }

// header renders a file header of kind.
func header(kind string) []byte {
	h := make([]byte, headerSize)
	copy(h, magic)
	le.PutUint32(h[8:], Format)
	copy(h[12:16], kind)
	return h
}
