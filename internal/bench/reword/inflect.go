package reword

import "strings"

// Form is the inflection of a word as it stands in a question.
type Form int

// The forms the rules inflect.
const (
	Base       Form = iota // paint, dog
	Third                  // paints (verb); dogs (noun plural)
	Past                   // painted, went
	Participle             // painted, gone
	Gerund                 // painting
)

// irregular verbs: base, past, participle.
const irregularVerbs = `arise arose arisen|awake awoke awoken|be was been|bear bore born|beat beat beaten|become became become
begin began begun|bend bent bent|bet bet bet|bind bound bound|bite bit bitten|bleed bled bled|blow blew blown|break broke broken
breed bred bred|bring brought brought|build built built|burn burnt burnt|burst burst burst|buy bought bought|catch caught caught
choose chose chosen|cling clung clung|come came come|cost cost cost|creep crept crept|cut cut cut|deal dealt dealt|dig dug dug
do did done|draw drew drawn|dream dreamt dreamt|drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen|feed fed fed
feel felt felt|fight fought fought|find found found|flee fled fled|fly flew flown|forbid forbade forbidden|forget forgot forgotten
forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given|go went gone|grind ground ground|grow grew grown
hang hung hung|have had had|hear heard heard|hide hid hidden|hit hit hit|hold held held|hurt hurt hurt|keep kept kept
kneel knelt knelt|know knew known|lay laid laid|lead led led|lean leant leant|leap leapt leapt|learn learnt learnt|leave left left
lend lent lent|let let let|lie lay lain|light lit lit|lose lost lost|make made made|mean meant meant|meet met met|pay paid paid
put put put|quit quit quit|read read read|ride rode ridden|ring rang rung|rise rose risen|run ran run|say said said|see saw seen
seek sought sought|sell sold sold|send sent sent|set set set|shake shook shaken|shed shed shed|shine shone shone|shoot shot shot
show showed shown|shrink shrank shrunk|shut shut shut|sing sang sung|sink sank sunk|sit sat sat|sleep slept slept|slide slid slid
speak spoke spoken|spend spent spent|spin spun spun|spit spat spat|split split split|spread spread spread|spring sprang sprung
stand stood stood|steal stole stolen|stick stuck stuck|sting stung stung|stink stank stunk|strike struck struck|string strung strung
strive strove striven|swear swore sworn|sweep swept swept|swim swam swum|swing swung swung|take took taken|teach taught taught
tear tore torn|tell told told|think thought thought|throw threw thrown|understand understood understood|undertake undertook undertaken
wake woke woken|wear wore worn|weave wove woven|weep wept wept|win won won|wind wound wound|withdraw withdrew withdrawn
write wrote written|overcome overcame overcome|undergo underwent undergone|outgrow outgrew outgrown|rebuild rebuilt rebuilt
retell retold retold|mislead misled misled|upset upset upset|oversee oversaw overseen|foresee foresaw foreseen`

// verbForms maps a base to its past and participle, and formOf an
// irregular inflected form to its base and form.
var verbForms, formOf = func() (map[string][2]string, map[string]struct {
	base string
	form Form
}) {
	forms := map[string][2]string{}
	of := map[string]struct {
		base string
		form Form
	}{}
	for _, v := range strings.FieldsFunc(irregularVerbs, func(r rune) bool { return r == '|' || r == '\n' }) {
		f := strings.Fields(v)
		forms[f[0]] = [2]string{f[1], f[2]}
		if _, ok := of[f[2]]; !ok && f[2] != f[0] {
			of[f[2]] = struct {
				base string
				form Form
			}{f[0], Participle}
		}
		if f[1] != f[0] {
			of[f[1]] = struct {
				base string
				form Form
			}{f[0], Past}
		}
	}
	return forms, of
}()

// vowel reports whether b is a vowel letter.
func vowel(b byte) bool { return strings.IndexByte("aeiou", b) >= 0 }

