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

// adviseRandom tells the system that bytes [off, off+n) of a mapping are
// read at random: no read-ahead, and a page fault maps only its own page
// rather than the pages around it (which would count pages a reader never
// needs in its resident memory).
func adviseRandom(mapping []byte, off, n int) {
	if n <= 0 {
		return
	}
	page := os.Getpagesize()
	lo, hi := off/page*page, min(len(mapping), (off+n+page-1)/page*page)
	_ = unix.Madvise(mapping[lo:hi], unix.MADV_RANDOM)
}
