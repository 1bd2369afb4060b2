package lexical_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/lexical"
)

// TestStemCacheKeepsNoText: the stems remembered are copies of the
// words, never slices of the texts they were read in. Texts of 64 KiB,
// each with a word never seen before, are analysed and dropped; the cache
// then holds a small part of their size.
func TestStemCacheKeepsNoText(t *testing.T) {
	const n, size = 128, 64 << 10
	pad := strings.Repeat(" ", size)
	base := heapLive()
	for i := range n {
		// A fresh text per call, as a store's row gives; its word is new
		// to the cache (letters only: words with digits are not stemmed).
		text := fmt.Sprintf("zq%sreplicating%s", letters(i), pad)
		if terms := lexical.Terms(text); len(terms) == 0 || !strings.HasPrefix(terms[0], "zq") {
			t.Fatalf("Terms(%.20q...) = %q", text, terms)
		}
	}
	grown := int64(heapLive()) - int64(base)
	if limit := int64(n * size / 8); grown > limit {
		t.Fatalf("after analysing %d texts of %d KiB, %d KiB stay live; want at most %d KiB", n, size>>10, grown>>10, limit>>10)
	}
	t.Logf("%d KiB stay live of the texts' %d KiB", grown>>10, n*size>>10)
}

// letters spells i in the letters a to j.
func letters(i int) string {
	var b []byte
	for _, d := range fmt.Sprintf("%06d", i) {
		b = append(b, byte('a'+d-'0'))
	}
	return string(b)
}

func heapLive() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
