package code

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/cairnhq/cairn/memory"
)

// RowChecksum is the SHA-256 over a hydration row's fields (all but the
// checksum itself), each length-prefixed so no two rows share an input.
func RowChecksum(r memory.HydrationRow) string {
	h := sha256.New()
	for _, f := range []string{
		r.EpisodeID, r.SessionID, strconv.Itoa(r.Seq), r.RepoID, r.Key, r.ArtifactHash,
		r.Reason, r.Method, r.TriggeredBy, strconv.Itoa(r.TokenCount), strconv.FormatInt(r.HydratedAt, 10),
	} {
		fmt.Fprintf(h, "%d:%s;", len(f), f)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// chain extends an episode's digest with one row checksum.
func chain(digest, checksum string) string {
	sum := sha256.Sum256([]byte(digest + checksum))
	return hex.EncodeToString(sum[:])
}

// seal sets the rows' checksums and extends the episode's count and digest
// over them.
func seal(ep *memory.Episode, rows []memory.HydrationRow) {
	for i := range rows {
		rows[i].Checksum = RowChecksum(rows[i])
		ep.Digest = chain(ep.Digest, rows[i].Checksum)
		ep.Rows++
	}
}

// Tracking reports whether a session's hydration history is intact. When
// it is not, Problems says what was lost or altered; the rows that still
// verify are used, and the loss is never silent (failure mode 4).
type Tracking struct {
	OK       bool     `json:"ok"`
	Episodes int      `json:"episodes"`
	Rows     int      `json:"rows"`
	Problems []string `json:"problems,omitempty"`
}

// Tracked is an entity hydrated in an earlier episode of the session:
// first in EpisodeID, most recently in LastEpisodeID.
type Tracked struct {
	RepoID        string `json:"repo_id"`
	Key           string `json:"entity_key"`
	EpisodeID     string `json:"episode_id"`
	LastEpisodeID string `json:"last_episode_id"`
}

// verifyTracking checks a session's episodes and rows: episode numbers run
// 1..n without gaps, every row's checksum matches its fields, every
// episode holds as many rows as it sealed and their chain gives its
// digest, and no row belongs to an unknown episode. It returns the rows
// that verify, grouped by episode in order.
func verifyTracking(eps []memory.Episode, rows []memory.HydrationRow) (Tracking, map[string][]memory.HydrationRow) {
	t := Tracking{OK: true, Episodes: len(eps)}
	byEp := map[string][]memory.HydrationRow{}
	known := map[string]bool{}
	for i, ep := range eps {
		known[ep.ID] = true
		if ep.Seq != int64(i+1) {
			t.Problems = append(t.Problems, fmt.Sprintf("episode %s is number %d of its session, expected %d: an earlier episode is missing", ep.ID, ep.Seq, i+1))
		}
	}
	for _, r := range rows {
		if !known[r.EpisodeID] {
			t.Problems = append(t.Problems, fmt.Sprintf("hydration row %d names episode %s, which is missing", r.Seq, r.EpisodeID))
			continue
		}
		if RowChecksum(r) != r.Checksum {
			t.Problems = append(t.Problems, fmt.Sprintf("hydration row %d of episode %s (%s) fails its checksum", r.Seq, r.EpisodeID, r.Key))
			continue
		}
		byEp[r.EpisodeID] = append(byEp[r.EpisodeID], r)
		t.Rows++
	}
	for _, ep := range eps {
		digest, n := "", 0
		for _, r := range rowsOf(rows, ep.ID) {
			digest = chain(digest, r.Checksum)
			n++
		}
		switch {
		case n != ep.Rows:
			t.Problems = append(t.Problems, fmt.Sprintf("episode %s sealed %d hydration rows; %d remain", ep.ID, ep.Rows, n))
		case digest != ep.Digest:
			t.Problems = append(t.Problems, fmt.Sprintf("episode %s: hydration rows do not match the episode's digest", ep.ID))
		}
	}
	t.OK = len(t.Problems) == 0
	return t, byEp
}

// sessionTracking reads a session's episodes and hydration rows and
// verifies them (see verifyTracking).
func (m *Memory) sessionTracking(ctx context.Context, session string) ([]memory.Episode, Tracking, map[string][]memory.HydrationRow, error) {
	eps, err := m.store.SessionEpisodes(ctx, session)
	if err != nil {
		return nil, Tracking{}, nil, err
	}
	rows, err := m.store.SessionHydrationRows(ctx, session)
	if err != nil {
		return nil, Tracking{}, nil, err
	}
	t, byEp := verifyTracking(eps, rows)
	return eps, t, byEp, nil
}

// CheckTracking verifies the hydration history of every session, as
// cairn doctor reports it. Sessions counts the sessions checked; each
// problem names its session.
func (m *Memory) CheckTracking(ctx context.Context) (sessions int, t Tracking, err error) {
	ids, err := m.store.CodeSessions(ctx)
	if err != nil {
		return 0, Tracking{}, err
	}
	t.OK = true
	for _, id := range ids {
		_, st, _, err := m.sessionTracking(ctx, id)
		if err != nil {
			return 0, Tracking{}, err
		}
		t.Episodes += st.Episodes
		t.Rows += st.Rows
		for _, p := range st.Problems {
			t.Problems = append(t.Problems, fmt.Sprintf("session %s: %s", id, p))
		}
	}
	t.OK = len(t.Problems) == 0
	return len(ids), t, nil
}

// CheckEpisode verifies one episode against its hydration rows, as an
// import receives them: every row names the episode and matches its
// checksum, and the rows, in order, are as many as the episode sealed and
// chain to its digest.
func CheckEpisode(ep memory.Episode, rows []memory.HydrationRow) error {
	digest := ""
	for _, r := range rows {
		if r.EpisodeID != ep.ID {
			return fmt.Errorf("hydration row %d names episode %q, not %q", r.Seq, r.EpisodeID, ep.ID)
		}
		if RowChecksum(r) != r.Checksum {
			return fmt.Errorf("hydration row %d of episode %s (%s) fails its checksum", r.Seq, ep.ID, r.Key)
		}
		digest = chain(digest, r.Checksum)
	}
	switch {
	case len(rows) != ep.Rows:
		return fmt.Errorf("episode %s sealed %d hydration rows; %d are given", ep.ID, ep.Rows, len(rows))
	case digest != ep.Digest:
		return fmt.Errorf("episode %s: its hydration rows do not match its digest", ep.ID)
	}
	return nil
}

func rowsOf(rows []memory.HydrationRow, episode string) []memory.HydrationRow {
	var out []memory.HydrationRow
	for _, r := range rows {
		if r.EpisodeID == episode {
			out = append(out, r)
		}
	}
	return out
}

// tracked lists the entities hydrated in the session's episodes before
// seq (every earlier episode, not only the last; 0: all), each once, most
// recently hydrated first, with the episode that first hydrated it.
func tracked(eps []memory.Episode, byEp map[string][]memory.HydrationRow, seq int64) []Tracked {
	var out []Tracked
	at := map[string]int{}
	for i := len(eps) - 1; i >= 0; i-- {
		ep := eps[i]
		if seq > 0 && ep.Seq >= seq {
			continue
		}
		rows := byEp[ep.ID]
		for j := len(rows) - 1; j >= 0; j-- {
			r := rows[j]
			id := r.RepoID + "\x00" + r.Key
			if k, ok := at[id]; ok {
				out[k].EpisodeID = ep.ID
				continue
			}
			at[id] = len(out)
			out = append(out, Tracked{RepoID: r.RepoID, Key: r.Key, EpisodeID: ep.ID, LastEpisodeID: ep.ID})
		}
	}
	return out
}
