//go:build windows

package segment

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// maxMapped bounds a file's size (a mapping's length is an int).
const maxMapped = 1 << 40

// mapFile maps f's first size bytes read-only through a file mapping,
// which processes that map one file share.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	h, err := windows.CreateFileMapping(windows.Handle(f.Fd()), nil, windows.PAGE_READONLY, uint32(uint64(size)>>32), uint32(size), nil)
	if err != nil {
		return nil, nil, os.NewSyscallError("CreateFileMapping", err)
	}
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_READ, 0, 0, uintptr(size))
	if err != nil {
		windows.CloseHandle(h)
		return nil, nil, os.NewSyscallError("MapViewOfFile", err)
	}
	data := unsafe.Slice((*byte)(unsafe.Pointer(addr)), size)
	return data, func() error {
		err := windows.UnmapViewOfFile(addr)
		if cerr := windows.CloseHandle(h); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// adviseRandom does nothing here.
func adviseRandom([]byte, int, int) {}
