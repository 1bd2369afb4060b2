package index

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/segment"
)

// TestSectionTable checks the table's own consistency: every section
// named once, the families' names where their helpers say.
func TestSectionTable(t *testing.T) {
	seen := map[string]bool{}
	for id := range nSections {
		d := sections[id]
		if d.name == "" || seen[d.name] {
			t.Fatalf("section %d: name %q empty or repeated", id, d.name)
		}
		seen[d.name] = true
	}
	for l, name := range labelNames {
		if got := sections[secLabelOff(l)].name; got != "lab."+name+".off" {
			t.Errorf("label table %s: offsets section %q", name, got)
		}
		if got := sections[secLabel(l)].name; got != "lab."+name {
			t.Errorf("label table %s: values section %q", name, got)
		}
	}
	for g := range nGroups {
		for _, c := range []struct {
			id   secID
			want string
		}{{secVecRows(g), "rows"}, {secVecIDs(g), "ids"}, {secVecRanges(g), "ranges"}} {
			if got, want := sections[c.id].name, fmt.Sprintf("vec.%d.%s", g, c.want); got != want || sections[c.id].group != g {
				t.Errorf("group %d: section %q (group %d), want %q", g, got, sections[c.id].group, want)
			}
		}
	}
	if got := sections[secLexDocs].name; got != "lex.docs" {
		t.Errorf("the section after the label tables is %q", got)
	}
	if got := sections[secInfo].name; got != "info" {
		t.Errorf("the last section is %q", got)
	}
}

// TestSectionWriterKeepsTheTable: a section out of the table's order, of
// another kind, or left out is an error, and no file is written.
func TestSectionWriterKeepsTheTable(t *testing.T) {
	cases := []struct {
		name  string
		write func(sw *sectionWriter)
		want  string
	}{
		{"out of order", func(sw *sectionWriter) { sw.wholeUint32s(secDocMeta, nil) }, "written where the table puts doc.ts"},
		{"another kind", func(sw *sectionWriter) { sw.begin(secDocTS); sw.uint32s([]uint32{1}); sw.end() }, "outside a section of that kind"},
		{"left out", func(sw *sectionWriter) { sw.begin(secDocTS); sw.int64s([]int64{1}); sw.end() }, "section doc.meta not written"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stg := newMemStorage()
			_, err := stg.write("s", kindSegment, func(w *segment.Writer) error {
				sw := newSectionWriter(w)
				c.write(sw)
				return sw.finish()
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if names, _ := stg.list(); len(names) != 0 {
				t.Fatalf("files %v written", names)
			}
		})
	}
}

// TestOpenPartNeedsEverySection: a segment lacking any one section of the
// table is corrupt.
func TestOpenPartNeedsEverySection(t *testing.T) {
	_, files, _ := writeLayoutCase(t, 300)
	space := intEmbedder{dim: 8}.Space()
	whole, err := segment.OpenBytes(files["c"], kindSegment)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openPart(whole, "c", space, nil); err != nil {
		t.Fatalf("the whole segment: %v", err)
	}
	byName := map[string]secDesc{}
	for _, d := range sections {
		byName[d.name] = d
	}
	for id := range nSections {
		var buf bytes.Buffer
		w := segment.NewWriter(&buf, kindSegment)
		for _, s := range whole.Sections() {
			if s.Name() == sections[id].name {
				continue
			}
			w.BeginBlocks(s.Name(), byName[s.Name()].eager, s.Block())
			w.Write(s.Bytes())
			w.End()
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		f, err := segment.OpenBytes(buf.Bytes(), kindSegment)
		if err != nil {
			t.Fatal(err)
		}
		_, err = openPart(f, "c", space, nil)
		if !errors.Is(err, segment.ErrCorrupt) {
			t.Errorf("without %s: error %v, want a corrupt segment", sections[id].name, err)
		}
	}
}
