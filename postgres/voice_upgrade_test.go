package postgres_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
)

// A schema of version 3 with several sessions that looked active (two
// first calls raced) is upgraded with every session and exchange kept,
// unscoped, and one current session: the one of the latest interaction
// (the later created on a tie), which a call goes on with. Running
// migration 4 again changes nothing; the database refuses a second
// current session of one scope.
func TestVersion3SchemaUpgradesToOneCurrentSession(t *testing.T) {
	url := storeURL(t, "array")
	old, err := postgres.OpenAtVersion(ctx, url, 3)
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	c := raw(t, url)
	schema := schemaOf(url)
	if _, err := c.Exec(ctx, `
INSERT INTO `+schema+`.inner_voice_sessions (id, version, provider, model, max_prompt_tokens, topic, created_at, last_interaction,
	total_exchanges, total_prompt_tokens, total_cost) VALUES
	('s1', 1, '', 'extractive', 8000, 'older', 50, 100, 1, 10, 0),
	('s2', 1, 'openai', 'gpt-4o-mini', 8000, 'raced a', 200, 300, 1, 20, 0.5),
	('s3', 1, 'openai', 'gpt-4o-mini', 8000, 'raced b', 250, 300, 1, 30, 0.25);
INSERT INTO `+schema+`.inner_voice_exchanges (id, session_id, seq, ts, query, answer) VALUES
	('x1', 's1', 1, 100, 'q1', 'a1'), ('x2', 's2', 1, 300, 'q2', 'a2'), ('x3', 's3', 1, 300, 'q3', 'a3');
`); err != nil {
		t.Fatal(err)
	}

	db := open(t, url)
	defer db.Close()
	if st, err := db.Stats(ctx); err != nil || st.SchemaVersion != postgres.SchemaVersion() {
		t.Fatalf("upgraded store: %+v %v", st, err)
	}
	check := func(when string) {
		t.Helper()
		list, err := db.VoiceSessions(ctx, memory.Scope{}, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range list {
			got = append(got, fmt.Sprintf("%s:%s:%d:%d:%v:%q", s.ID, s.Topic, s.TotalExchanges, s.TotalPromptTokens, s.Current, s.Scope.String()))
		}
		want := []string{`s3:raced b:1:30:true:""`, `s2:raced a:1:20:false:""`, `s1:older:1:10:false:""`}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%s: sessions\n got %v\nwant %v", when, got, want)
		}
		for _, id := range []string{"s1", "s2", "s3"} {
			if xs, err := db.VoiceExchanges(ctx, id, 0, 10); err != nil || len(xs) != 1 || xs[0].Answer != "a"+id[1:] {
				t.Fatalf("%s: exchanges of %s: %+v %v", when, id, xs, err)
			}
		}
	}
	check("after the upgrade")
	if err := postgres.ReapplyMigration(ctx, db, 4); err != nil {
		t.Fatalf("migration 4 run again: %v", err)
	}
	check("after running migration 4 again")
	got, created, err := db.OpenVoiceSession(ctx, memory.InnerVoiceSession{ID: "s4", Version: 1, CreatedAt: 400, LastInteraction: 400}, 250)
	if err != nil || created || got.ID != "s3" {
		t.Fatalf("a call after the upgrade: %s created %v, %v; want s3 continued", got.ID, created, err)
	}
	if _, err := c.Exec(ctx, "UPDATE "+schema+".inner_voice_sessions SET active = true WHERE id = 's2'"); err == nil {
		t.Fatal("a second current session of one scope was stored")
	}
}
