package synth

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bounds and defaults of the inner_voice tool, as the specification sets
// them.
const (
	DefaultTopK      = 5
	MaxTopK          = 50
	DefaultSimThresh = 0.5
	DefaultDBLimit   = 500
	MaxDBLimit       = 100_000
)

// AskConfig is the inner_voice tool's configuration, read once at
// start-up.
type AskConfig struct {
	// TopK is top_k when a call sets none (SURR_TOP_K, 1 to 50; default 5).
	TopK int `json:"topK"`
	// SimThresh is sim_thresh when a call sets none (SURR_SIM_THRESH, 0 to
	// 1; default 0.5): sources less similar to the question are left out.
	SimThresh float64 `json:"simThresh"`
	// DBLimit caps the thoughts retrieval compares per call
	// (SURR_DB_LIMIT, default 500): an upper bound on candidates, on top
	// of the inner voice's own cap.
	DBLimit int `json:"dbLimit"`
	// AutoMarkRemoval is auto_mark_removal when a call sets none
	// (SURR_AUTO_MARK_REMOVAL; default false).
	AutoMarkRemoval bool `json:"autoMarkRemoval"`
}

// DefaultAskConfig is the configuration with nothing set.
func DefaultAskConfig() AskConfig {
	return AskConfig{TopK: DefaultTopK, SimThresh: DefaultSimThresh, DBLimit: DefaultDBLimit}
}

// AskConfigFromEnv reads SURR_TOP_K, SURR_SIM_THRESH, SURR_DB_LIMIT and
// SURR_AUTO_MARK_REMOVAL. Out-of-bounds values are clamped (top_k to
// 1..50, the threshold to 0..1, the limit to 1..100000) and unreadable
// ones ignored, each with a warning.
func AskConfigFromEnv(getenv func(string) string) (AskConfig, []string) {
	c := DefaultAskConfig()
	var warns []string
	num := func(name string) (float64, bool) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return 0, false
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			warns = append(warns, fmt.Sprintf("%s=%q is not a number; ignored", name, v))
			return 0, false
		}
		return f, true
	}
	if f, ok := num("SURR_TOP_K"); ok {
		c.TopK = min(MaxTopK, max(1, int(math.Round(f))))
		if float64(c.TopK) != f {
			warns = append(warns, fmt.Sprintf("SURR_TOP_K=%v is outside [1, 50] or not whole; clamped to %d", f, c.TopK))
		}
	}
	if f, ok := num("SURR_SIM_THRESH"); ok {
		c.SimThresh = math.Min(1, math.Max(0, f))
		if c.SimThresh != f {
			warns = append(warns, fmt.Sprintf("SURR_SIM_THRESH=%v is outside [0, 1]; clamped to %v", f, c.SimThresh))
		}
	}
	if f, ok := num("SURR_DB_LIMIT"); ok {
		c.DBLimit = min(MaxDBLimit, max(1, int(math.Round(f))))
		if float64(c.DBLimit) != f {
			warns = append(warns, fmt.Sprintf("SURR_DB_LIMIT=%v is outside [1, %d] or not whole; clamped to %d", f, MaxDBLimit, c.DBLimit))
		}
	}
	if v := strings.ToLower(strings.TrimSpace(getenv("SURR_AUTO_MARK_REMOVAL"))); v != "" {
		switch v {
		case "1", "true", "yes", "on":
			c.AutoMarkRemoval = true
		case "0", "false", "no", "off":
		default:
			warns = append(warns, fmt.Sprintf("SURR_AUTO_MARK_REMOVAL=%q is not a boolean; using false", v))
		}
	}
	return c, warns
}
