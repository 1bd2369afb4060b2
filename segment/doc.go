// Package segment is cairn's file container for persisted, derived data:
// an immutable file of named sections, each checksummed, that a process
// maps read-only and pages in on demand, so that processes opening the
// same file share it through the operating system's page cache.
//
// A file is written once by a Writer (to a temporary name, synced, then
// renamed into place, so a reader never sees half a file) and read by
// Open, which maps it (mmap on Unix, a file mapping on Windows; elsewhere
// the file is read into memory). Open checks the header, the footer and
// the table of contents, and verifies the sections the writer marked
// eager; a lazy section is verified block by block (64 KiB, or 4 KiB for
// sections read at random) the first
// time a caller checks a range of it, and Verify reads the whole file.
// A file of another container format, or one that fails a checksum, is
// refused with ErrCorrupt or ErrFormat and never misread.
//
// Layout (little-endian):
//
//	header   "CAIRNSEG", format uint32, kind [4]byte, 48 zero bytes
//	sections each at a 64-byte boundary
//	toc      count uint32, then per section: name (uint8 length, bytes),
//	         flags uint8, offset uint64, length uint64, block size uint32,
//	         one CRC-32C per block
//	footer   toc offset uint64, toc length uint64, toc CRC-32C uint32,
//	         header CRC-32C uint32, "CAIRNEND"
package segment
