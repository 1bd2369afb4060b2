package cairn_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/maintain"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/retrieve"
)

// stagedEngine stages candidates from the inner voice's thoughts and
// returns them by key ("auth-service", "auth-service|depends_on|ntp").
func stagedEngine(t *testing.T, opts *cairn.Options) (*cairn.Engine, map[string]memory.KGCandidate) {
	t.Helper()
	eng, _ := askEngine(t, opts)
	ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(5), SimThresh: ptr(0.4), StageKG: true, Save: ptr(false)})
	return eng, candidatesByKey(t, eng)
}

func candidatesByKey(t *testing.T, eng *cairn.Engine) map[string]memory.KGCandidate {
	t.Helper()
	list, err := eng.Candidates(ctx, cairn.CandidatesRequest{Status: "all"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]memory.KGCandidate{}
	for _, c := range list.Candidates {
		k := strings.ToLower(c.Name)
		if c.Kind == memory.CandidateEdge {
			k = strings.ToLower(c.SourceName + "|" + c.Relation + "|" + c.TargetName)
		}
		out[k] = c
	}
	return out
}

func moderate(t *testing.T, eng *cairn.Engine, req cairn.ModerateRequest) cairn.ModerateResult {
	t.Helper()
	res, err := eng.Moderate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestModerateApprovePromotesWithProvenance(t *testing.T) {
	eng, cs := stagedEngine(t, nil)
	ent, edge := cs["auth-service"], cs["auth-service|depends_on|ntp"]
	if ent.ID == "" || edge.ID == "" {
		t.Fatalf("candidates staged: %v", slices.Collect(mapKeys(cs)))
	}
	// review (the default action) lists pending candidates.
	rev := moderate(t, eng, cairn.ModerateRequest{Target: "entity"})
	if rev.Review == nil || len(rev.Review.Candidates) == 0 || slices.ContainsFunc(rev.Review.Candidates, func(c memory.KGCandidate) bool { return c.Kind != "entity" }) {
		t.Fatalf("review %+v", rev.Review)
	}
	res := moderate(t, eng, cairn.ModerateRequest{Action: "decide", Items: []cairn.ModerateItem{
		{ID: ent.ID, Decision: "approve", Feedback: "real service"},
		{ID: edge.ID, Decision: "promote", MarkSourceRemoval: true},
	}})
	if len(res.Results) != 2 || res.Results[0].Status != "approved" || res.Results[1].Status != "approved" {
		t.Fatalf("results %+v", res.Results)
	}
	// The entity exists, with its source thought recorded, and is embedded.
	found, err := eng.Entities(ctx, cairn.EntitiesRequest{Name: "AUTH-SERVICE"})
	if err != nil || len(found.Entities) != 1 {
		t.Fatalf("entity after approval: %+v %v", found, err)
	}
	e := found.Entities[0]
	var data struct {
		SourceThoughtIDs []string `json:"source_thought_ids"`
	}
	json.Unmarshal(e.Data, &data)
	if e.ID != res.Results[0].PromotedID || e.Type != ent.EntityType || !slices.Contains(data.SourceThoughtIDs, ent.SourceThoughtID) {
		t.Fatalf("promoted entity %+v (data %s)", e, e.Data)
	}
	// The edge joined it (merged by name) and created NTP.
	view, err := eng.Entity(ctx, e.ID)
	if err != nil || len(view.Edges) != 1 || view.Edges[0].Relation != "depends_on" || view.Edges[0].ID != res.Results[1].PromotedID {
		t.Fatalf("edges of the entity: %+v %v", view.Edges, err)
	}
	if len(res.Results[1].Created) != 1 {
		t.Fatalf("the edge created %v; want NTP", res.Results[1].Created)
	}
	ntp, _ := eng.Entities(ctx, cairn.EntitiesRequest{Name: "ntp"})
	if len(ntp.Entities) != 1 || ntp.Entities[0].ID != res.Results[1].Created[0] {
		t.Fatalf("NTP: %+v", ntp)
	}
	// The source thought of the edge is marked for removal.
	if res.Results[1].MarkedForRemoval != 1 {
		t.Fatalf("mark_source_removal marked %d", res.Results[1].MarkedForRemoval)
	}
	if th, _ := eng.Thought(ctx, edge.SourceThoughtID); th.Status != "removal" {
		t.Fatalf("source of the approved edge: %+v", th)
	}
	// Promoted records are embedded: inner_voice_retrieve finds the entity.
	snips := voice(t, eng, retrieve.InnerVoiceRequest{Query: "auth-service (service)", Mix: ptr(1.0)})
	if !slices.ContainsFunc(snips.Snippets, func(s retrieve.Snippet) bool { return s.ID == e.ID }) {
		t.Fatalf("the promoted entity is not retrievable: %+v", snips.Snippets)
	}
	// Deciding again is a conflict; the candidates read as approved.
	_, err = eng.Moderate(ctx, cairn.ModerateRequest{Action: "decide", Items: []cairn.ModerateItem{{ID: ent.ID, Decision: "reject"}}})
	if memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("deciding twice: %v", err)
	}
	approved, _ := eng.Candidates(ctx, cairn.CandidatesRequest{Status: "approved"})
	if len(approved.Candidates) != 2 || approved.Candidates[0].DecidedAt == 0 {
		t.Fatalf("approved candidates %+v", approved)
	}
}

func mapKeys(m map[string]memory.KGCandidate) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestModerateMergesIntoExistingEntities(t *testing.T) {
	eng, cs := stagedEngine(t, nil)
	redis := cs["redis"]
	// An entity named like the candidate, created after staging: approval
	// merges into it.
	existing := entity(t, eng, "REDIS", "database")
	res := moderate(t, eng, cairn.ModerateRequest{Action: "decide", Items: []cairn.ModerateItem{{ID: redis.ID, Decision: "approve"}}})
	if !res.Results[0].Merged || res.Results[0].PromotedID != existing.ID || len(res.Results[0].Created) != 0 {
		t.Fatalf("merge by name: %+v", res.Results[0])
	}
	got, _ := eng.Entity(ctx, existing.ID)
	if got.Entity.Type != "database" || !strings.Contains(string(got.Entity.Data), redis.SourceThoughtID) {
		t.Fatalf("merged entity %+v", got.Entity)
	}
	// canonical_id merges into another entity.
	canon := entity(t, eng, "auth", "service")
	res = moderate(t, eng, cairn.ModerateRequest{Action: "decide", Items: []cairn.ModerateItem{{ID: cs["auth-service"].ID, Decision: "approve", CanonicalID: canon.ID}}})
	if res.Results[0].PromotedID != canon.ID || !res.Results[0].Merged {
		t.Fatalf("canonical merge %+v", res.Results[0])
	}
	if found, _ := eng.Entities(ctx, cairn.EntitiesRequest{Name: "auth-service"}); len(found.Entities) != 0 {
		t.Fatal("a canonical merge created an entity of the candidate's name")
	}
}

func TestModerateRejectBlocksAndBulkIsAllOrNothing(t *testing.T) {
	eng, cs := stagedEngine(t, nil)
	redis, ntp := cs["redis"], cs["ntp"]
	before := export(t, eng)
	// One bad item refuses the whole batch, and nothing is written.
	for _, tc := range []struct {
		items []cairn.ModerateItem
		code  memory.Code
	}{
		{[]cairn.ModerateItem{{ID: redis.ID, Decision: "reject"}, {ID: "kgc_missing", Decision: "reject"}}, memory.CodeNotFound},
		{[]cairn.ModerateItem{{ID: redis.ID, Decision: "reject"}, {ID: ntp.ID, Decision: "maybe"}}, memory.CodeInvalidParams},
		{[]cairn.ModerateItem{{ID: redis.ID, Decision: "reject"}, {ID: redis.ID, Decision: "approve"}}, memory.CodeInvalidParams},
		{[]cairn.ModerateItem{{ID: redis.ID, Decision: "approve", Block: true}}, memory.CodeInvalidParams},
		{[]cairn.ModerateItem{{ID: redis.ID, Decision: "reject", CanonicalID: "ent_x"}}, memory.CodeInvalidParams},
		{[]cairn.ModerateItem{{ID: redis.ID, Decision: "approve", CanonicalID: "ent_missing"}}, memory.CodeNotFound},
		{[]cairn.ModerateItem{{ID: redis.ID, Decision: "approve", Kind: "edge"}}, memory.CodeInvalidParams},
		{[]cairn.ModerateItem{{ID: "", Decision: "approve"}}, memory.CodeInvalidParams},
	} {
		_, err := eng.Moderate(ctx, cairn.ModerateRequest{Action: "decide", Items: tc.items})
		if memory.CodeOf(err) != tc.code {
			t.Errorf("items %+v: %v; want %s", tc.items, err, tc.code)
		}
	}
	for _, req := range []cairn.ModerateRequest{
		{Action: "explode"}, {Action: "decide"}, {Items: []cairn.ModerateItem{{ID: redis.ID, Decision: "reject"}}},
		{Target: "planet"}, {Status: "limbo"}, {MinConf: ptr(1.5)}, {Limit: 5000}, {Action: "unblock"},
	} {
		if _, err := eng.Moderate(ctx, req); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%+v: %v; want invalid_params", req, err)
		}
	}
	if pending, _ := eng.Candidates(ctx, cairn.CandidatesRequest{}); len(pending.Candidates) != len(cs) {
		t.Fatalf("refused batches decided candidates: %d pending of %d", len(pending.Candidates), len(cs))
	}
	// A dry run says what would happen and writes nothing.
	dry := moderate(t, eng, cairn.ModerateRequest{Action: "decide", DryRun: true, Items: []cairn.ModerateItem{
		{ID: redis.ID, Decision: "reject", Block: true}, {ID: ntp.ID, Decision: "approve"}}})
	if dry.Results[0].Status != "would_reject" || dry.Results[1].Status != "would_approve" || !dry.DryRun {
		t.Fatalf("dry run %+v", dry.Results)
	}
	if export(t, eng) != before {
		t.Fatal("a dry run changed the records")
	}
	if pending, _ := eng.Candidates(ctx, cairn.CandidatesRequest{}); len(pending.Candidates) != len(cs) {
		t.Fatal("a dry run decided candidates")
	}
	// Reject with a block: the name is never staged again, in any case.
	res := moderate(t, eng, cairn.ModerateRequest{Action: "review_and_decide", Items: []cairn.ModerateItem{{ID: redis.ID, Decision: "reject", Block: true, Feedback: "generic"}}})
	if res.Results[0].Status != "rejected" || !res.Results[0].Blocked || res.Review == nil {
		t.Fatalf("reject %+v", res)
	}
	if slices.ContainsFunc(res.Review.Candidates, func(c memory.KGCandidate) bool { return c.ID == redis.ID }) {
		t.Fatal("the rejected candidate is still pending")
	}
	bl := moderate(t, eng, cairn.ModerateRequest{Action: "blocklist"})
	if len(bl.Blocklist) != 1 || bl.Blocklist[0].Key != "redis" || bl.Blocklist[0].CandidateID != redis.ID {
		t.Fatalf("blocklist %+v", bl.Blocklist)
	}
	think(t, eng, cairn.ThinkRequest{Content: "Clock drift breaks session token expiry; the cache uses REDIS for session token expiry."})
	ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(10), SimThresh: ptr(0.3), StageKG: true, Save: ptr(false)})
	after := candidatesByKey(t, eng)
	if after["redis"].ID != redis.ID || after["redis"].Status != "rejected" {
		t.Fatalf("a blocked name was staged again: %+v", after["redis"])
	}
	if _, ok := after["auth-service|uses|redis"]; !ok {
		// The edge was staged before the block.
		t.Fatal("the earlier edge candidate is gone")
	}
	// Unblock lets it be staged again.
	un := moderate(t, eng, cairn.ModerateRequest{Action: "unblock", Items: []cairn.ModerateItem{{Kind: "entity", Key: "Redis"}}})
	if un.Results[0].Status != "unblocked" {
		t.Fatalf("unblock %+v", un)
	}
	if _, err := eng.Moderate(ctx, cairn.ModerateRequest{Action: "unblock", Items: []cairn.ModerateItem{{Kind: "entity", Key: "redis"}}}); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("unblocking twice: %v", err)
	}
	ask(t, eng, cairn.AskRequest{Content: askQuestion, TopK: ptr(10), SimThresh: ptr(0.3), StageKG: true, Save: ptr(false)})
	pending, _ := eng.Candidates(ctx, cairn.CandidatesRequest{})
	if !slices.ContainsFunc(pending.Candidates, func(c memory.KGCandidate) bool { return strings.EqualFold(c.Name, "redis") }) {
		t.Fatal("an unblocked name was not staged again")
	}
}

