package retrieve_test

import (
	"testing"
	"time"

	"github.com/cairnhq/cairn/retrieve"
)

func TestQueryPeriod(t *testing.T) {
	day := func(y int, m time.Month, d int) int64 { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).UnixMilli() }
	for _, c := range []struct {
		q        string
		from, to int64
		ok       bool
	}{
		{"Who did I have dinner with on May 3, 2023?", day(2023, 5, 3), day(2023, 5, 4), true},
		{"what broke on 13th of October, 2023", day(2023, 10, 13), day(2023, 10, 14), true},
		{"deploys on 3 May 2023", day(2023, 5, 3), day(2023, 5, 4), true},
		{"What did we change in July 2023?", day(2023, 7, 1), day(2023, 8, 1), true},
		{"december 2023 incidents", day(2023, 12, 1), day(2024, 1, 1), true},
		{"How many releases in 2022?", day(2022, 1, 1), day(2023, 1, 1), true},
		{"notes from Feb 30, 2023", 0, 0, false},
		{"what may have caused it", 0, 0, false},
		{"what happened in June?", 0, 0, false},
		{"error 2023 in the log", 0, 0, false},
		{"", 0, 0, false},
	} {
		from, to, ok := retrieve.QueryPeriod(c.q)
		if ok != c.ok || from != c.from || to != c.to {
			t.Errorf("QueryPeriod(%q) = %v, %v, %v; want %v, %v, %v", c.q, from, to, ok, c.from, c.to, c.ok)
		}
	}
}
