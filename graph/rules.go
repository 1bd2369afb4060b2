package graph

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

var ambiguousTech = set(`go make node bun vault helm spark lambda rails cargo celery consul envoy jaeger flink locust honeycomb okta nats`)

// identParts splits a kebab- or snake-case identifier into its words.
func identParts(w string) []string {
	return strings.FieldsFunc(strings.ToLower(w), func(r rune) bool { return r == '-' || r == '_' })
}

// wordRule classifies one word token on its own: the rule, the entity
// type and the confidence ("" when the word is no entity by itself).
func (x *extractor) wordRule(t token, initial bool) (rule, typ string, conf float64) {
	w := t.text
	lw := strings.ToLower(w)
	if t.code {
		if strings.ContainsAny(w, " \t") || len(w) > 120 || strings.ContainsAny(w, "<>{}()[];=\"'$|&*!?,\\") {
			// Markup, code and shell snippets are not names: an
			// identifier or a path holds none of these.
			return "", "", 0
		}
		if strings.Contains(w, "/") || strings.Contains(w, ".") {
			return "code", "file", confCode
		}
		return "code", "component", confCode
	}
	if !t.word || isNumeric(w) || pronouns[lw] || calendar[lw] || genericAcronyms[lw] {
		return "", "", 0
	}
	if canon, ok := knownTech[lw]; ok && (isCapitalised(w) || hasInnerCapital(canon) || !ambiguousTech[lw] && !commonWords[lw]) {
		if !initial || !commonWords[lw] {
			return "known", "technology", confKnown
		}
	}
	if strings.Contains(w, ".") && !strings.Contains(w, "/") && !isCapitalised(w) && !hasInnerCapital(w) && !fileExt.MatchString(w) {
		// Dotted names (orders.customer_id, e.g) are fields and
		// abbreviations, not entities.
		return "", "", 0
	}
	if strings.ContainsAny(w, "-_") {
		parts := identParts(w)
		if last := parts[len(parts)-1]; strings.HasSuffix(last, "ed") || strings.HasSuffix(last, "ing") {
			// rate-limited, short-lived, self-hosted: adjectives.
			return "", "", 0
		}
		if len(parts) < 2 {
			return "", "", 0
		}
		uncommon := false
		for _, p := range parts {
			if !commonWords[p] && !isNumeric(p) {
				uncommon = true
			}
		}
		if componentSuffixes[parts[len(parts)-1]] && !compoundHeads[parts[0]] {
			return "ident", "service", confIdent
		}
		if componentSuffixes[parts[len(parts)-1]] || uncommon && !isCapitalised(w) && hasLetters(parts) {
			if !uncommon {
				return "", "", 0
			}
			return "ident", "component", confIdent
		}
		return "", "", 0
	}
	if strings.ContainsAny(w, "./") && !isCapitalised(w) && !hasInnerCapital(w) {
		// A path or a file name: session.go, deploy/values.yaml.
		if strings.Contains(w, "/") || fileExt.MatchString(w) {
			return "path", "file", confIdent
		}
		return "", "", 0
	}
	switch {
	case hasInnerCapital(w):
		return "camel", "technology", confCamel
	case isAcronym(w):
		return "acronym", "technology", confAcronym
	case isCapitalised(w) && !initial:
		// Capitalised inside a sentence: a name, even when the word is
		// common otherwise (Go, Vault).
		return "cap", "concept", confCap
	case isCapitalised(w) && initial && !commonWords[lw]:
		return "initial", "concept", confInitialLow
	}
	return "", "", 0
}

var fileExt = regexp.MustCompile(`\.(?:go|py|js|ts|tsx|jsx|rs|java|kt|rb|c|h|cc|cpp|cs|sh|yaml|yml|json|toml|md|sql|proto|txt|cfg|ini|conf|env|lock|mod|sum)$`)

func hasLetters(parts []string) bool {
	for _, p := range parts {
		for _, r := range p {
			if unicode.IsLetter(r) {
				return true
			}
		}
	}
	return false
}

// mentions finds the entity mentions of a sentence and records them.
func (x *extractor) mentions(s sentence) []mention {
	var out []mention
	toks := s.toks
	for i := 0; i < len(toks); {
		initial := !slices.ContainsFunc(toks[:i], func(t token) bool { return t.word || t.code })
		rule, typ, conf := x.wordRule(toks[i], initial)
		if rule == "cap" || rule == "initial" {
			lw := strings.ToLower(toks[i].text)
			switch {
			case i+1 < len(toks) && toks[i+1].text == ":":
				// A label inside a line ("> Quote: fine").
				rule = ""
			case rule == "cap" && commonWords[lw] && !toks[i-1].word:
				// A common word capitalised after punctuation is style
				// (a list, a label), not a name.
				rule = ""
			}
		}
		if rule == "" {
			i++
			continue
		}
		j := i + 1
		// A run of capitalised words (and a version or number right
		// after a name is dropped): Chen Wei, Acme Corp, GitHub Actions,
		// Grafana Loki, Project Falcon.
		if rule == "cap" || rule == "initial" || rule == "known" || rule == "camel" || rule == "acronym" {
			for j < len(toks) && toks[j].word && isCapitalised(toks[j].text) && !isNumeric(toks[j].text) &&
				!calendar[strings.ToLower(toks[j].text)] && !genericAcronyms[strings.ToLower(toks[j].text)] && j-i < 4 {
				j++
			}
		}
		name := joinWords(toks[i:j])
		if j-i > 1 {
			last := strings.ToLower(toks[j-1].text)
			first := strings.ToLower(toks[i].text)
			switch {
			case orgSuffixes[last]:
				typ, conf = "organization", confMultiCap
			case first == "project":
				typ, conf = "project", confMultiCap
			case rule == "known" || rule == "camel":
				conf = max(conf, confMultiCap)
			default:
				conf = confMultiCap
			}
			rule = "multicap"
		}
		if rule == "initial" {
			// A capitalised word opening a sentence is a name when a verb
			// follows it, or when it is capitalised inside a sentence too.
			lw := strings.ToLower(name)
			if x.capsSeen[lw] {
				conf = confCap
			} else if j < len(toks) && toks[j].word && (humanVerbs[strings.ToLower(toks[j].text)] || relationStarts[strings.ToLower(toks[j].text)]) {
				conf = confInitial
			}
		}
		if typ == "concept" && j < len(toks) && toks[j].word && humanVerbs[strings.ToLower(toks[j].text)] && j-i <= 2 && rule != "known" {
			typ = "person"
		}
		if typ == "concept" && i > 0 && toks[i-1].word && personCue[strings.ToLower(toks[i-1].text)] {
			typ = "person"
		}
		x.addEntity(name, typ, conf, rule, s)
		out = append(out, mention{s: i, e: j, name: name})
		i = j
	}
	return out
}

// personCue words before a name say it is a person ("with Bob").
var personCue = set(`with ask asked by thanks told`)
