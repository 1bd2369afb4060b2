package synth

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// VerifierFromEnv reads the grounding settings: the seed's
// SURR_INNER_VOICE_MIN_COVERAGE (0.6, in [0, 1]), CAIRN_GROUNDING_MIN_SOURCES
// (2, from 1 to 10) and CAIRN_GROUNDING_THRESHOLD (DefaultThreshold, in
// (0, 1]). A value out of range is clamped and one that is not a number is
// ignored; each correction comes back as a note.
func VerifierFromEnv(getenv func(string) string) (Verifier, []string) {
	v := Verifier{MinCoverage: DefaultMinCoverage, MinSources: DefaultMinSources, Threshold: DefaultThreshold}
	var notes []string
	num := func(name string) (float64, bool) {
		s := strings.TrimSpace(getenv(name))
		if s == "" {
			return 0, false
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			notes = append(notes, fmt.Sprintf("%s=%q is not a number; ignored", name, s))
			return 0, false
		}
		return f, true
	}
	if f, ok := num("SURR_INNER_VOICE_MIN_COVERAGE"); ok {
		v.MinCoverage = math.Min(1, math.Max(0, f))
		if v.MinCoverage != f {
			notes = append(notes, fmt.Sprintf("SURR_INNER_VOICE_MIN_COVERAGE=%v is outside [0, 1]; clamped to %v", f, v.MinCoverage))
		}
		if v.MinCoverage == 0 {
			// Verifier reads 0 as "the default"; the least positive
			// coverage accepts any answer with one supported claim.
			v.MinCoverage = math.SmallestNonzeroFloat64
		}
	}
	if f, ok := num("CAIRN_GROUNDING_MIN_SOURCES"); ok {
		n := int(math.Round(f))
		v.MinSources = min(10, max(1, n))
		if float64(v.MinSources) != f {
			notes = append(notes, fmt.Sprintf("CAIRN_GROUNDING_MIN_SOURCES=%v is outside 1..10 or not whole; set to %d", f, v.MinSources))
		}
	}
	if f, ok := num("CAIRN_GROUNDING_THRESHOLD"); ok {
		v.Threshold = math.Min(1, f)
		if f <= 0 {
			v.Threshold = DefaultThreshold
		}
		if v.Threshold != f {
			notes = append(notes, fmt.Sprintf("CAIRN_GROUNDING_THRESHOLD=%v is outside (0, 1]; using %v", f, v.Threshold))
		}
	}
	return v, notes
}

// JudgeFromEnv reads CAIRN_GROUNDING_JUDGE: "1" (or true, yes, on) asks a
// configured language model for a second opinion on every answer's
// supported claims (Judge); "0", empty, or no model configured leaves
// the verifier offline. A value that is neither is ignored with a note.
func JudgeFromEnv(getenv func(string) string) (bool, []string) {
	switch v := strings.ToLower(strings.TrimSpace(getenv("CAIRN_GROUNDING_JUDGE"))); v {
	case "1", "true", "yes", "on":
		return true, nil
	case "", "0", "false", "no", "off":
		return false, nil
	default:
		return false, []string{fmt.Sprintf("CAIRN_GROUNDING_JUDGE=%q is not 1 or 0; the judge stays off", v)}
	}
}
