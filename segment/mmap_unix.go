//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package segment

import (
	"os"

	"golang.org/x/sys/unix"
)

// maxMapped bounds a file's size (a mapping's length is an int).
const maxMapped = 1 << 40

// mapFile maps f's first size bytes read-only and shared: processes that
// map one file share its pages.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return unix.Munmap(data) }, nil
}
