package synth

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// The judge: with a language model configured and the judge switched on
// (CAIRN_GROUNDING_JUDGE=1), the claims the offline check supports are put
// to the model once more, each with the spans it cites, and the model
// says whether the spans entail it, contradict it or do not state it,
// quoting the words of a span that entail it. cairn checks that those
// words occur in the cited source; a claim stays supported only when the
// offline check and the judge agree. When the judge fails (no answer, a
// timeout, an answer that is not its JSON), the answer is verified
// offline alone and the notes say so.

// Judge is the model that gives the second opinion.
type Judge struct {
	Model ModelFunc
}

// The judge's verdicts.
const (
	JudgeEntailed     = "entailed"
	JudgeContradicted = "contradicted"
	JudgeNotStated    = "not_stated"
)

// JudgeSchema is the JSON Schema of the judge's answer: one verdict per
// claim, numbered as asked, with the source and the exact words that
// entail it. It satisfies OpenAI's strict mode.
var JudgeSchema = json.RawMessage(`{"type":"object","properties":{"verdicts":{"type":"array","items":{"type":"object","properties":{"claim":{"type":"integer"},"verdict":{"type":"string","enum":["entailed","contradicted","not_stated"]},"source_id":{"type":"string"},"evidence":{"type":"string"}},"required":["claim","verdict","source_id","evidence"],"additionalProperties":false}}},"required":["verdicts"],"additionalProperties":false}`)

// JudgeSchemaName names JudgeSchema.
const JudgeSchemaName = "grounding_judgement"