func TestCandidatesFilters(t *testing.T) {
	eng, cs := stagedEngine(t, nil)
	for _, tc := range []struct {
		req  cairn.CandidatesRequest
		want func(memory.KGCandidate) bool
	}{
		{cairn.CandidatesRequest{Kind: "edge"}, func(c memory.KGCandidate) bool { return c.Kind == memory.CandidateEdge }},
		{cairn.CandidatesRequest{Kind: "relationship"}, func(c memory.KGCandidate) bool { return c.Kind == memory.CandidateEdge }},
		{cairn.CandidatesRequest{MinConfidence: ptr(0.8)}, func(c memory.KGCandidate) bool { return c.Confidence >= 0.8 }},
		{cairn.CandidatesRequest{SourceThoughtID: cs["ntp"].SourceThoughtID}, func(c memory.KGCandidate) bool { return c.SourceThoughtID == cs["ntp"].SourceThoughtID }},
	} {
		got, err := eng.Candidates(ctx, tc.req)
		if err != nil || len(got.Candidates) == 0 || len(got.Candidates) == len(cs) && tc.req.MinConfidence == nil && tc.req.Kind == "" && tc.req.SourceThoughtID == "" {
			t.Fatalf("%+v: %d %v", tc.req, len(got.Candidates), err)
		}
		for _, c := range got.Candidates {
			if !tc.want(c) {
				t.Errorf("%+v returned %+v", tc.req, c)
			}
		}
	}
	page, _ := eng.Candidates(ctx, cairn.CandidatesRequest{Limit: 2, Offset: 1})
	all, _ := eng.Candidates(ctx, cairn.CandidatesRequest{})
	if len(page.Candidates) != 2 || page.Candidates[0].ID != all.Candidates[1].ID {
		t.Fatal("paging")
	}
	for _, bad := range []cairn.CandidatesRequest{{Kind: "x"}, {Status: "x"}, {MinConfidence: ptr(-1.0)}, {Limit: -1}, {Offset: -1}, {SourceThoughtID: " x"}} {
		if _, err := eng.Candidates(ctx, bad); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// The removal lifecycle through the engine: thought_mark records the mark
// time, export writes an archive, finalize waits for the retention and
// then deletes, erasing the text from every index.
func TestMaintenanceLifecycle(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	opts := &cairn.Options{Now: func() time.Time { return now },
		Maintenance: &maintain.Config{RetentionDays: 30, ArchiveDir: filepath.Join(dir, "archive"), Format: "parquet"}}
	eng, ts := askEngine(t, opts)
	old, kept := ts[0], ts[1]
	if _, err := eng.MarkThought(ctx, cairn.MarkThoughtRequest{ThoughtID: old.ID, Status: "removal"}); err != nil {
		t.Fatal(err)
	}
	list, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: "list_removal_candidates"})
	if err != nil || len(*list.Candidates) != 1 || (*list.Candidates)[0].MarkedAt != "2026-03-04T10:00:00Z" || (*list.Candidates)[0].Finalizable ||
		list.RetentionDays != 30 || list.Format != "parquet" || list.ArchiveDir != filepath.Join(dir, "archive") {
		t.Fatalf("list %+v %v", list, err)
	}
	// mark_removal marks by id.
	m, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: "mark_removal", ThoughtIDs: []string{kept.ID}, DryRun: true})
	if err != nil || *m.Marked != 1 {
		t.Fatalf("dry mark %+v %v", m, err)
	}
	if th, _ := eng.Thought(ctx, kept.ID); th.Status != "active" {
		t.Fatal("a dry run marked a thought")
	}
	exp, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: "export_removals"})
	if err != nil || exp.Export.Exported != 1 || exp.Export.Archive == nil {
		t.Fatalf("export %+v %v", exp, err)
	}
	rows, err := maintain.ReadArchive(exp.Export.Archive.Path)
	if err != nil || len(rows) != 1 || rows[0].ID != old.ID || rows[0].Content != old.Content || rows[0].RepoID != "/src/auth" {
		t.Fatalf("archive %+v %v", rows, err)
	}
	fin, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: "finalize_removal"})
	if err != nil || len(fin.Finalize.Finalized) != 0 || !strings.Contains(fin.Finalize.Refused[0].Reason, "retention") {
		t.Fatalf("finalize within retention %+v %v", fin, err)
	}
	if _, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: "finalize_removal", ThoughtIDs: []string{old.ID}}); memory.CodeOf(err) != memory.CodeConflict {
		t.Fatalf("finalizing a named thought within retention: %v", err)
	}
	now = now.Add(30 * 24 * time.Hour)
	fin, err = eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: "finalize_removal"})
	if err != nil || !slices.Equal(fin.Finalize.Finalized, []string{old.ID}) {
		t.Fatalf("finalize %+v %v", fin, err)
	}
	if _, err := eng.Thought(ctx, old.ID); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("finalized thought: %v", err)
	}
	// Its text is gone from the database's files and the index's.
	marker := "because the auth-service depends on NTP"
	for _, f := range dirFiles(t, dir) {
		if strings.HasSuffix(f, ".parquet") {
			continue
		}
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), marker) {
			t.Fatalf("the finalized thought's text remains in %s", f)
		}
	}
	snips := voice(t, eng, retrieve.InnerVoiceRequest{Query: old.Content, Mix: ptr(0.0)})
	if slices.ContainsFunc(snips.Snippets, func(s retrieve.Snippet) bool { return s.ID == old.ID }) {
		t.Fatal("the finalized thought is still retrieved")
	}
	// Bad input.
	for _, req := range []cairn.MaintenanceRequest{
		{}, {Subcommand: "explode"}, {Subcommand: "list_removal_candidates", Limit: -1}, {Subcommand: "export_removals", Format: "xml"},
		{Subcommand: "export_removals", OutputDir: "../../etc"}, {Subcommand: "list_removal_candidates", Format: "jsonl"},
		{Subcommand: "mark_removal"}, {Subcommand: "finalize_removal", ThoughtIDs: []string{""}},
	} {
		if _, err := eng.Maintenance(ctx, req); memory.CodeOf(err) != memory.CodeInvalidParams {
			t.Errorf("%+v: %v; want invalid_params", req, err)
		}
	}
	if _, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: "mark_removal", ThoughtIDs: []string{"th_missing"}}); memory.CodeOf(err) != memory.CodeNotFound {
		t.Fatalf("marking an unknown thought: %v", err)
	}
}

