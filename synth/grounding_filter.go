package synth

import (
	"regexp"
	"strings"
)

// bareBulletRE is a line left with nothing but its bullet.
var bareBulletRE = regexp.MustCompile(`^(?:[-*+•]|\d{1,2}[.)])?$`)

// Accepted answers carry only supported claims: the sentences of the
// unsupported ones are taken out of the answer, which keeps its lines,
// list items and the sentences that make no claim.

// keepSupported is the answer with the sentences of unsupported claims
// removed: from their line, a line left empty (or with only its bullet)
// dropped, and a list's label line dropped when no item under it is left.
func keepSupported(d Draft, claims []claim, checks []ClaimCheck) string {
	all := true
	for _, c := range checks {
		all = all && c.Supported
	}
	if all {
		return strings.TrimSpace(d.Answer)
	}
	if len(claims) > 0 && claims[0].line < 0 {
		var kept []string
		for i, c := range claims {
			if checks[i].Supported {
				kept = append(kept, c.raw)
			}
		}
		return strings.Join(kept, " ")
	}
	lines := strings.Split(d.Answer, "\n")
	touched := make([]bool, len(lines))
	for i, c := range claims {
		if !checks[i].Supported && c.line >= 0 && c.line < len(lines) {
			lines[c.line] = strings.Replace(lines[c.line], c.raw, "", 1)
			touched[c.line] = true
		}
	}
	var out []string
	var overList []bool // a label line over list items
	for i, l := range lines {
		if touched[i] {
			l = tidyLine(l)
			if l == "" {
				continue
			}
		}
		out = append(out, l)
		overList = append(overList, i+1 < len(lines) && bulletRE.MatchString(strings.TrimSpace(lines[i+1])))
	}
	return strings.TrimSpace(strings.Join(dropBareLabels(out, overList), "\n"))
}

// tidyLine collapses the spaces a removal left; a line left with nothing
// but its bullet is empty.
func tidyLine(l string) string {
	indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
	body := strings.Join(strings.Fields(l), " ")
	if bareBulletRE.MatchString(body) {
		return ""
	}
	return indent + body
}

// dropBareLabels drops a label line ("Caroline:") that stands over
// nothing any more: followed by a blank line, another label or the end,
// or, over a list, by no list item.
func dropBareLabels(lines []string, overList []bool) []string {
	var out []string
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if isLabelLine(t) {
			next := ""
			if i+1 < len(lines) {
				next = strings.TrimSpace(lines[i+1])
			}
			if next == "" || isLabelLine(next) || overList[i] && !bulletRE.MatchString(next) {
				continue
			}
		}
		out = append(out, l)
	}
	return out
}

// Removed returns the claims of an accepted answer that were not
// supported: their sentences are not in Answer. A refused response has
// none (it carries no claims).
func (r GroundedResponse) Removed() []ClaimCheck {
	var out []ClaimCheck
	for _, c := range r.Claims {
		if !c.Supported {
			out = append(out, c)
		}
	}
	return out
}

// Verified is the answer as the verifier accepted it: refused (no text,
// no sentences, the verifier's notes) when r is a refusal, else only the
// sentences whose claims r found supported, with the text they make up.
// A sentence that makes no claim (r has no verdict on it) is kept. It is
// what a synthesiser's answer becomes once checked: nothing the verifier
// did not accept is shown or saved.
func (a Answer) Verified(r GroundedResponse) Answer {
	out := Answer{Name: a.Name, Sentences: []Sentence{}, Notes: r.Notes}
	if r.Refused {
		out.Refused = true
		return out
	}
	unsupported := map[string]bool{}
	for _, c := range r.Claims {
		if !c.Supported {
			unsupported[quoteKey(c.Text)] = true
		}
	}
	var texts []string
	for _, s := range a.Sentences {
		if unsupported[quoteKey(stripMarkers(s.Text))] {
			continue
		}
		out.Sentences = append(out.Sentences, s)
		texts = append(texts, s.Text)
	}
	if len(out.Sentences) == len(a.Sentences) {
		out.Text = a.Text
	} else {
		out.Text = strings.Join(texts, " ")
	}
	return out
}
