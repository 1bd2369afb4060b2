package cairn_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// bothStores runs test on the sample in SQLite and in PostgreSQL.
func bothStores(t *testing.T, test func(*testing.T, *cairn.Engine)) {
	t.Run("sqlite", func(t *testing.T) { test(t, openSample(t, nil)) })
	t.Run("postgres", func(t *testing.T) { test(t, openSampleAt(t, pgURL(t), nil)) })
}

// filler is JSON Lines of n observations as Export writes them, ids
// obs_p0000 on, enough to fill several of an import's parts.
func filler(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"observation":{"id":"obs_p%04d","kind":"message","content":"filler line %d","provenance":{},"ts":%d,"scopeIds":{"repoId":"r"},"redacted":false}}`,
			i, i, 1772438400000+i)
	}
	return out
}

// An import written a part at a time gives what the whole file written at
// once gives: records that name a record on a later line (an observation
// to record naming a capsule or a session, a pin) find it, however many
// parts lie between.
func TestImportAcrossPartsFindsLaterLines(t *testing.T) {
	bothStores(t, testImportAcrossPartsFindsLaterLines)
}

func testImportAcrossPartsFindsLaterLines(t *testing.T, eng *cairn.Engine) {
	lines := []string{
		`{"kind":"message","content":"names a capsule on a later line","capsuleId":"cap_late"}`,
		`{"kind":"message","content":"names the session of a capsule on a later line","scopeIds":{"sessionId":"s_late"}}`,
		`{"pin":{"id":"pin_late","targetType":"observation","targetId":"obs_tail","createdAt":1772438400000,"scopeIds":{}}}`,
	}
	lines = append(lines, filler(2500)...)
	lines = append(lines,
		`{"capsule":{"id":"cap_late","type":"session","intent":"late","status":"open","openedAt":1772438400000,"scopeIds":{"sessionId":"s_late"},"observationIds":["obs_p0001"]}}`,
		`{"observation":{"id":"obs_tail","kind":"message","content":"the pin's target, last","provenance":{},"ts":1772438400000,"scopeIds":{},"redacted":false}}`)
	rep, err := eng.Import(ctx, strings.NewReader(strings.Join(lines, "\n")), cairn.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Observations != 2503 || rep.Capsules != 1 || rep.Pins != 1 {
		t.Fatalf("report %+v; want 2,503 observations, a capsule and a pin", rep)
	}
	var members []string
	contents := map[string]string{}
	for _, l := range strings.Split(export(t, eng), "\n") {
		var r memory.Record
		if l == "" || json.Unmarshal([]byte(l), &r) != nil {
			continue
		}
		switch {
		case r.Capsule != nil && r.Capsule.ID == "cap_late":
			members = r.Capsule.ObservationIDs
		case r.Observation != nil:
			contents[r.Observation.ID] = r.Observation.Content
		}
	}
	var got []string
	for _, id := range members {
		got = append(got, contents[id])
	}
	want := []string{"filler line 1", "names a capsule on a later line", "names the session of a capsule on a later line"}
	if !slices.Equal(got, want) {
		t.Fatalf("cap_late holds %q; want %q", got, want)
	}
}

// An import that fails in any part, the first, a later one or the held
// records written last, writes nothing, and its error names the line.
func TestImportFailingInAnyPartWritesNothing(t *testing.T) {
	bothStores(t, testImportFailingInAnyPartWritesNothing)
}

func testImportFailingInAnyPartWritesNothing(t *testing.T, eng *cairn.Engine) {
	before := export(t, eng)
	dup := filler(3000)
	dup[2344] = strings.Replace(dup[2344], "obs_p2344", "obs_s1_00", 1) // an id the sample holds
	ghost := filler(3000)
	ghost[9] = `{"pin":{"id":"pin_ghost","targetType":"observation","targetId":"ghost","createdAt":1,"scopeIds":{}}}`
	early := filler(3000)
	early[4] = `{"observation":{"id":"obs_p0004","kind":"message","content":"the same id twice","provenance":{},"ts":1,"scopeIds":{},"redacted":false}}`
	early[5] = early[4]
	bad := filler(3000)
	bad[2998] = `{"kind":"nope","content":"x"}`
	for _, c := range []struct {
		name  string
		lines []string
		code  memory.Code
		says  string
	}{
		{"a clash in a later part", dup, memory.CodeConflict, "line 2345"},
		{"a clash in the first part", early, memory.CodeConflict, "line 6"},
		{"a held pin whose target is nowhere", ghost, memory.CodeNotFound, "line 10"},
		{"a bad line in the last part", bad, memory.CodeInvalidParams, "line 2999"},
	} {
		_, err := eng.Import(ctx, strings.NewReader(strings.Join(c.lines, "\n")), cairn.ImportOptions{})
		if memory.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want %s naming %s", c.name, err, c.code, c.says)
		}
		if export(t, eng) != before {
			t.Fatalf("%s changed the database", c.name)
		}
	}
}
