package index

import "unsafe"

// A docMeta is docMetaWords uint32s, in the struct's exact layout.
var _ [unsafe.Sizeof(docMeta{}) - 4*docMetaWords]struct{}
var _ [4*docMetaWords - unsafe.Sizeof(docMeta{})]struct{}

// unsafeMeta views a segment's doc.meta words as docMeta records.
func unsafeMeta(words []uint32) []docMeta {
	if len(words) == 0 {
		return nil
	}
	return unsafe.Slice((*docMeta)(unsafe.Pointer(unsafe.SliceData(words))), len(words)/docMetaWords)
}

// metaWords views docMeta records as uint32s, for writing.
func metaWords(m []docMeta) []uint32 {
	if len(m) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(m))), len(m)*docMetaWords)
}
