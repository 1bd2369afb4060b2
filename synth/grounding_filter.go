package synth

import (
	"strings"
)

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
	for i, l := range lines {
		if touched[i] {
			l = tidyLine(l)
			if l == "" {
				continue
			}
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(dropBareLabels(out), "\n"))
}

// tidyLine collapses the spaces a removal left; a line left with nothing
// but its bullet is empty.
func tidyLine(l string) string {
	indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
	body := strings.Join(strings.Fields(l), " ")
	if strings.TrimSpace(bulletRE.ReplaceAllString(body, "")) == "" {
		return ""
	}
	return indent + body
}

// dropBareLabels drops a label line ("Caroline:") that no list item
// follows any more.
func dropBareLabels(lines []string) []string {
	var out []string
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if isLabelLine(t) && (i+1 == len(lines) || !bulletRE.MatchString(strings.TrimSpace(lines[i+1]))) {
			continue
		}
		out = append(out, l)
	}
	return out
}