func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// maintenance_ops over its faces (MCP, HTTP, cairn call: the tool table)
// names archives relative to the archive directory and never the
// directory itself; Engine.Maintenance, for the CLI, keeps absolute paths.
func TestMaintenanceOpsHidesTheArchiveDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "archive")
	eng := openVoice(t, &cairn.Options{Now: func() time.Time { return time.UnixMilli(1_750_000_000_000) },
		Maintenance: &maintain.Config{RetentionDays: 0, ArchiveDir: dir, Format: "jsonl"}})
	var ids []string
	for _, text := range []string{"Alice owns the billing service.", "The billing service runs on Postgres."} {
		ids = append(ids, think(t, eng, cairn.ThinkRequest{Content: text}).ID)
	}
	call := func(args string) (cairn.MaintenanceResult, string) {
		t.Helper()
		out, err := eng.CallJSON(ctx, "maintenance_ops", []byte(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		var res cairn.MaintenanceResult
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), dir) || strings.Contains(string(b), `"archive_dir"`) {
			t.Fatalf("%s reveals the archive directory: %s", args, b)
		}
		return res, string(b)
	}
	call(`{"subcommand":"mark_removal","thought_ids":["` + strings.Join(ids, `","`) + `"]}`)
	exp, _ := call(`{"subcommand":"export_removals","output_dir":"2026"}`)
	if exp.Export == nil || exp.Export.Archive == nil || !strings.HasPrefix(exp.Export.Archive.Path, "2026/thoughts-removal-") {
		t.Fatalf("export %+v", exp.Export)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(exp.Export.Archive.Path))); err != nil {
		t.Fatalf("the archive is not where its relative path says: %v", err)
	}
	list, _ := call(`{"subcommand":"list_removal_candidates"}`)
	if len(*list.Candidates) != 2 || (*list.Candidates)[0].Archive != exp.Export.Archive.Path {
		t.Fatalf("candidates %+v", *list.Candidates)
	}
	// A reason that names the archive names it relative too.
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(exp.Export.Archive.Path))); err != nil {
		t.Fatal(err)
	}
	fin, _ := call(`{"subcommand":"finalize_removal","dry_run":true}`)
	if len(fin.Finalize.Refused) != 2 || !strings.Contains(fin.Finalize.Refused[0].Reason, "its archive "+exp.Export.Archive.Path+" is missing") {
		t.Fatalf("refused %+v", fin.Finalize.Refused)
	}
	if _, err := eng.CallJSON(ctx, "maintenance_ops", []byte(`{"subcommand":"finalize_removal","thought_ids":["`+ids[0]+`"]}`)); memory.CodeOf(err) != memory.CodeConflict ||
		strings.Contains(err.Error(), dir) {
		t.Fatalf("finalize of a thought whose archive is gone: %v", err)
	}
	// The engine's own call, for the CLI, keeps the absolute paths.
	local, err := eng.Maintenance(ctx, cairn.MaintenanceRequest{Subcommand: cairn.OpExportRemovals})
	if err != nil || local.ArchiveDir != dir || local.Export.Archive == nil || !strings.HasPrefix(local.Export.Archive.Path, dir+string(filepath.Separator)) {
		t.Fatalf("Engine.Maintenance: %+v %v", local, err)
	}
}

