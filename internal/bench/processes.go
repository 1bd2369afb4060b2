package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnhq/cairn/memory"
)

// ProcessResult is what cairn costs as agents meet it: new processes, each
// opening the database and its retrieval index afresh.
type ProcessResult struct {
	// CLI is `cairn retrieve` run once per question: wall time from start
	// to exit, and the process's peak RSS (the kernel's maxrss).
	CLI ProcessRuns `json:"cli"`
	// MCPFirst is `cairn mcp` started afresh: from the start of the
	// process to the first retrieve's answer (initialize included).
	MCPFirst ProcessRuns `json:"mcpFirst"`
	// Servers are MCPServers `cairn mcp` processes on the one database,
	// each having answered ServerQueries retrieves: the sum of their RSS,
	// and of their PSS (a page shared by n processes counts 1/n in each;
	// the sum is the memory they take together).
	Servers       int     `json:"servers"`
	ServerQueries int     `json:"serverQueries"`
	ServersRSSMiB float64 `json:"serversRssMiB"`
	ServersPSSMiB float64 `json:"serversPssMiB"`
	// ServersAnonMiB is the sum of their private (anonymous) memory.
	ServersAnonMiB float64 `json:"serversAnonMiB"`
	Load1          float64 `json:"load1"`
}

// ProcessRuns summarises runs of a new process.
type ProcessRuns struct {
	Runs       int     `json:"runs"`
	P50Ms      float64 `json:"p50Ms"`
	MaxMs      float64 `json:"maxMs"`
	PeakRSSMiB float64 `json:"peakRssMiB"` // the largest of the runs
	P50RSSMiB  float64 `json:"p50RssMiB"`
}

// Process measurement defaults.
const (
	processRuns   = 10
	mcpRuns       = 5
	mcpServers    = 4
	serverQueries = 100
)

// measureProcesses runs bin against dir's database (or t's) as agents do.
func measureProcesses(ctx context.Context, bin, dir string, t target, log io.Writer) (ProcessResult, error) {
	var res ProcessResult
	raw, err := os.ReadFile(filepath.Join(dir, scaleQuestionsName))
	if err != nil {
		return res, memory.Wrap(memory.CodeInternal, err, "reading the questions: %v", err)
	}
	var qf scaleQuestionsFile
	if err := json.Unmarshal(raw, &qf); err != nil || len(qf.Retrieve) == 0 {
		return res, memory.Errorf(memory.CodeInternal, "reading the questions")
	}
	db := t.path(dir)
	env := t.env(dir)
	now := strconv.FormatInt(qf.NowMs, 10)

	fmt.Fprintln(log, "  measuring cairn retrieve in new processes")
	var wall, rss []float64
	for i := range processRuns {
		q := qf.Retrieve[i%len(qf.Retrieve)]
		args := []string{"--db", db, "--now", now, "retrieve", "--max-candidates", "10"}
		if q.ScopeIDs.RepoID != "" {
			args = append(args, "--scope", "repo="+q.ScopeIDs.RepoID)
		}
		cmd := exec.CommandContext(ctx, bin, append(args, q.Query)...)
		cmd.Env = env
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return res, memory.Wrap(memory.CodeInternal, err, "cairn retrieve: %v: %.300s", err, out)
		}
		wall = append(wall, ms(time.Since(t0)))
		rss = append(rss, maxRSSMiB(cmd.ProcessState))
	}
	res.CLI = summarise(wall, rss)

	fmt.Fprintln(log, "  measuring a new cairn mcp's first answer")
	wall, rss = nil, nil
	for i := range mcpRuns {
		q := qf.Retrieve[(i*7)%len(qf.Retrieve)]
		t0 := time.Now()
		r, err := startRawStdio(bin, db, env, "--now", now)
		if err != nil {
			return res, err
		}
		err = r.retrieve(ctx, q)
		wall = append(wall, ms(time.Since(t0)))
		r.close()
		if err != nil {
			return res, err
		}
		rss = append(rss, maxRSSMiB(r.cmd.ProcessState))
	}
	res.MCPFirst = summarise(wall, rss)

	fmt.Fprintf(log, "  measuring %d cairn mcp processes, %d queries each\n", mcpServers, serverQueries)
	res.Servers, res.ServerQueries = mcpServers, serverQueries
	var servers []*rawStdio
	defer func() {
		for _, s := range servers {
			s.close()
		}
	}()
	for range mcpServers {
		r, err := startRawStdio(bin, db, env, "--now", now)
		if err != nil {
			return res, err
		}
		servers = append(servers, r)
	}
	for s, r := range servers {
		for i := range serverQueries {
			if err := r.retrieve(ctx, qf.Retrieve[(s*serverQueries+i)%len(qf.Retrieve)]); err != nil {
				return res, err
			}
		}
	}
	for _, r := range servers {
		m := smapsRollup(r.cmd.Process.Pid)
		res.ServersRSSMiB += m["Rss"]
		res.ServersPSSMiB += m["Pss"]
		res.ServersAnonMiB += m["Anonymous"]
	}
	res.Load1 = load1()
	return res, nil
}

func summarise(wall, rss []float64) ProcessRuns {
	r := ProcessRuns{Runs: len(wall)}
	if len(wall) == 0 {
		return r
	}
	slices.Sort(wall)
	slices.Sort(rss)
	r.P50Ms, r.MaxMs = wall[len(wall)/2], wall[len(wall)-1]
	r.P50RSSMiB, r.PeakRSSMiB = rss[len(rss)/2], rss[len(rss)-1]
	return r
}

// smapsRollup reads a process's memory totals, in MiB (empty off Linux).
func smapsRollup(pid int) map[string]float64 {
	out := map[string]float64{}
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		fs := strings.Fields(val)
		if !ok || len(fs) != 2 || fs[1] != "kB" {
			continue
		}
		if kb, err := strconv.ParseFloat(fs[0], 64); err == nil {
			out[key] = kb / 1024
		}
	}
	return out
}
