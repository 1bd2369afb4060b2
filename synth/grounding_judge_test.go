package synth_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/internal/llmtest"
	"github.com/cairnhq/cairn/llm"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/synth"
)

// teamAnswer is a model's answer over team: four supported claims and one
// fabricated, all citing real sources.
const teamAnswer = `{"answer": "Omar approved the release on Friday. Priya fixed the flaky login test. Omar rotated the production keys. The staging database runs PostgreSQL 15. Priya reviewed the migration plan.",
	"sources": [{"source_id": "t-1", "span": "Omar approved the release"}, {"source_id": "t-2", "span": "Priya fixed the flaky login test"},
	{"source_id": "t-3", "span": "The staging database runs PostgreSQL 15"}, {"source_id": "t-4", "span": "Priya reviewed the migration plan"}]}`

// verdicts is a judge's answer.
func verdicts(vs ...[3]string) string {
	type v struct {
		Claim    int    `json:"claim"`
		Verdict  string `json:"verdict"`
		SourceID string `json:"source_id"`
		Evidence string `json:"evidence"`
	}
	out := struct {
		Verdicts []v `json:"verdicts"`
	}{Verdicts: []v{}}
	for i, x := range vs {
		out.Verdicts = append(out.Verdicts, v{Claim: i + 1, Verdict: x[0], SourceID: x[1], Evidence: x[2]})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

var agree = verdicts([3]string{"entailed", "t-1", "Omar approved the release on Friday"}, [3]string{"entailed", "t-2", "Priya fixed the flaky login test"},
	[3]string{"entailed", "t-3", "The staging database runs PostgreSQL 15"}, [3]string{"entailed", "t-4", "reviewed the migration plan"})

func judged(t *testing.T, answer string, judge synth.ModelReply, judgeErr error) (synth.Synthesis, *script) {
	t.Helper()
	s := &script{replies: []synth.ModelReply{reply(answer), judge}}
	model := s.model
	if judgeErr != nil {
		model = func(ctx context.Context, req synth.ModelRequest) (synth.ModelReply, error) {
			if len(s.requests) == 1 {
				s.requests = append(s.requests, req)
				return synth.ModelReply{}, judgeErr
			}
			return s.model(ctx, req)
		}
	}
	res, err := synth.LLMSynthesizer{Model: model, Judge: &synth.Judge{Model: model}}.Synthesize(context.Background(), "What happened?", team)
	if err != nil {
		t.Fatal(err)
	}
	return res, s
}

// An agreeing judge changes nothing but the bill: it is asked once, about
// the claims the offline check supports only, with their spans; its
// tokens and cost count.
func TestJudgeAgrees(t *testing.T) {
	res, s := judged(t, teamAnswer, reply(agree), nil)
	if res.Refused || res.CoverageRatio != 0.8 || strings.Contains(res.Answer, "rotated") || res.Calls != 2 ||
		res.PromptTokens != 200 || res.Cost != 0.002 || res.Judge == nil || res.Judge.Calls != 1 || res.Judge.Vetoed != 0 {
		t.Fatalf("got %+v judge %+v", res, res.Judge)
	}
	req := s.requests[1]
	if string(req.Schema) != string(synth.JudgeSchema) || !strings.Contains(req.Messages[0].Content, "Claim 3: The staging database runs PostgreSQL 15.") ||
		!strings.Contains(req.Messages[0].Content, "Claim 4: Priya reviewed the migration plan.") ||
		!strings.Contains(req.Messages[0].Content, "[t-3] The staging database runs PostgreSQL 15") || strings.Contains(req.Messages[0].Content, "rotated") {
		t.Fatalf("judge request %+v", req)
	}
}

// A claim is supported only when the offline check and the judge agree:
// a judge that finds a claim not stated, contradicted, or entailed by
// words the cited source does not hold, takes its support away; the
// refusal rule is applied again.
func TestJudgeVetoes(t *testing.T) {
	for name, tc := range map[string]struct {
		judge   string
		refused bool
		reason  string
	}{
		"not stated":     {verdicts([3]string{"entailed", "t-1", "Omar approved the release"}, [3]string{"not_stated", "", ""}, [3]string{"entailed", "t-3", "PostgreSQL 15"}, [3]string{"entailed", "t-4", "reviewed the migration plan"}), false, "does not state it"},
		"contradicted":   {verdicts([3]string{"contradicted", "", ""}, [3]string{"contradicted", "", ""}, [3]string{"entailed", "t-3", "PostgreSQL 15"}, [3]string{"entailed", "t-4", "reviewed the migration plan"}), true, ""},
		"lying evidence": {verdicts([3]string{"entailed", "t-1", "Omar approved the release"}, [3]string{"entailed", "t-2", "Priya fixed every test"}, [3]string{"entailed", "t-3", "PostgreSQL 15"}, [3]string{"entailed", "t-4", "reviewed the migration plan"}), false, "evidence is not in the cited source"},
		"another source": {verdicts([3]string{"entailed", "t-1", "Omar approved the release"}, [3]string{"entailed", "t-1", "Omar approved"}, [3]string{"entailed", "t-3", "PostgreSQL 15"}, [3]string{"entailed", "t-4", "reviewed the migration plan"}), false, "names a source the claim does not cite"},
		"empty evidence": {verdicts([3]string{"entailed", "t-1", "Omar approved the release"}, [3]string{"entailed", "t-2", "the"}, [3]string{"entailed", "t-3", "PostgreSQL 15"}, [3]string{"entailed", "t-4", "reviewed the migration plan"}), false, "gave no evidence"},
	} {
		res, _ := judged(t, teamAnswer, reply(tc.judge), nil)
		if res.Refused != tc.refused {
			t.Errorf("%s: refused %v: %+v", name, res.Refused, res)
			continue
		}
		if tc.refused {
			if res.Answer != synth.RefusalText || res.Judge.Vetoed != 2 {
				t.Errorf("%s: %+v", name, res)
			}
			continue
		}
		if strings.Contains(res.Answer, "flaky") || res.CoverageRatio != 0.6 || res.Judge.Vetoed != 1 || !strings.Contains(res.Notes, tc.reason) {
			t.Errorf("%s: %+v", name, res)
		}
	}
}

// A judge that cannot make a fabrication pass: it is not asked about the
// claims the offline check refuses, however it would vote.
func TestJudgeRubberStampPassesNoFabrication(t *testing.T) {
	stamp := verdicts([3]string{"entailed", "t-1", "Omar approved the release"}, [3]string{"entailed", "t-2", "Priya fixed the flaky login test"},
		[3]string{"entailed", "t-3", "PostgreSQL 15"}, [3]string{"entailed", "t-4", "reviewed the migration plan"})
	res, s := judged(t, teamAnswer, reply(stamp), nil)
	if strings.Contains(res.Answer, "rotated") || len(res.Removed()) != 1 || strings.Contains(s.requests[1].Messages[0].Content, "rotated") {
		t.Fatalf("got %+v", res)
	}
}

// When the judge fails, the answer is verified offline alone and the
// notes say so; nothing is lost.
func TestJudgeFailsOpenToOffline(t *testing.T) {
	down := memory.Errorf(llm.CodeUnavailable, "the openai model is unavailable: it did not answer within its timeout of 1s")
	for name, tc := range map[string]struct {
		reply synth.ModelReply
		err   error
	}{
		"error":         {err: down},
		"prose":         {reply: reply("All claims look fine to me.")},
		"a claim left":  {reply: reply(verdicts([3]string{"entailed", "t-1", "Omar approved"}))},
		"a claim twice": {reply: reply(strings.Replace(agree, `"claim":2`, `"claim":1`, 1))},
		"unknown":       {reply: reply(strings.Replace(agree, `"entailed"`, `"probably"`, 1))},
		"cut short":     {reply: synth.ModelReply{Text: agree[:40], FinishReason: "length"}},
	} {
		res, _ := judged(t, teamAnswer, tc.reply, tc.err)
		if res.Refused || res.CoverageRatio != 0.8 || res.Judge == nil || res.Judge.Failed == "" ||
			!strings.Contains(res.Notes, "verified offline alone") || strings.Contains(res.Answer, "rotated") {
			t.Errorf("%s: %+v judge %+v", name, res, res.Judge)
		}
	}
	if _, err := (synth.LLMSynthesizer{Model: (&script{err: errors.New("x")}).model}).Synthesize(context.Background(), "q", team); err == nil {
		t.Fatal("a failing answer model is still an error")
	}
}

func TestJudgeFromEnv(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "on": true, "": false, "0": false, "maybe": false} {
		got, notes := synth.JudgeFromEnv(func(string) string { return v })
		if got != want || (v == "maybe") != (len(notes) == 1) {
			t.Errorf("%q: %v %v", v, got, notes)
		}
	}
}

// The judge over every provider's wire format (fake servers): one that
// agrees, one that lies (entailed, with words the source does not hold),
// one that never answers (its timeout), one that answers prose. The
// answer's tokens and the judge's add up.
func TestJudgeOverEveryProvider(t *testing.T) {
	compact := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	lie := verdicts([3]string{"entailed", "t-1", "Omar approved the release"}, [3]string{"entailed", "t-2", "Priya fixed every flaky test"},
		[3]string{"entailed", "t-3", "PostgreSQL 15"}, [3]string{"entailed", "t-4", "reviewed the migration plan"})
	for _, p := range []string{llm.ProviderOpenAI, llm.ProviderOllama, llm.ProviderGemini, llm.ProviderAnthropic} {
		t.Run(p, func(t *testing.T) {
			ask := func(t *testing.T, judge llmtest.Answer) (*llmtest.Server, synth.Synthesis) {
				srv := llmtest.New(t, p, llmtest.Answer{Text: compact(teamAnswer)}, judge)
				s := srv.Settings()
				s.Retries = 0
				if judge.Hang {
					s.Timeout = time.Second // the judge that never answers waits it out
				}
				c, err := llm.New(s)
				if err != nil {
					t.Fatal(err)
				}
				m := modelFor(c)
				res, err := synth.LLMSynthesizer{Model: m, Judge: &synth.Judge{Model: m}}.Synthesize(context.Background(), "What happened?", team)
				if err != nil {
					t.Fatal(err)
				}
				return srv, res
			}
			srv, res := ask(t, llmtest.Answer{Text: agree})
			if res.Refused || res.CoverageRatio != 0.8 || res.Calls != 2 || res.PromptTokens != 240 || len(srv.Requests()) != 2 || res.Judge.Failed != "" {
				t.Fatalf("agreeing: %+v %+v", res, res.Judge)
			}
			if !strings.Contains(string(srv.Requests()[1].Raw), "verdicts") {
				t.Fatalf("the judge's schema was not sent: %s", srv.Requests()[1].Raw)
			}
			_, res = ask(t, llmtest.Answer{Text: lie})
			if res.Refused || strings.Contains(res.Answer, "flaky") || res.Judge.Vetoed != 1 || !strings.Contains(res.Notes, "evidence is not in the cited source") {
				t.Fatalf("lying: %+v %+v", res, res.Judge)
			}
			_, res = ask(t, llmtest.Answer{Hang: true})
			if res.Refused || res.CoverageRatio != 0.8 || !strings.Contains(res.Judge.Failed, "did not answer within its timeout") ||
				!strings.Contains(res.Notes, "verified offline alone") || strings.Contains(res.Notes, srv.URL) {
				t.Fatalf("timeout: %+v %+v", res, res.Judge)
			}
			_, res = ask(t, llmtest.Answer{Text: "The claims look right."})
			if res.Refused || res.Judge.Failed == "" || !strings.Contains(res.Notes, "verified offline alone") {
				t.Fatalf("malformed: %+v %+v", res, res.Judge)
			}
		})
	}
}
