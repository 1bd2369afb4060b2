package transfer

import (
	"github.com/cairnhq/cairn/code"
	"github.com/cairnhq/cairn/memory"
)

// checkCodeRecord validates a code-memory record of an import: entity keys
// parse and agree with the entity's path and symbol, hydration rows match
// their checksums. The store checks the rest (hashes, states, references)
// when it writes the dump.
func checkCodeRecord(r *memory.Record) error {
	switch {
	case r.CodeEntity != nil:
		e := r.CodeEntity
		p, sym, err := code.ParseKey(e.Key)
		if err != nil {
			return err
		}
		if (e.Path != "" && e.Path != p) || (e.Symbol != "" && e.Symbol != sym) {
			return memory.Errorf(memory.CodeInvalidParams, "code entity %s: filepath %q and symbol %q disagree with the key", e.Key, e.Path, e.Symbol)
		}
	case r.CodeTransition != nil:
		if _, _, err := code.ParseKey(r.CodeTransition.Key); err != nil {
			return err
		}
	case r.HydrationRow != nil:
		h := r.HydrationRow
		if _, _, err := code.ParseKey(h.Key); err != nil {
			return err
		}
		if code.RowChecksum(*h) != h.Checksum {
			return memory.Errorf(memory.CodeInvalidParams, "hydration row %d of episode %s (%s) fails its checksum", h.Seq, h.EpisodeID, h.Key)
		}
	}
	return nil
}

// checkCodeDump verifies what no single record shows: every episode of the
// dump comes with exactly the hydration rows it sealed, and every row with
// its episode, so an import can never bring in a tracking history that
// would later read as lost.
func checkCodeDump(d memory.Dump) error {
	inDump := map[string]bool{}
	for _, ep := range d.Episodes {
		inDump[ep.ID] = true
	}
	byEp := map[string][]memory.HydrationRow{}
	for i, r := range d.HydrationRows {
		if !inDump[r.EpisodeID] {
			// Rows appended to an episode outside the import would break
			// its seal: they travel with their episode.
			return &memory.RecordError{Section: memory.SectionHydrationRows, Index: i,
				Err: memory.Errorf(memory.CodeInvalidParams, "hydration row %d names episode %q, which the import does not hold", r.Seq, r.EpisodeID)}
		}
		byEp[r.EpisodeID] = append(byEp[r.EpisodeID], r)
	}
	for i, ep := range d.Episodes {
		if err := code.CheckEpisode(ep, byEp[ep.ID]); err != nil {
			return &memory.RecordError{Section: memory.SectionEpisodes, Index: i,
				Err: memory.Errorf(memory.CodeInvalidParams, "%v", err)}
		}
	}
	return nil
}
