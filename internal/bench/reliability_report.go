package bench

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"
)

// WriteReliability prints a report for people.
func WriteReliability(w io.Writer, rep ReliabilityReport, o ReliabilityOptions) {
	fmt.Fprintf(w, "cairn bench reliability: %d CPUs, %s, seed %d, %.0f s, load %.2f → %.2f\n",
		runtime.NumCPU(), runtime.Version(), rep.Seed, rep.Seconds, rep.Load1Start, rep.Load1End)
	if k := rep.Kill; k != nil {
		fmt.Fprintf(w, "\nkill -9: %d kills, %d writes acknowledged, %d lost, %d half-written; in flight at the kill: %d whole, %d absent; %d checks, %d failed (%.0f s)\n",
			k.Trials, k.Acknowledged, k.Lost, k.HalfWritten, k.InFlightPresent, k.InFlightAbsent, k.Checks, k.CheckFailures, k.Seconds)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  face\tkills\tkill window\tbefore ready\tacknowledged\tlost\thalf-written\tin flight whole\tin flight absent\twrite errors")
		for _, f := range k.Faces {
			fmt.Fprintf(tw, "  %s\t%d\t0–%.0f ms\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", f.Face, f.Trials, f.WindowMs, f.KilledBeforeReady, f.Acknowledged, f.Lost, f.HalfWritten, f.InFlightPresent, f.InFlightAbsent, f.WriterErrors)
		}
		tw.Flush()
		if k.PendingWarnings > 0 {
			fmt.Fprintf(w, "  (%d doctors warned of records waiting for a vector: killed between the write and its embedding; a warning, not a failure)\n", k.PendingWarnings)
		}
	}
	if c := rep.Concurrent; c != nil {
		var faces []string
		for _, f := range sortedKeys(c.Faces) {
			faces = append(faces, fmt.Sprintf("%d %s", c.Faces[f], f))
		}
		fmt.Fprintf(w, "\nconcurrent: %d processes (%s), %d writes acknowledged, %d lost; %d reads of another process's newest write, %d missed; errors %v (%.0f s)\n",
			c.Processes, strings.Join(faces, ", "), c.Acknowledged, c.Lost, c.Reads, c.Missed, c.Errors, c.Seconds)
	}
	for _, part := range []struct {
		name   string
		checks []Check
	}{{"slow clients", rep.SlowClients}, {"bodies", rep.Bodies}} {
		if len(part.checks) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", part.name)
		writeChecks(w, part.checks)
	}
	if b := rep.Backup; b != nil {
		fmt.Fprintf(w, "\nbackup: %d backups while %d processes wrote (%d writes acknowledged meanwhile), longest %.0f ms, %.1f MiB\n",
			b.Backups, b.WritersDuring, b.WritesDuring, b.MaxMs, float64(b.Bytes)/(1<<20))
		writeChecks(w, b.Checks)
	}
	if len(rep.Failures) == 0 {
		fmt.Fprintln(w, "\nevery check passed")
		return
	}
	fmt.Fprintf(w, "\n%d checks FAILED:\n", len(rep.Failures))
	for _, f := range rep.Failures {
		fmt.Fprintln(w, "  "+f)
	}
}

func writeChecks(w io.Writer, checks []Check) {
	for _, c := range checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %-40s %s\n", mark, c.Name, c.Detail)
	}
}
