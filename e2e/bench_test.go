package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/internal/bench"
)

// `cairn bench protocol` runs end to end on a small database and reports
// every path.
func TestBenchProtocol(t *testing.T) {
	out, err := exec.Command(cairnBin, "bench", "protocol", "--size", "300", "--requests", "40", "--clients", "2", "--json").Output()
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	var rep bench.ProtocolReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("bench output %s: %v", out, err)
	}
	if rep.Size != 300 || len(rep.Runs) != 7 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Runs {
		if r.Requests != 40 || r.Errors != 0 || r.RPS <= 0 || r.P50 <= 0 || r.P99 < r.P50 {
			t.Errorf("run %+v", r)
		}
	}
	if _, err := exec.Command(cairnBin, "bench", "protocol", "--size", "0").Output(); err == nil {
		t.Error("bench accepted --size 0")
	} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(ee.Stderr), "--size") {
		t.Errorf("bad flag: %v", err)
	}
}

// `cairn bench hooks` runs the binary as an agent's hooks on a small
// database and accounts for every write.
func TestBenchHooks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hooks.json")
	table, err := exec.Command(cairnBin, "bench", "hooks", "--size", "500", "--calls", "6", "--warmup", "1", "--session-starts", "2", "--json", file).Output()
	if err != nil || !strings.Contains(string(table), "| tool call (PostToolUse, Bash), background writer (default) | 6 |") {
		t.Fatalf("bench: %v\n%s", err, table)
	}
	out, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.HooksReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("bench output %s: %v", out, err)
	}
	// 7 timed-or-not tool calls each way, a prompt, 2 session starts.
	if rep.Records != 500 || rep.ToolHook.N != 6 || rep.ToolHookDirect.N != 6 || rep.SessionStart.N != 2 || rep.Spooled != 0 ||
		rep.Written < 12 || rep.ToolHook.P50 <= 0 || rep.ProcessStart.P50 <= 0 || rep.Steps["spool"] <= 0 || rep.StepsDirect["write"] <= 0 || rep.ContextTokens == 0 {
		t.Fatalf("report %+v", rep)
	}
}

// `cairn bench replicas` runs end to end on a small database: every count
// of servers is measured, and the replication lag with each provider —
// hybrid, whose index on the other server catches up from the change log,
// and local-fts, which queries the database — named in the JSON and the
// table.
func TestBenchReplicas(t *testing.T) {
	db := pgDatabase(t)
	file := filepath.Join(t.TempDir(), "replicas.json")
	cmd := exec.Command(cairnBin, "bench", "replicas", "--postgres", db, "--replicas", "1,2", "--records", "200", "--clients", "2",
		"--seconds", "0.5", "--lag-samples", "4", "--dir", t.TempDir(), "--json", file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	table, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench replicas: %v\n%s", err, stderr.String())
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.ReplicasReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report %s: %v", raw, err)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].Replicas != 1 || rep.Runs[1].Replicas != 2 {
		t.Fatalf("runs %+v", rep.Runs)
	}
	_, procStat := os.Stat("/proc/stat")
	for _, r := range rep.Runs {
		if r.Calls == 0 || r.Errors != 0 || (procStat == nil && r.ServerCPUMs <= 0) || r.CallerCPUMs < 0 || r.OtherCPUMs < 0 {
			t.Errorf("run %+v", r)
		}
	}
	if len(rep.Lag) != 2 || rep.Lag[0].Provider != "hybrid" || rep.Lag[1].Provider != "local-fts" {
		t.Fatalf("lag %+v; want hybrid, then local-fts", rep.Lag)
	}
	for _, l := range rep.Lag {
		if l.Samples != 4 || l.P50Ms <= 0 || l.P99Ms < l.P50Ms || l.MaxMs < l.P99Ms || l.Polls < 1 {
			t.Errorf("lag %+v", l)
		}
	}
	for _, want := range []string{"replication lag", "provider", "hybrid", "local-fts", "retrieves per write", "CPU ms/call"} {
		if !strings.Contains(string(table), want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}
