package sqlstore

import (
	"fmt"

	"github.com/cairnhq/cairn/memory"
)

// Findings collects what a store's Check finds.
type Findings struct {
	// List is what was found, in order.
	List []memory.Finding
	// RebuildFix is the store's advice when its full-text index disagrees
	// with the records; a finding with it can be repaired by
	// RebuildIndex.
	RebuildFix string
}

// Add records a finding; fix is the advice when it is not OK.
func (f *Findings) Add(check string, ok bool, detail, fix string) {
	x := memory.Finding{Check: check, OK: ok, Detail: detail}
	if !ok {
		x.Fix = fix
		if fix == f.RebuildFix {
			x.Repair = memory.RepairRebuildIndex
		}
	}
	f.List = append(f.List, x)
}

// Indexed records whether the full-text index holds every searchable
// observation and summary (forgotten ones stay out).
func (f *Findings) Indexed(st memory.Stats) {
	wantObs := st.Observations - st.Redacted
	f.Add("observation index", st.IndexedObservations == wantObs,
		fmt.Sprintf("%d of %d searchable observations indexed (%d forgotten, not indexed)", st.IndexedObservations, wantObs, st.Redacted),
		f.RebuildFix)
	wantSums := st.Summaries - st.RedactedSummaries
	f.Add("summary index", st.IndexedSummaries == wantSums,
		fmt.Sprintf("%d of %d searchable summaries indexed (%d forgotten, not indexed)", st.IndexedSummaries, wantSums, st.RedactedSummaries),
		f.RebuildFix)
}
