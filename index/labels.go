package index

import (
	"sort"
	"strings"

	"github.com/cairnhq/cairn/segment"
)

// labelTable holds the values of one record attribute (scope values,
// capsule ids, kinds, types, statuses) as small integers, 1-based (0 is
// the empty value).
type labelTable interface {
	// lookup returns the id of s, or false when the table lacks it.
	lookup(s string) (uint32, bool)
	// name is the value of id ("" for 0 or an unknown id).
	name(id uint32) string
	// count is the number of values (ids 1..count).
	count() int
}

// labels interns values as they come (the delta).
type labels struct {
	ids   map[string]uint32
	names []string
}

func (l *labels) id(s string) uint32 {
	if s == "" {
		return 0
	}
	if l.ids == nil {
		l.ids = map[string]uint32{}
		l.names = []string{""}
	}
	if id, ok := l.ids[s]; ok {
		return id
	}
	id := uint32(len(l.names))
	l.ids[s] = id
	l.names = append(l.names, s)
	return id
}

func (l *labels) lookup(s string) (uint32, bool) {
	if s == "" {
		return 0, true
	}
	id, ok := l.ids[s]
	return id, ok
}

func (l *labels) name(id uint32) string {
	if id == 0 || int(id) >= len(l.names) {
		return ""
	}
	return l.names[id]
}

func (l *labels) count() int { return max(0, len(l.names)-1) }

// strtab is a sorted table of strings in a segment: value i (1-based id
// i) is blob[off[i-1]:off[i]]. With sections set, reads check the blocks
// they touch (a large table is verified lazily).
type strtab struct {
	off     []uint32
	blob    []byte
	offSec  *segment.Section
	blobSec *segment.Section
}

func (t *strtab) count() int { return max(0, len(t.off)-1) }

func (t *strtab) name(id uint32) string {
	if id == 0 || int(id) >= len(t.off) {
		return ""
	}
	return string(t.at(id))
}

// at is value id without allocating (valid while the segment is open).
func (t *strtab) at(id uint32) []byte {
	if t.offSec != nil {
		check(t.offSec, int(id-1)*4, 8)
	}
	lo, hi := t.off[id-1], t.off[id]
	if t.blobSec != nil {
		if hi < lo || int(hi) > len(t.blob) {
			panic(corruption{errPart("", "a string table's offsets are malformed")})
		}
		check(t.blobSec, int(lo), int(hi-lo))
	}
	return t.blob[lo:hi]
}

func (t *strtab) lookup(s string) (uint32, bool) {
	if s == "" {
		return 0, true
	}
	n := t.count()
	i := sort.Search(n, func(i int) bool { return string(t.at(uint32(i+1))) >= s })
	if i < n && string(t.at(uint32(i+1))) == s {
		return uint32(i + 1), true
	}
	return 0, false
}

// valid reports whether the table's offsets are ascending within its blob
// and its values strictly sorted (what lookup relies on).
func (t *strtab) valid() bool {
	if len(t.off) == 0 {
		return true
	}
	if t.off[0] != 0 || int(t.off[len(t.off)-1]) != len(t.blob) {
		return false
	}
	for i := 1; i < len(t.off); i++ {
		if t.off[i] < t.off[i-1] {
			return false
		}
		if i >= 2 && strings.Compare(string(t.at(uint32(i-1))), string(t.at(uint32(i)))) >= 0 {
			return false
		}
	}
	return true
}

// sortedTable builds a strtab of the distinct non-empty values, sorted,
// and returns the id each value gets.
func sortedTable(values map[string]uint32) (strtab, map[string]uint32) {
	names := make([]string, 0, len(values))
	for v := range values {
		if v != "" {
			names = append(names, v)
		}
	}
	sort.Strings(names)
	t := strtab{off: make([]uint32, 1, len(names)+1)}
	ids := make(map[string]uint32, len(names))
	for i, v := range names {
		t.blob = append(t.blob, v...)
		t.off = append(t.off, uint32(len(t.blob)))
		ids[v] = uint32(i + 1)
	}
	return t, ids
}
