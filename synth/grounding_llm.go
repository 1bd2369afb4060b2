package synth

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnhq/cairn/memory"
)

// ModelMessage is one turn of a conversation with a model.
type ModelMessage struct {
	Role    string // "user" or "assistant"
	Content string
}

// ModelRequest is what the grounded synthesiser asks a model.
type ModelRequest struct {
	System   string
	Messages []ModelMessage
	// Schema is the JSON Schema the answer must follow (GroundedSchema);
	// SchemaName names it where an API wants a name.
	Schema     json.RawMessage
	SchemaName string
}

// ModelReply is a model's answer and what it cost.
type ModelReply struct {
	Text string
	// FinishReason is why the model stopped (stop, length, filtered,
	// refusal, other); anything but stop makes the answer unusable.
	FinishReason     string
	Model            string
	PromptTokens     int
	CompletionTokens int
	Cost             float64
}

// ModelFunc asks a language model. The root wires an llm.Client into it;
// tests pass a script.
type ModelFunc func(ctx context.Context, req ModelRequest) (ModelReply, error)

// PromptFunc builds the system instruction and the user's message that
// ask for a grounded answer to query from sources.
type PromptFunc func(query string, sources []Source) (system, user string)

// GroundedSchema is the JSON Schema of the answer a model is asked for:
// the answer and its citations, nothing it could say about its own
// grounding. It satisfies OpenAI's strict mode (every property required,
// no others allowed).
var GroundedSchema = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"},"sources":{"type":"array","items":{"type":"object","properties":{"source_id":{"type":"string"},"span":{"type":"string"}},"required":["source_id","span"],"additionalProperties":false}}},"required":["answer","sources"],"additionalProperties":false}`)

// GroundedSchemaName names GroundedSchema.
const GroundedSchemaName = "grounded_answer"

// LLMSynthesizer answers a question from sources with a language model and
// checks the answer with a Verifier. A malformed answer (not the JSON of
// GroundedSchema, cut short, withheld) is asked for once more with the
// schema restated, then refused: it is never passed through.
type LLMSynthesizer struct {
	Model ModelFunc
	// Prompt builds the prompt (default DefaultPrompt).
	Prompt PromptFunc
	// Verifier checks the answer.
	Verifier Verifier
	// Fits, when set, reports whether a request is within the prompt
	// budget. A retry that would not fit with the malformed answer shown
	// to the model asks again in one message (the prompt and RetryText);
	// one that would not fit even so is refused, not sent.
	Fits func(ModelRequest) bool
	// Judge, when set, gives a second opinion on the claims the verifier
	// supports (Verifier.CheckJudged): one more request, whose tokens and
	// cost count in the Synthesis.
	Judge *Judge
}

