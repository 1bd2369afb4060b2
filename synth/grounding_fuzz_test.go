package synth_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/synth"
)

// FuzzVerify feeds the verifier any answer and citations: it never
// panics, its figures stay in range, a refusal carries nothing of the
// answer, and every returned citation names a source of the context whose
// text holds the span.
func FuzzVerify(f *testing.F) {
	f.Add("The grey heron nests in colonies called heronries. Herons hunt fish.", "t-1", "heronries", "t-2", "hunt fish")
	f.Add("Dr. J. Smith saw 1,312 herons … at 06:10! [t-3]\n- No. 1: they don't", "t-3", "06:10 … heron", "t-9", "")
	f.Add("", "", "", "", "")
	f.Add("a: B. c? D! e.g. F", "t-1", "…", " t-2 ", "STRIKE  with")
	// A stop with closing marks then a split at a colon ran the splitter
	// past its start.
	f.Add(`go test ./x/... -> FAIL TestX: token issued 2s ago is rejected.". Then "more."`, "t-1", "x", "t-2", "y")
	f.Add(`it failed.") Then: "Yes." (No.) 3.`, "t-1", "x", "t-2", "y")
	f.Fuzz(func(t *testing.T, answer, id1, span1, id2, span2 string) {
		d := synth.Draft{Answer: answer, Sources: []synth.Citation{{SourceID: id1, Span: span1}, {SourceID: id2, Span: span2}}}
		v := synth.Verifier{}.Check(context.Background(), d, birds)
		r := v.Response
		if r.CoverageRatio < 0 || r.CoverageRatio > 1 || r.Confidence < 0 || r.Confidence > r.CoverageRatio+1e-9 || math.IsNaN(r.Confidence) {
			t.Fatalf("figures out of range: %+v", r)
		}
		if r.Refused && (r.Answer != synth.RefusalText || len(r.Sources) != 0 || r.Claims != nil || r.Confidence != 0) {
			t.Fatalf("a refusal carries the answer: %+v", r)
		}
		if !r.Refused && (r.CoverageRatio < synth.DefaultMinCoverage || distinct(r.Sources) < synth.DefaultMinSources) {
			t.Fatalf("accepted below the bar: %+v", r)
		}
		ids := map[string]string{}
		for _, s := range birds {
			ids[s.ID] = strings.ToLower(strings.Join(strings.Fields(s.Text), " "))
		}
		for _, s := range r.Sources {
			if _, ok := ids[s.SourceID]; !ok {
				t.Fatalf("a citation of a source not in the context: %+v", s)
			}
			if s.Relevance <= 0 || s.Relevance > 1 {
				t.Fatalf("relevance out of range: %+v", s)
			}
		}
	})
}

// FuzzModelReply feeds the grounded synthesiser any model reply: it never
// panics and never passes through an answer the verifier did not accept.
func FuzzModelReply(f *testing.F) {
	f.Add(goodAnswer, "stop")
	f.Add(fabricated, "stop")
	f.Add("```json\n{\"answer\": \"x\", \"sources\": []}\n```", "stop")
	f.Add(`{"answer": "Herons nest", "sources": [{"source_id": "t-1", "span": null}]}`, "length")
	f.Add(`{"answer": 1}`, "")
	f.Fuzz(func(t *testing.T, text, finish string) {
		s := &script{replies: []synth.ModelReply{{Text: text, FinishReason: finish}}}
		res, err := synth.LLMSynthesizer{Model: s.model}.Synthesize(context.Background(), "How do herons live?", birds)
		if err != nil {
			t.Fatalf("err %v", err)
		}
		if res.Calls < 1 || res.Calls > 2 {
			t.Fatalf("%d calls", res.Calls)
		}
		if res.Refused {
			if res.Answer != synth.RefusalText || len(res.Sources) != 0 {
				t.Fatalf("a refusal carries the answer: %+v", res)
			}
			return
		}
		if res.CoverageRatio < synth.DefaultMinCoverage || distinct(res.Sources) < synth.DefaultMinSources {
			t.Fatalf("passed through: %+v", res)
		}
	})
}

func distinct(cs []synth.SourceCitation) int {
	ids := map[string]bool{}
	for _, c := range cs {
		ids[c.SourceID] = true
	}
	return len(ids)
}

// FuzzVerifySource feeds the verifier any source text (cut into pieces,
// tagged, its pronouns resolved) and any answer: it never panics and its
// figures and scores stay in range.
func FuzzVerifySource(f *testing.F) {
	f.Add("Caroline: I went to a LGBTQ support group yesterday and it was so powerful.", "Caroline went to a LGBTQ support group.")
	f.Add("openssh (1:9.2p1-2+deb12u6) bookworm; urgency=medium\n\n  * CVE-2025-32728: sshd(8): fix the\n    DisableForwarding directive\n\n -- Colin Watson <c@d.org>  Thu, 08 May 2025", "Colin Watson fixed it.")
	f.Add("* zstd: Fix X\n\t* s2: Fix Y (by @a)", "zstd:\n- Fix Y.")
	f.Add("They strike. It was. The one, which? so because: - \"", "Because they strike, it was.")
	f.Fuzz(func(t *testing.T, text, answer string) {
		src := []synth.Source{{ID: "s-1", Type: "thought", Text: text}, {ID: "s-2", Type: "thought", Text: "Herons hunt fish."}}
		d := synth.Draft{Answer: answer, Sources: []synth.Citation{{SourceID: "s-1", Span: text}, {SourceID: "s-2", Span: "Herons hunt fish"}}}
		v := synth.Verifier{MinSources: 1, MinCoverage: 1e-9}.Check(context.Background(), d, src)
		r := v.Response
		if r.CoverageRatio < 0 || r.CoverageRatio > 1 || r.Confidence < 0 || r.Confidence > r.CoverageRatio+1e-9 || math.IsNaN(r.Confidence) {
			t.Fatalf("figures out of range: %+v", r)
		}
		for _, c := range v.Claims {
			if c.Score < 0 || c.Score > 1 || math.IsNaN(c.Score) {
				t.Fatalf("score out of range: %+v", c)
			}
		}
	})
}
