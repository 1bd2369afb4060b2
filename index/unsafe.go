package index

import "unsafe"

// unsafeMeta views a segment's doc.meta words as docMeta records (five
// uint32s each, the struct's exact layout).
func unsafeMeta(words []uint32) []docMeta {
	if len(words) == 0 {
		return nil
	}
	return unsafe.Slice((*docMeta)(unsafe.Pointer(unsafe.SliceData(words))), len(words)/5)
}

// metaWords views docMeta records as uint32s, for writing.
func metaWords(m []docMeta) []uint32 {
	if len(m) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(m))), len(m)*5)
}