// Synthesis is a grounded answer and what it took: the model calls, their
// tokens and cost, and a hash of the prompt (never the prompt).
type Synthesis struct {
	GroundedResponse
	// Calls is how many times the model was asked: 0 (refused before
	// asking: too few sources), 1, or 2 after a malformed answer, and one
	// more when the judge was asked.
	Calls            int     `json:"calls"`
	Model            string  `json:"model,omitempty"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	Cost             float64 `json:"cost_usd"`
	// PromptHash is the hex SHA-256 of the first prompt (system
	// instruction, a NUL, the user's message).
	PromptHash string `json:"prompt_hash,omitempty"`
	// Judge is what the judge took, when it was on (its tokens and cost
	// are in the totals above too).
	Judge *JudgeUsage `json:"judge,omitempty"`
}

// maxEcho bounds the malformed answer echoed back to the model when
// asking again.
const maxEcho = 2000

// Synthesize answers query from sources. A model's failure (unreachable,
// timed out, rate limited) is returned as its error: the caller decides
// whether to fall back to an extractive answer. With fewer sources than
// the Verifier needs, it refuses without asking the model.
func (s LLMSynthesizer) Synthesize(ctx context.Context, query string, sources []Source) (Synthesis, error) {
	if strings.TrimSpace(query) == "" {
		return Synthesis{}, memory.Errorf(memory.CodeInvalidParams, "the question is empty")
	}
	if s.Model == nil {
		return Synthesis{}, memory.Errorf(memory.CodeFeatureDisabled, "no language model is configured")
	}
	v := s.Verifier.withDefaults()
	distinct := map[string]bool{}
	for _, src := range sources {
		if src.ID != "" && strings.TrimSpace(src.Text) != "" {
			distinct[src.ID] = true
		}
	}
	if len(distinct) < v.MinSources {
		return Synthesis{GroundedResponse: refusal(fmt.Sprintf("required sources %d, actual %d in the context; the model was not asked", v.MinSources, len(distinct)))}, nil
	}
	prompt := s.Prompt
	if prompt == nil {
		prompt = DefaultPrompt
	}
	system, user := prompt(query, sources)
	sum := sha256.Sum256([]byte(system + "\x00" + user))
	out := Synthesis{PromptHash: hex.EncodeToString(sum[:])}
	req := ModelRequest{System: system, Messages: []ModelMessage{{Role: "user", Content: user}}, Schema: GroundedSchema, SchemaName: GroundedSchemaName}

	var problem string
	for attempt := 0; attempt < 2; attempt++ {
		reply, err := s.Model(ctx, req)
		out.Calls++
		if err != nil {
			return out, err
		}
		out.Model = cmp.Or(reply.Model, out.Model)
		out.PromptTokens += reply.PromptTokens
		out.CompletionTokens += reply.CompletionTokens
		out.Cost += reply.Cost
		var d Draft
		d, problem = parseDraft(reply)
		if problem == "" {
			out.GroundedResponse = s.verify(ctx, d, sources, &out)
			return out, nil
		}
		if attempt == 1 {
			break
		}
		echo := strings.ToValidUTF8(reply.Text, "")
		if len(echo) > maxEcho {
			echo = strings.ToValidUTF8(echo[:maxEcho], "")
		}
		single := []ModelMessage{{Role: "user", Content: user + "\n\n" + restate(problem)}}
		if strings.TrimSpace(echo) == "" {
			// Some APIs refuse an empty turn: ask again in one message.
			req.Messages = single
		} else {
			req.Messages = append(req.Messages[:1],
				ModelMessage{Role: "assistant", Content: echo},
				ModelMessage{Role: "user", Content: restate(problem)})
			if s.Fits != nil && !s.Fits(req) {
				req.Messages = single
			}
		}
		if s.Fits != nil && !s.Fits(req) {
			out.GroundedResponse = refusal(fmt.Sprintf("the model's answer was malformed (%s) and asking again would pass the prompt budget; it was not used", problem))
			return out, nil
		}
	}
	out.GroundedResponse = refusal(fmt.Sprintf("the model's answer was malformed twice (%s); it was not used", problem))
	return out, nil
}

// verify checks a draft: offline, and with the judge when there is one,
// whose usage it adds to out.
func (s LLMSynthesizer) verify(ctx context.Context, d Draft, sources []Source, out *Synthesis) GroundedResponse {
	if s.Judge == nil {
		return s.Verifier.Verify(ctx, d, sources)
	}
	verdict, usage := s.Verifier.CheckJudged(ctx, d, sources, *s.Judge)
	out.Calls += usage.Calls
	out.PromptTokens += usage.PromptTokens
	out.CompletionTokens += usage.CompletionTokens
	out.Cost += usage.Cost
	out.Judge = &usage
	return verdict.Response
}

// refusal is a refused response with notes.
func refusal(notes string) GroundedResponse {
	return GroundedResponse{Answer: RefusalText, Sources: []SourceCitation{}, Refused: true, Notes: joinNotes([]string{notes})}
}

// restate asks again after a malformed answer.
func restate(problem string) string {
	return "Your answer could not be used: " + problem + ". Answer again with only a JSON object that follows this JSON Schema, " +
		"with no text before or after it: " + string(GroundedSchema) +
		`. "answer" is your answer; "sources" lists, for each source you rely on, its id exactly as given and a span copied word for word from its text.`
}

// parseDraft reads a model's reply as a Draft; the problem is "" when it
// is one, else what is wrong, in words the model is told.
func parseDraft(r ModelReply) (Draft, string) {
	switch r.FinishReason {
	case "", "stop":
	case "length":
		return Draft{}, "it was cut off at the length limit"
	case "filtered", "refusal":
		return Draft{}, "it was withheld"
	default:
		return Draft{}, "it did not finish"
	}
	text := strings.TrimSpace(r.Text)
	if strings.HasPrefix(text, "```") {
		text = strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```")
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), "```"))
	}
	if text == "" {
		return Draft{}, "it was empty"
	}
	var raw struct {
		Answer  *string           `json:"answer"`
		Sources []json.RawMessage `json:"sources"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	if err := dec.Decode(&raw); err != nil {
		return Draft{}, "it is not a JSON object with an answer and sources"
	}
	if dec.More() {
		return Draft{}, "it has text after the JSON object"
	}
	if raw.Answer == nil || strings.TrimSpace(*raw.Answer) == "" {
		return Draft{}, `its "answer" is missing or empty`
	}
	if raw.Sources == nil {
		return Draft{}, `its "sources" is missing`
	}
	d := Draft{Answer: *raw.Answer}
	for _, m := range raw.Sources {
		var c struct {
			SourceID *string `json:"source_id"`
			Span     *string `json:"span"`
		}
		if json.Unmarshal(m, &c) != nil || c.SourceID == nil || c.Span == nil {
			return Draft{}, `a source is not an object with a "source_id" and a "span", both strings`
		}
		d.Sources = append(d.Sources, Citation{SourceID: *c.SourceID, Span: *c.Span})
	}
	return d, ""
}

// DefaultPrompt asks for an answer from the sources only, every sentence
// backed by a cited source and a span copied from it. Sources are listed
// most relevant first, each with its id, type and text.
func DefaultPrompt(query string, sources []Source) (system, user string) {
	system = "You answer a question using only the sources given. Every sentence of your answer must be supported by " +
		"a source you cite. For each source you rely on, give its id exactly as written in brackets and a span: " +
		"a passage copied word for word from that source's text. Do not add facts the sources do not state. If the " +
		"sources do not answer the question, say so in one sentence and cite nothing. Reply with only a JSON object: " +
		`{"answer": "...", "sources": [{"source_id": "...", "span": "..."}]}.`
	ordered := slices.Clone(sources)
	slices.SortStableFunc(ordered, func(a, b Source) int { return cmp.Compare(b.Relevance, a.Relevance) })
	var b strings.Builder
	b.WriteString("Sources:\n")
	for _, s := range ordered {
		if strings.TrimSpace(s.Text) == "" {
			continue
		}
		fmt.Fprintf(&b, "[%s] (%s) %s\n", s.ID, cmp.Or(s.Type, "memory"), strings.Join(strings.Fields(s.Text), " "))
	}
	b.WriteString("\nQuestion: ")
	b.WriteString(strings.TrimSpace(query))
	return system, b.String()
}
