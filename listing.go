package cairn

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn/browse"
	"github.com/cairnhq/cairn/internal/text"
	"github.com/cairnhq/cairn/memory"
)

// This file is the list of records a person may attach to a conversation
// (what an MCP client shows when it browses resources): the pins in force
// and the most recent sessions with their summaries, bounded, in a stable
// order, page by page.

// Bounds of ListRecords: the newest active pins and the most recently
// opened capsules it offers (each capsule followed by its summary).
const (
	ListedPins     = 100
	ListedCapsules = 100
)

// ListedRecord is a record offered for attaching: its kind (pin, capsule
// or summary) and id, a one-line title, a short description of what it
// holds, and when it last changed (Unix ms).
type ListedRecord struct {
	Kind        string `json:"kind"`
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	At          int64  `json:"at"`
}

// ListedRecords is one page of ListRecords; Next is empty on the last
// page.
type ListedRecords struct {
	Records []ListedRecord `json:"records"`
	Next    string         `json:"next,omitempty"`
}

// ListRecords lists the records worth attaching to a conversation: the
// active pins whose target was not forgotten (newest first, at most
// ListedPins), then the most recently opened capsules (at most
// ListedCapsules), each followed by its summary unless that was
// forgotten. The same data give the same pages. after is the Next of the
// previous page (empty for the first); limit is the page size (default
// 50, at most MaxPageSize). A cursor this engine did not make is
// invalid_params.
func (e *Engine) ListRecords(ctx context.Context, after string, limit int) (ListedRecords, error) {
	limit, err := browse.CheckPage(limit)
	if err != nil {
		return ListedRecords{}, err
	}
	offset, lastKey, err := decodeListCursor(after)
	if err != nil {
		return ListedRecords{}, err
	}
	all, err := e.listable(ctx)
	if err != nil {
		return ListedRecords{}, err
	}
	// The cursor names the last record of the previous page: continue
	// after it, wherever it now is (records added or removed since move
	// it); if it is gone, continue at its old position.
	if offset > 0 && (offset > len(all) || all[offset-1].key() != lastKey) {
		for i, r := range all {
			if r.key() == lastKey {
				offset = i + 1
				break
			}
		}
	}
	offset = min(offset, len(all))
	page := all[offset:min(offset+limit, len(all))]
	out := ListedRecords{Records: append([]ListedRecord{}, page...)}
	if end := offset + len(page); end < len(all) {
		out.Next = encodeListCursor(end, page[len(page)-1].key())
	}
	return out, nil
}

func (r ListedRecord) key() string { return r.Kind + "/" + r.ID }

func encodeListCursor(offset int, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset) + " " + key))
}

func decodeListCursor(c string) (int, string, error) {
	if c == "" {
		return 0, "", nil
	}
	bad := memory.Errorf(memory.CodeInvalidParams, "cursor %q is not one this server gave: list again without it", text.Excerpt(c, 40))
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", bad
	}
	n, key, ok := strings.Cut(string(b), " ")
	offset, err := strconv.Atoi(n)
	if !ok || err != nil || offset < 1 || !strings.Contains(key, "/") {
		return 0, "", bad
	}
	return offset, key, nil
}

// listable is every record ListRecords offers, in order.
func (e *Engine) listable(ctx context.Context) ([]ListedRecord, error) {
	pins, err := e.store.ActivePins(ctx, memory.PinQuery{Now: e.nowMs()})
	if err != nil {
		return nil, err
	}
	var out []ListedRecord
	for _, p := range pins[:min(len(pins), ListedPins)] {
		reason := ""
		if p.Pin.Reason != "" {
			reason = "; reason: " + text.Excerpt(p.Pin.Reason, 120)
		}
		where := scopeWords(p.Pin.Scope)
		out = append(out, ListedRecord{Kind: "pin", ID: p.Pin.ID, At: p.Pin.CreatedAt,
			Title: "Pinned: " + text.Excerpt(p.Target.Content(), 80),
			Description: fmt.Sprintf("Pin of %s %s%s: %s%s", p.TargetType, p.Pin.TargetID, where,
				text.Excerpt(p.Target.Content(), 200), reason)})
	}
	b, ok := e.store.(memory.Browser)
	if !ok {
		return out, nil // a store that cannot list capsules page by page offers its pins
	}
	page, err := b.BrowseCapsules(ctx, memory.CapsuleFilter{Limit: ListedCapsules})
	if err != nil {
		return nil, err
	}
	for _, c := range page.Capsules {
		intent := c.Intent
		if strings.TrimSpace(intent) == "" {
			intent = "(no intent)"
		}
		at, when := c.OpenedAt, "opened "+isoTime(c.OpenedAt)
		if c.ClosedAt != nil {
			at, when = *c.ClosedAt, "closed "+isoTime(*c.ClosedAt)
		}
		out = append(out, ListedRecord{Kind: "capsule", ID: c.ID, At: at,
			Title:       fmt.Sprintf("%s %s: %s", strings.ToUpper(string(c.Status[:1]))+string(c.Status[1:]), c.Type, text.Excerpt(intent, 80)),
			Description: fmt.Sprintf("%s capsule%s, %d observations, %s", c.Type, scopeWords(c.Scope), c.Observations, when)})
		if s := c.Summary; s != nil && !s.Redacted {
			out = append(out, ListedRecord{Kind: "summary", ID: s.ID, At: s.CreatedAt,
				Title:       "Summary: " + text.Excerpt(intent, 80),
				Description: fmt.Sprintf("Summary of capsule %s (confidence %.2g): %s", c.ID, s.Confidence, text.Excerpt(s.Content, 200))})
		}
	}
	return out, nil
}

// scopeWords says where a record is: " in REPO (session S)", or "".
func scopeWords(s memory.Scope) string {
	var parts []string
	if s.RepoID != "" {
		parts = append(parts, "in "+text.Excerpt(s.RepoID, 80))
	}
	if s.SessionID != "" {
		parts = append(parts, "session "+text.Excerpt(s.SessionID, 60))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ", ")
}

func isoTime(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
