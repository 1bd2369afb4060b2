package storetest

import (
	"slices"
	"testing"

	"github.com/cairnhq/cairn/memory"
)

// testCodeEntityNames: a query's words find the entities they name (the
// symbol, its last dotted segment, the path's base name), only live ones
// whose artifact is kept when asked; and live code entities are records
// of the change feed the retrieval index follows, gone once their artifact
// is forgotten.
func testCodeEntityNames(t *testing.T, s memory.Store) {
	a, b := artifact("func Decode() {}"), artifact("func (d *Decoder) Token() {}")
	live := []memory.CodeState{memory.StateProposed, memory.StateAuthoritative}
	applyCode(t, s, memory.CodeChange{Artifacts: []memory.Artifact{a, b}, Entities: []memory.CodeEntity{
		codeEntity("r", "json/decode.go", "Decode", memory.StateAuthoritative, a.Hash),
		codeEntity("r", "json/stream.go", "Decoder.Token", memory.StateProposed, b.Hash),
		codeEntity("r", "xml/read.go", "Token", memory.StateTombstoned, b.Hash),
		codeEntity("other", "decode.go", "Decode", memory.StateAuthoritative, a.Hash),
	}})
	keys := func(f memory.CodeEntityFilter) []string {
		t.Helper()
		got, err := s.CodeEntities(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range got {
			out = append(out, e.Key)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		words []string
		want  []string
	}{
		{"symbol", []string{"Decode"}, []string{"json/decode.go::Decode"}},
		{"last segment", []string{"Token"}, []string{"json/stream.go::Decoder.Token"}},
		{"whole symbol", []string{"Decoder.Token"}, []string{"json/stream.go::Decoder.Token"}},
		{"base name", []string{"stream.go"}, []string{"json/stream.go::Decoder.Token"}},
		{"path", []string{"json/decode.go", "nothing"}, []string{"json/decode.go::Decode"}},
		{"several", []string{"Token", "decode.go"}, []string{"json/decode.go::Decode", "json/stream.go::Decoder.Token"}},
		{"no name", []string{"decoder", "json"}, nil},
	} {
		if got := keys(memory.CodeEntityFilter{RepoID: "r", States: live, Names: tc.words}); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v; want %v", tc.name, got, tc.want)
		}
	}

	var recs []memory.IndexRecord
	if err := s.Snapshot(ctx, func(r memory.Reader) error {
		_, err := r.LoadIndex(ctx, memory.Space{}, func(rec memory.IndexRecord) error {
			if rec.Kind == memory.VectorCodeEntity {
				recs = append(recs, rec)
			}
			return nil
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
		if r.Scope.RepoID == "r" && r.ID == memory.CodeEntityID("r", "json/decode.go::Decode") && r.Content != "Decode json/decode.go "+a.Content {
			t.Errorf("indexed text %q", r.Content)
		}
	}
	want := []string{"other|decode.go::Decode", "r|json/decode.go::Decode", "r|json/stream.go::Decoder.Token"}
	if !slices.Equal(ids, want) {
		t.Fatalf("indexed code entities %v; want %v", ids, want)
	}

	var last int64
	s.Snapshot(ctx, func(r memory.Reader) error { last, _ = r.LastChange(ctx); return nil })
	if _, err := s.RedactArtifact(ctx, b.Hash, 2); err != nil {
		t.Fatal(err)
	}
	if got := keys(memory.CodeEntityFilter{RepoID: "r", States: live, Names: []string{"Token", "Decode"}, Readable: true}); !slices.Equal(got, []string{"json/decode.go::Decode"}) {
		t.Errorf("readable after a forget: %v", got)
	}
	var changed []memory.IndexRecord
	if err := s.Snapshot(ctx, func(r memory.Reader) error {
		var err error
		changed, _, err = r.ChangesSince(ctx, memory.Space{}, last, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{}
	for _, c := range changed {
		if c.Kind == memory.VectorCodeEntity {
			gone[c.ID] = c.Gone
		}
	}
	if !gone["r|json/stream.go::Decoder.Token"] || len(gone) != 2 {
		t.Errorf("changes after forgetting the artifact: %v (want both entities holding it, the live one gone)", gone)
	}
}
