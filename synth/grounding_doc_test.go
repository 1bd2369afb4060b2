package synth_test

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/synth"
)

// The contract's example in docs/grounding.md is what the verifier gives
// for the thoughts and the answer it describes.
func TestGroundingDocExample(t *testing.T) {
	b, err := os.ReadFile("../docs/grounding.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	at := strings.Index(doc, "## The contract")
	start := strings.Index(doc[at:], "```json\n") + at + len("```json\n")
	end := strings.Index(doc[start:], "```") + start
	var want synth.GroundedResponse
	if err := json.Unmarshal([]byte(doc[start:end]), &want); err != nil {
		t.Fatal(err)
	}
	src := []synth.Source{
		{ID: "t-201", Type: "thought", Text: "The staging deploy failed on 14 May because migration 0042_add_index timed out after 300 seconds."},
		{ID: "t-202", Type: "thought", Text: "We fixed the deploy by creating the index concurrently and raising the statement timeout to 900 seconds."},
	}
	d := synth.Draft{Answer: strings.TrimSpace(want.Answer + " Priya approved the rollback."), Sources: []synth.Citation{
		{SourceID: "t-201", Span: "migration 0042_add_index timed out after 300 seconds"},
		{SourceID: "t-202", Span: "creating the index concurrently and raising the statement timeout to 900 seconds"}}}
	got := synth.Verifier{}.Verify(context.Background(), d, src)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Fatalf("the verifier gives\n%s", g)
	}
}

// A changed verb next to a light one is what the verifier does not see,
// as docs/grounding.md says; and the verb it does see.
func TestVerifierLightVerbs(t *testing.T) {
	src := []synth.Source{{ID: "a", Text: "Omar made the release on Friday."}, {ID: "b", Text: "Priya approved the rollback on Monday."}}
	cites := []synth.Citation{{SourceID: "a", Span: "Omar made the release"}, {SourceID: "b", Span: "Priya approved the rollback"}}
	v := synth.Verifier{MinSources: 1, MinCoverage: 1}
	for claim, want := range map[string]bool{
		"Omar approved the release on Friday.":   true, // not seen: "made" is a light verb
		"Priya reviewed the rollback on Monday.": false,
	} {
		res := v.Check(context.Background(), synth.Draft{Answer: claim, Sources: cites}, src)
		if len(res.Claims) != 1 || res.Claims[0].Supported != want {
			t.Errorf("%q: %+v", claim, res.Claims)
		}
	}
}