// A blocked name never re-enters the graph through an edge: approving an
// edge to it is a conflict that writes nothing (whether the name was
// blocked before or by a rejection earlier in the same batch), a dry run
// says would_refuse and why, and once unblocked the edge is approved.
func TestModerateRefusesBlockedNamesThroughEdges(t *testing.T) {
	eng, cs := stagedEngine(t, nil)
	redis, uses := cs["redis"], cs["auth-service|uses|redis"]
	ntp, depends := cs["ntp"], cs["auth-service|depends_on|ntp"]
	if redis.ID == "" || uses.ID == "" || ntp.ID == "" || depends.ID == "" {
		t.Fatalf("candidates staged: %v", slices.Collect(mapKeys(cs)))
	}
	moderate(t, eng, cairn.ModerateRequest{Action: "decide", Items: []cairn.ModerateItem{{ID: redis.ID, Decision: "reject", Block: true}}})
	state := func() string {
		list, err := eng.Candidates(ctx, cairn.CandidatesRequest{Status: "all"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(list)
		return export(t, eng) + string(b)
	}
	before := state()
	for _, tc := range []struct {
		name  string
		items []cairn.ModerateItem
		// refused is the index of the item a dry run says would_refuse,
		// and blocked the name its reason gives.
		refused int
		blocked string
	}{
		{"an edge to a name blocked before", []cairn.ModerateItem{{ID: uses.ID, Decision: "approve"}}, 0, "redis"},
		{"an edge to a name the same batch blocks", []cairn.ModerateItem{{ID: ntp.ID, Decision: "reject", Block: true}, {ID: depends.ID, Decision: "approve"}}, 1, "ntp"},
		{"an allowed approval beside a refused one", []cairn.ModerateItem{{ID: depends.ID, Decision: "approve"}, {ID: uses.ID, Decision: "approve"}}, 1, "redis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eng.Moderate(ctx, cairn.ModerateRequest{Action: "decide", Items: tc.items})
			if memory.CodeOf(err) != memory.CodeConflict || !strings.Contains(memory.Public(err).Message, tc.blocked) {
				t.Fatalf("approval: %v; want conflict naming %q", err, tc.blocked)
			}
			dry := moderate(t, eng, cairn.ModerateRequest{Action: "decide", DryRun: true, Items: tc.items})
			for i, o := range dry.Results {
				switch {
				case i == tc.refused && (o.Status != "would_refuse" || !strings.Contains(o.Reason, tc.blocked) || !strings.Contains(o.Reason, "unblock")):
					t.Errorf("dry run item %d: %+v; want would_refuse naming %q", i, o, tc.blocked)
				case i != tc.refused && (o.Status == "would_refuse" || o.Reason != ""):
					t.Errorf("dry run item %d refused: %+v", i, o)
				}
			}
			if state() != before {
				t.Fatal("a refused batch changed the records or the queue")
			}
		})
	}
	un := moderate(t, eng, cairn.ModerateRequest{Action: "unblock", Items: []cairn.ModerateItem{{Kind: "entity", Key: "redis"}}})
	if un.Results[0].Status != "unblocked" {
		t.Fatalf("unblock %+v", un)
	}
	res := moderate(t, eng, cairn.ModerateRequest{Action: "decide", Items: []cairn.ModerateItem{{ID: uses.ID, Decision: "approve"}}})
	if res.Results[0].Status != "approved" || len(res.Results[0].Created) == 0 {
		t.Fatalf("approval after unblocking: %+v", res.Results[0])
	}
}
