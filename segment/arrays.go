package segment

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// littleEndian reports whether this machine stores integers as the file
// does; then typed views are the mapped bytes themselves.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// view reinterprets b as a slice of T without copying when the machine is
// little-endian and b is aligned; otherwise it decodes a copy.
func view[T uint16 | uint32 | int32 | uint64 | int64 | float32](b []byte, decode func([]byte) T) ([]T, error) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b)%size != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a whole number of %d-byte values", ErrCorrupt, len(b), size)
	}
	n := len(b) / size
	if n == 0 {
		return nil, nil
	}
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = decode(b[i*size:])
	}
	return out, nil
}

// Uint16s views b as little-endian uint16s.
func Uint16s(b []byte) ([]uint16, error) { return view(b, le.Uint16) }

// Uint32s views b as little-endian uint32s.
func Uint32s(b []byte) ([]uint32, error) { return view(b, le.Uint32) }

// Int32s views b as little-endian int32s.
func Int32s(b []byte) ([]int32, error) {
	return view(b, func(p []byte) int32 { return int32(le.Uint32(p)) })
}

// Uint64s views b as little-endian uint64s.
func Uint64s(b []byte) ([]uint64, error) { return view(b, le.Uint64) }

// Int64s views b as little-endian int64s.
func Int64s(b []byte) ([]int64, error) {
	return view(b, func(p []byte) int64 { return int64(le.Uint64(p)) })
}

// Float32s views b as little-endian IEEE 754 float32s.
func Float32s(b []byte) ([]float32, error) {
	return view(b, func(p []byte) float32 { return math.Float32frombits(le.Uint32(p)) })
}

// bytesOf returns the bytes of s in the file's byte order: s's own memory
// on a little-endian machine, else an encoded copy.
func bytesOf[T uint16 | uint32 | int32 | uint64 | int64 | float32](s []T, encode func([]byte, T) []byte) []byte {
	if len(s) == 0 {
		return nil
	}
	if littleEndian {
		var zero T
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
	}
	var out []byte
	for _, v := range s {
		out = encode(out, v)
	}
	return out
}

// WriteUint16s writes s to the current section.
func (w *Writer) WriteUint16s(s []uint16) { w.Write(bytesOf(s, le.AppendUint16)) }

// WriteUint32s writes s to the current section.
func (w *Writer) WriteUint32s(s []uint32) { w.Write(bytesOf(s, le.AppendUint32)) }

// WriteInt32s writes s to the current section.
func (w *Writer) WriteInt32s(s []int32) {
	w.Write(bytesOf(s, func(b []byte, v int32) []byte { return le.AppendUint32(b, uint32(v)) }))
}

// WriteUint64s writes s to the current section.
func (w *Writer) WriteUint64s(s []uint64) { w.Write(bytesOf(s, le.AppendUint64)) }

// WriteInt64s writes s to the current section.
func (w *Writer) WriteInt64s(s []int64) {
	w.Write(bytesOf(s, func(b []byte, v int64) []byte { return le.AppendUint64(b, uint64(v)) }))
}

// WriteFloat32s writes s to the current section.
func (w *Writer) WriteFloat32s(s []float32) {
	w.Write(bytesOf(s, func(b []byte, v float32) []byte { return le.AppendUint32(b, math.Float32bits(v)) }))
}
