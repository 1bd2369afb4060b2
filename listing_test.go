package cairn_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// listingFixture writes, a minute apart: session s1 (closed, summarised),
// session s2 (open, summarised, then its summary forgotten), session s3
// (open, no summary), and pins: one on an observation, one on s1's
// summary, one expired, one on an observation later forgotten.
type listingFixture struct {
	eng              *cairn.Engine
	clock            *time.Time
	caps             [3]memory.Capsule
	sum1             memory.Summary
	pinObs, pinSum   memory.Pin
	pinGone, pinPast memory.Pin
}

func newListingFixture(t *testing.T) *listingFixture {
	t.Helper()
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	f := &listingFixture{clock: &now}
	f.eng = openAt(t, filepath.Join(t.TempDir(), "cairn.db"), &cairn.Options{Now: func() time.Time { return *f.clock }})
	tick := func() { *f.clock = f.clock.Add(time.Minute) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var obs [3]memory.Observation
	for i, sid := range []string{"s1", "s2", "s3"} {
		c, err := f.eng.OpenCapsule(ctx, cairn.OpenCapsuleRequest{Intent: "fix checkout " + sid, ScopeIDs: memory.Scope{SessionID: sid, RepoID: "/src/shop"}})
		must(err)
		f.caps[i] = c
		tick()
		obs[i], err = f.eng.Log(ctx, cairn.LogRequest{Kind: memory.KindError, Content: "checkout failed in " + sid, ScopeIDs: memory.Scope{SessionID: sid}})
		must(err)
		tick()
	}
	closed, err := f.eng.CloseCapsule(ctx, cairn.CloseCapsuleRequest{CapsuleID: f.caps[0].ID, Summary: &cairn.SummaryInput{Content: "Clock skew broke the session check."}})
	must(err)
	f.caps[0], f.sum1 = closed.Capsule, *closed.Summary
	tick()
	s2, err := f.eng.SetSummary(ctx, cairn.SummaryRequest{CapsuleID: f.caps[1].ID, SummaryInput: cairn.SummaryInput{Content: "a summary then forgotten"}})
	must(err)
	_, err = f.eng.ForgetSummary(ctx, s2.ID)
	must(err)
	tick()
	ttl := int64(60)
	f.pinPast, err = f.eng.Pin(ctx, cairn.PinRequest{TargetID: obs[2].ID, TTLSeconds: &ttl})
	must(err)
	tick()
	f.pinObs, err = f.eng.Pin(ctx, cairn.PinRequest{TargetID: obs[0].ID, Reason: "the first symptom"})
	must(err)
	tick()
	f.pinSum, err = f.eng.Pin(ctx, cairn.PinRequest{TargetID: f.sum1.ID})
	must(err)
	tick()
	f.pinGone, err = f.eng.Pin(ctx, cairn.PinRequest{TargetID: obs[1].ID})
	must(err)
	_, err = f.eng.Forget(ctx, obs[1].ID)
	must(err)
	tick()
	return f
}

func keys(rs []cairn.ListedRecord) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Kind+"/"+r.ID)
	}
	return out
}

// The list offers the pins in force (newest first; not an expired one,
// not one whose record was forgotten), then the capsules most recently
// opened first, each followed by its summary unless it was forgotten.
func TestListRecords(t *testing.T) {
	f := newListingFixture(t)
	got, err := f.eng.ListRecords(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pin/" + f.pinSum.ID, "pin/" + f.pinObs.ID,
		"capsule/" + f.caps[2].ID, "capsule/" + f.caps[1].ID, "capsule/" + f.caps[0].ID, "summary/" + f.sum1.ID}
	if !slices.Equal(keys(got.Records), want) || got.Next != "" {
		t.Fatalf("listed %v (next %q); want %v", keys(got.Records), got.Next, want)
	}
	byKey := map[string]cairn.ListedRecord{}
	for _, r := range got.Records {
		byKey[r.Kind+"/"+r.ID] = r
	}
	if r := byKey["pin/"+f.pinObs.ID]; r.Title != "Pinned: checkout failed in s1" || r.At != f.pinObs.CreatedAt ||
		r.Description != "Pin of observation "+f.pinObs.TargetID+" in /src/shop, session s1: checkout failed in s1; reason: the first symptom" {
		t.Errorf("pin listed as %+v", r)
	}
	if r := byKey["capsule/"+f.caps[0].ID]; r.Title != "Closed session: fix checkout s1" || r.At != *f.caps[0].ClosedAt ||
		r.Description != "session capsule in /src/shop, session s1, 1 observations, closed 2026-03-04T10:06:00Z" {
		t.Errorf("closed capsule listed as %+v", r)
	}
	if r := byKey["capsule/"+f.caps[2].ID]; r.Title != "Open session: fix checkout s3" || r.At != f.caps[2].OpenedAt {
		t.Errorf("open capsule listed as %+v", r)
	}
	if r := byKey["summary/"+f.sum1.ID]; r.Title != "Summary: fix checkout s1" ||
		r.Description != "Summary of capsule "+f.caps[0].ID+" (confidence 1): Clock skew broke the session check." {
		t.Errorf("summary listed as %+v", r)
	}
	again, err := f.eng.ListRecords(ctx, "", 0)
	if err != nil || !slices.Equal(keys(again.Records), want) {
		t.Fatalf("a second listing differs: %v %v", keys(again.Records), err)
	}

	// Page by page, the pages add up to the list, each record once.
	var paged []cairn.ListedRecord
	cursor := ""
	for range len(want) + 1 {
		page, err := f.eng.ListRecords(ctx, cursor, 4)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, page.Records...)
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if !slices.Equal(keys(paged), want) {
		t.Fatalf("pages of 4 give %v; want %v", keys(paged), want)
	}

	// A record removed between two pages moves the rest up: the next page
	// still starts after the last record shown, and skips none.
	first, err := f.eng.ListRecords(ctx, "", 2)
	if err != nil || first.Next == "" {
		t.Fatalf("first page %+v, %v", first, err)
	}
	if err := f.eng.Unpin(ctx, f.pinSum.ID); err != nil {
		t.Fatal(err)
	}
	rest, err := f.eng.ListRecords(ctx, first.Next, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(rest.Records), want[2:]; !slices.Equal(got, want) {
		t.Fatalf("after an unpin, the next page is %v; want %v", got, want)
	}
	// The last record shown removed itself: the page goes on at its place.
	first, _ = f.eng.ListRecords(ctx, "", 1) // the observation's pin, now the first
	if err := f.eng.Unpin(ctx, f.pinObs.ID); err != nil {
		t.Fatal(err)
	}
	rest, err = f.eng.ListRecords(ctx, first.Next, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(rest.Records), want[3:]; !slices.Equal(got, want) {
		t.Fatalf("after the last record shown was unpinned, the next page is %v; want %v", got, want)
	}
}

func TestListRecordsRefusesBadPages(t *testing.T) {
	f := newListingFixture(t)
	for _, c := range []struct {
		after string
		limit int
	}{
		{"not-a-cursor", 0}, {"MCBwaW4veA", 0}, {"eHl6", 0}, {"", -1}, {"", cairn.MaxPageSize + 1},
	} {
		if _, err := f.eng.ListRecords(ctx, c.after, c.limit); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("ListRecords(%q, %d): %v; want invalid_params", c.after, c.limit, err)
		}
	}
}