// JudgeUsage is what asking the judge took.
type JudgeUsage struct {
	// Calls is 1 when the judge was asked, 0 when there was nothing to ask
	// (a refused answer, no supported claim).
	Calls            int     `json:"calls"`
	Model            string  `json:"model,omitempty"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	Cost             float64 `json:"cost_usd"`
	// Vetoed is how many claims the offline check supported and the
	// judge did not.
	Vetoed int `json:"vetoed"`
	// Failed says why the judge gave no usable answer ("" when it did);
	// the answer was then verified offline alone.
	Failed string `json:"failed,omitempty"`
}

// judged is one claim put to the judge: its index among the verdict's
// claims, its text and the spans it cites.
type judged struct {
	index int
	text  string
	spans []SourceCitation
}

// CheckJudged is Check with the judge's second opinion on the claims the
// offline check supports: a claim the judge does not find entailed, or
// whose evidence is not in the cited source, is withheld support, and the
// refusal rule is applied again. A refused answer is not put to the judge.
// When the judge fails, the offline verdict stands and its notes say the
// judge was unavailable.
func (v Verifier) CheckJudged(ctx context.Context, d Draft, sources []Source, j Judge) (Verdict, JudgeUsage) {
	offline := v.Check(ctx, d, sources)
	var asked []judged
	for i, c := range offline.Claims {
		if c.Supported && !offline.Response.Refused {
			var spans []SourceCitation
			for _, s := range offline.Response.Sources {
				if slices.Contains(c.SourceIDs, s.SourceID) {
					spans = append(spans, s)
				}
			}
			asked = append(asked, judged{index: i, text: c.Text, spans: spans})
		}
	}
	var usage JudgeUsage
	if len(asked) == 0 || j.Model == nil {
		return offline, usage
	}
	reply, err := j.Model(ctx, judgeRequest(asked))
	usage.Calls, usage.Model = 1, reply.Model
	usage.PromptTokens, usage.CompletionTokens, usage.Cost = reply.PromptTokens, reply.CompletionTokens, reply.Cost
	veto, problem := judgeVetoes(reply, err, asked, sources)
	if problem != "" {
		usage.Failed = problem
		note := fmt.Sprintf("the grounding judge gave no usable answer (%s): the answer was verified offline alone", problem)
		return v.check(ctx, d, sources, nil, []string{note}), usage
	}
	usage.Vetoed = len(veto)
	if len(veto) == 0 {
		return offline, usage
	}
	return v.check(ctx, d, sources, veto, nil), usage
}

// judgeRequest asks the judge about the claims.
func judgeRequest(asked []judged) ModelRequest {
	system := "You check whether sources entail claims. For each numbered claim, answer \"entailed\" only if the spans cited " +
		"with it state all of it (who did what to whom, names, numbers, polarity, cause and effect), \"contradicted\" if they state " +
		"otherwise, and \"not_stated\" if they do not say it. For \"entailed\", copy into \"evidence\" the exact words of one " +
		"cited span that entail the claim and give that span's source_id; otherwise leave both empty. Give exactly one verdict " +
		`per claim. Reply with only a JSON object: {"verdicts": [{"claim": 1, "verdict": "entailed", "source_id": "...", "evidence": "..."}]}.`
	var b strings.Builder
	b.WriteString("Claims and the spans they cite:\n")
	for k, a := range asked {
		fmt.Fprintf(&b, "\nClaim %d: %s\n", k+1, strings.Join(strings.Fields(a.text), " "))
		for _, s := range a.spans {
			fmt.Fprintf(&b, "  [%s] %s\n", s.SourceID, strings.Join(strings.Fields(s.Span), " "))
		}
	}
	return ModelRequest{System: system, Messages: []ModelMessage{{Role: "user", Content: b.String()}}, Schema: JudgeSchema,
		SchemaName: JudgeSchemaName}
}

// judgeVetoes reads the judge's reply: the reasons to withhold support,
// by claim index, or what makes the reply unusable.
func judgeVetoes(reply ModelReply, err error, asked []judged, sources []Source) (map[int]string, string) {
	if err != nil {
		return nil, cmp.Or(memory.Public(err).Message, "the model failed")
	}
	verdicts, problem := parseJudgement(reply, len(asked))
	if problem != "" {
		return nil, problem
	}
	veto := map[int]string{}
	for k, a := range asked {
		if why := vetoOf(verdicts[k], a, sources); why != "" {
			veto[a.index] = why
		}
	}
	return veto, ""
}

// judgeVerdict is one verdict as the judge wrote it.
type judgeVerdict struct {
	Claim    *int    `json:"claim"`
	Verdict  *string `json:"verdict"`
	SourceID *string `json:"source_id"`
	Evidence *string `json:"evidence"`
}

// parseJudgement reads the judge's JSON: exactly one well-formed verdict
// per claim asked, returned in claim order; the problem is "" when it is
// that, else what is wrong.
func parseJudgement(r ModelReply, n int) ([]judgeVerdict, string) {
	if r.FinishReason != "" && r.FinishReason != "stop" {
		return nil, "its answer was cut short or withheld"
	}
	text := strings.TrimSpace(r.Text)
	if strings.HasPrefix(text, "```") {
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```")), "```"))
	}
	var raw struct {
		Verdicts []judgeVerdict `json:"verdicts"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	if err := dec.Decode(&raw); err != nil || dec.More() || raw.Verdicts == nil {
		return nil, "its answer is not the JSON object asked for"
	}
	out := make([]judgeVerdict, n)
	seen := make([]bool, n)
	for _, v := range raw.Verdicts {
		if v.Claim == nil || v.Verdict == nil || v.SourceID == nil || v.Evidence == nil || *v.Claim < 1 || *v.Claim > n || seen[*v.Claim-1] {
			return nil, "its answer has a verdict that is not one per claim with a claim, verdict, source_id and evidence"
		}
		switch *v.Verdict {
		case JudgeEntailed, JudgeContradicted, JudgeNotStated:
		default:
			return nil, fmt.Sprintf("its answer has the unknown verdict %q", *v.Verdict)
		}
		seen[*v.Claim-1], out[*v.Claim-1] = true, v
	}
	if slices.Contains(seen, false) {
		return nil, "its answer leaves out a claim"
	}
	return out, ""
}

// vetoOf is why the judge's verdict withholds support from a claim, or ""
// when it agrees: entailed, with evidence that occurs in one of the
// sources the claim cites.
func vetoOf(v judgeVerdict, a judged, sources []Source) string {
	switch *v.Verdict {
	case JudgeContradicted:
		return "the grounding judge found it contradicted by the source"
	case JudgeNotStated:
		return "the grounding judge found the source does not state it"
	}
	id := strings.TrimSpace(*v.SourceID)
	if !slices.ContainsFunc(a.spans, func(s SourceCitation) bool { return s.SourceID == id }) {
		return "the grounding judge's evidence names a source the claim does not cite"
	}
	if len(terms(*v.Evidence)) == 0 {
		return "the grounding judge gave no evidence"
	}
	for _, s := range sources {
		if s.ID == id && spanOccurs(*v.Evidence, s.Text) {
			return ""
		}
	}
	return "the grounding judge's evidence is not in the cited source"
}
