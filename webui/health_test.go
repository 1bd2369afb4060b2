package webui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cairnhq/cairn"
	"github.com/cairnhq/cairn/memory"
)

// Index changes held in memory are the normal state while records arrive:
// the health page says so in plain text, not in warning colour, and
// names the index directory without this machine's path.
func TestHealthShowsHeldChangesCalmly(t *testing.T) {
	s := newSite(t, siteOptions{})
	for range 3 {
		if _, err := s.eng.Log(ctx, cairn.LogRequest{Kind: memory.KindMessage, Content: "a record the index holds in memory"}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.eng.IndexStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Behind == 0 {
		t.Fatal("the index wrote every change to its files: this test needs changes held in memory (did the flush policy change?)")
	}
	p := s.get(t, "/health")
	if p.status != http.StatusOK || !strings.Contains(p.body, "changes held in memory") {
		t.Fatalf("GET /health: %d\n%.3000s", p.status, p.body)
	}
	i := strings.Index(p.body, "changes held in memory")
	if line := p.body[strings.LastIndex(p.body[:i], "<tr>"):i]; strings.Contains(line, `class="warn"`) {
		t.Fatalf("held changes shown as a warning: %s", line)
	}
}
