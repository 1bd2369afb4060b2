package retrieve

import "strings"

// stopwords are common English function words. They carry little meaning in
// a query, match most records, and so add noise and cost; a query made only
// of them is still searched.
var stopwords = setOf(`
a about above after again against all am an and any are aren as at
be because been before being below between both but by
can cannot could couldn
d did didn do does doesn doing don down during
each few for from further
had hadn has hasn have haven having he her here hers herself him himself his how
i if in into is isn it its itself
just ll m me more most mustn my myself
no nor not now o of off on once only or other our ours ourselves out over own
re s same shan she should shouldn so some such
t than that the their theirs them themselves then there these they this those through to too
under until up ve very
was wasn we were weren what when where which while who whom why will with won would wouldn
y you your yours yourself yourselves
`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