// doubles reports whether a verb doubles its last consonant before -ed
// and -ing (stop, plan, admit): one vowel then one consonant at the end
// of a short word.
func doubles(w string) bool {
	n := len(w)
	if n < 3 || n > 5 {
		return false
	}
	c, v, p := w[n-1], w[n-2], w[n-3]
	groups := 0 // one syllable only: open and visit do not double
	for i := range n {
		if vowel(w[i]) && (i == 0 || !vowel(w[i-1])) {
			groups++
		}
	}
	return groups == 1 && !vowel(c) && strings.IndexByte("wxy", c) < 0 && vowel(v) && !vowel(p)
}

// Inflect puts a one-word verb or noun lemma in form (a noun's Third is
// its plural). A multi-word lemma inflects its first word as a verb
// ("look after" → "looked after") and its last as a noun.
func (wn *WordNet) Inflect(lemma string, pos POS, form Form) string {
	if pos == Noun && form != Base {
		j := strings.LastIndexByte(lemma, ' ')
		if p, ok := wn.Plural(lemma[j+1:]); ok {
			return lemma[:j+1] + p
		}
	}
	return Inflect(lemma, pos, form)
}

// Inflect puts a one-word verb or noun lemma in form by the regular
// rules and a table of irregular verbs (WordNet.Inflect also knows
// irregular plurals).
func Inflect(lemma string, pos POS, form Form) string {
	if form == Base {
		return lemma
	}
	if i := strings.IndexByte(lemma, ' '); i > 0 {
		if pos == Verb {
			return Inflect(lemma[:i], pos, form) + lemma[i:]
		}
		j := strings.LastIndexByte(lemma, ' ')
		return lemma[:j+1] + Inflect(lemma[j+1:], pos, form)
	}
	if pos == Noun {
		return plural(lemma)
	}
	if pos != Verb {
		return lemma
	}
	switch form {
	case Third:
		if lemma == "be" {
			return "is"
		}
		if lemma == "have" {
			return "has"
		}
		if strings.HasSuffix(lemma, "o") {
			return lemma + "es"
		}
		return plural(lemma)
	case Past, Participle:
		if f, ok := verbForms[lemma]; ok {
			return f[form-Past]
		}
		switch {
		case strings.HasSuffix(lemma, "e"):
			return lemma + "d"
		case strings.HasSuffix(lemma, "y") && len(lemma) > 1 && !vowel(lemma[len(lemma)-2]):
			return lemma[:len(lemma)-1] + "ied"
		case doubles(lemma):
			return lemma + lemma[len(lemma)-1:] + "ed"
		}
		return lemma + "ed"
	case Gerund:
		switch {
		case strings.HasSuffix(lemma, "ie"):
			return lemma[:len(lemma)-2] + "ying"
		case strings.HasSuffix(lemma, "e") && !strings.HasSuffix(lemma, "ee") && len(lemma) > 2:
			return lemma[:len(lemma)-1] + "ing"
		case doubles(lemma):
			return lemma + lemma[len(lemma)-1:] + "ing"
		}
		return lemma + "ing"
	}
	return lemma
}

// plural is a noun's plural, or a verb's third person singular.
func plural(w string) string {
	switch {
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "z"),
		strings.HasSuffix(w, "ch"), strings.HasSuffix(w, "sh"):
		return w + "es"
	case strings.HasSuffix(w, "y") && len(w) > 1 && !vowel(w[len(w)-2]):
		return w[:len(w)-1] + "ies"
	}
	return w + "s"
}

// Irregular reports whether lemma is a verb with irregular forms, so
// that a form seen in text can be read back to its base.
func Irregular(lemma string) bool {
	_, ok := verbForms[lemma]
	return ok
}

// verbFormOf reads how word inflects lemma (a verb).
func verbFormOf(word, lemma string) Form {
	if f, ok := formOf[word]; ok && f.base == lemma {
		return f.form
	}
	switch {
	case word == lemma:
		return Base
	case strings.HasSuffix(word, "ing"):
		return Gerund
	case strings.HasSuffix(word, "ed"):
		return Past
	case strings.HasSuffix(word, "s"):
		return Third
	}
	return Base
}
