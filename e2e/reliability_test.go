package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/internal/bench"
)

// The reliability suite, small: 30 kill -9 trials (counted, not timed: ten
// each of `cairn log`, `cairn mcp` and `cairn serve`), 8 processes at once,
// slow clients, bad bodies and a backup round trip, against the real
// binary. docs/reliability.md has the full run's figures.
func TestReliabilitySuite(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(cairnBin, "bench", "reliability", "--trials", "30", "--processes", "8", "--writes", "10", "--dir", dir, "--json", "-")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var rep bench.ReliabilityReport
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		t.Fatalf("report: %v (%v)\n%s", jerr, err, stderr.String())
	}
	if err != nil || len(rep.Failures) > 0 {
		t.Fatalf("the suite failed: %v\n%s\n%s", err, strings.Join(rep.Failures, "\n"), stderr.String())
	}

	k := rep.Kill
	if k == nil || k.Trials != 30 || len(k.Faces) != 3 {
		t.Fatalf("kill report %+v", k)
	}
	inFlight := 0
	for _, f := range k.Faces {
		if f.Trials != 10 {
			t.Errorf("%s: %d kills; want 10", f.Face, f.Trials)
		}
		inFlight += f.InFlightPresent + f.InFlightAbsent
	}
	if k.Acknowledged == 0 || k.Lost != 0 || k.HalfWritten != 0 || k.CheckFailures != 0 || k.WriterErrors != 0 || k.Checks < 31 {
		t.Errorf("kill tally %+v", k)
	}
	// Every kill of a `cairn log` process leaves its write in flight.
	if inFlight < 10 {
		t.Errorf("%d writes in flight at the kills; want at least the 10 of cairn log", inFlight)
	}

	c := rep.Concurrent
	if c == nil || c.Processes != 8 || c.Acknowledged != 80 || c.Lost != 0 || c.Missed != 0 || c.Reads == 0 || len(c.Errors) != 0 {
		t.Errorf("concurrent report %+v", c)
	}

	for part, checks := range map[string][]bench.Check{"slow clients": rep.SlowClients, "bodies": rep.Bodies} {
		if len(checks) < 7 {
			t.Errorf("%s: %d checks", part, len(checks))
		}
		for _, ch := range checks {
			if !ch.OK {
				t.Errorf("%s: %+v", part, ch)
			}
		}
	}
	b := rep.Backup
	if b == nil || b.Backups != 3 || b.Bytes == 0 || len(b.Checks) < 7 {
		t.Fatalf("backup report %+v", b)
	}
	for _, ch := range b.Checks {
		if !ch.OK {
			t.Errorf("backup: %+v", ch)
		}
	}

	if _, err := exec.Command(cairnBin, "bench", "reliability", "--trials", "0").Output(); err == nil {
		t.Error("the suite accepted --trials 0")
	} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("--trials 0: %v", err)
	}
	if _, err := exec.Command(cairnBin, "bench", "reliability", "--parts", "nope", "--dir", t.TempDir()).Output(); err == nil {
		t.Error("the suite accepted an unknown part")
	}
}
