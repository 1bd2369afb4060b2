package retrieve

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// PeriodSlack is how long after the period a query names a record still
// counts as from it: things are told after they happen ("last weekend",
// "yesterday").
const PeriodSlack = 7 * 24 * time.Hour

var monthNumber = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
	"june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
	"october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

const monthPattern = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)`

var (
	// "May 3, 2023", "Oct. 13th 2023"
	monthDayYear = regexp.MustCompile(`\b` + monthPattern + `\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b`)
	// "3 May 2023", "13th of October, 2023"
	dayMonthYear = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthPattern + `\.?,?\s+(\d{4})\b`)
	// "July 2023", "March of 2022"
	monthYear = regexp.MustCompile(`\b` + monthPattern + `\.?,?\s+(?:of\s+)?(\d{4})\b`)
	// "in 2022", "during 2023"
	yearOnly = regexp.MustCompile(`\b(?:in|during|of)\s+((?:19|20)\d{2})\b`)
)

// QueryPeriod reads the first absolute calendar period an English query
// names, a day ("on May 3, 2023", "3 May 2023"), a month ("in July 2023")
// or a year ("in 2022"), and returns it as [from, to) in Unix
// milliseconds, UTC. Relative expressions ("last week") and months
// without a year are not read: they need a reference time the query does
// not give.
func QueryPeriod(q string) (from, to int64, ok bool) {
	s := strings.ToLower(q)
	day := func(y, m, d string) (int64, int64, bool) {
		yy, _ := strconv.Atoi(y)
		dd, _ := strconv.Atoi(d)
		mm := monthNumber[m]
		t := time.Date(yy, mm, dd, 0, 0, 0, 0, time.UTC)
		if dd < 1 || t.Day() != dd {
			return 0, 0, false // no such day ("February 30")
		}
		return t.UnixMilli(), t.AddDate(0, 0, 1).UnixMilli(), true
	}
	if m := monthDayYear.FindStringSubmatch(s); m != nil {
		return day(m[3], m[1], m[2])
	}
	if m := dayMonthYear.FindStringSubmatch(s); m != nil {
		return day(m[3], m[2], m[1])
	}
	if m := monthYear.FindStringSubmatch(s); m != nil {
		y, _ := strconv.Atoi(m[2])
		t := time.Date(y, monthNumber[m[1]], 1, 0, 0, 0, 0, time.UTC)
		return t.UnixMilli(), t.AddDate(0, 1, 0).UnixMilli(), true
	}
	if m := yearOnly.FindStringSubmatch(s); m != nil {
		y, _ := strconv.Atoi(m[1])
		t := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		return t.UnixMilli(), t.AddDate(1, 0, 0).UnixMilli(), true
	}
	return 0, 0, false
}
