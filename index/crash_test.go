package index

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnhq/cairn/segment"
)

// The crash tests run this test binary again as a child that writes the
// index (TestCrashChild) and dies: at a chosen step of writing a file, or
// killed from outside in the middle of a merge. The parent then opens
// what the child left, with the same records, and must get the answers of
// an index that never crashed.

const (
	crashSeed  = 11
	crashSteps = 1800
)

// TestCrashChild is the child process of the crash tests; run alone it
// has nothing to do.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("CAIRN_INDEX_CRASH_DIR")
	if dir == "" {
		t.Skip("the child process of the crash tests; they run it with CAIRN_INDEX_CRASH_DIR set")
	}
	stage := os.Getenv("CAIRN_INDEX_CRASH_STAGE")
	count, _ := strconv.Atoi(os.Getenv("CAIRN_INDEX_CRASH_COUNT"))
	out := bufio.NewWriter(os.Stdout)
	crashHook = func(step string) {
		if step == "merge" {
			fmt.Fprintln(out, "merging")
			out.Flush()
		}
		if step == stage || (stage == "any" && step != "merge") {
			if count--; count == 0 {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	ctx := context.Background()
	store := newFakeStore()
	h := newHistory(crashSeed, store, testEmbedder)
	x, err := Open(Options{Dir: dir, Embedder: testEmbedder, FlushDocs: 7, ShortMergeDocs: 1 << 30, IVFThreshold: 300})
	if err != nil {
		t.Fatal(err)
	}
	for i := range crashSteps {
		h.step()
		if i%10 == 9 {
			if err := x.Sync(ctx, store); err != nil {
				t.Fatal(err)
			}
			x.maintain(ctx, 0)
		}
	}
	fmt.Fprintln(out, "done")
	out.Flush()
}

// crashChild runs the child; wait says to wait for it to end by itself.
func crashChild(t *testing.T, dir, stage string, count int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CAIRN_INDEX_CRASH_DIR="+dir, "CAIRN_INDEX_CRASH_STAGE="+stage, "CAIRN_INDEX_CRASH_COUNT="+strconv.Itoa(count))
	return cmd
}

// checkRecovered opens what a dead writer left and compares it with an
// index that never crashed, over the whole history.
func checkRecovered(t *testing.T, dir, what string) {
	t.Helper()
	store := newFakeStore()
	h := newHistory(crashSeed, store, testEmbedder)
	for range crashSteps {
		h.step()
	}
	ref := openMem(t)
	syncX(t, ref, store)
	_, statErr := os.Stat(dir + "/" + manifestName)
	committed := statErr == nil
	x, err := Open(Options{Dir: dir, Embedder: testEmbedder, FlushDocs: 7, ShortMergeDocs: 1 << 30, IVFThreshold: 300})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	syncX(t, x, store)
	if committed && x.builds.Load() != 0 {
		t.Fatalf("%s: the files a commit left could not serve; the index was rebuilt", what)
	}
	if err := x.Verify(); err != nil {
		t.Fatalf("%s: the files left fail verification: %v", what, err)
	}
	ps := probes(12, 6)
	probeAll := probeCount
	probeCount = func(lists int) int { return lists }
	defer func() { probeCount = probeAll }()
	same(t, what, describe(t, ref, ps), describe(t, x, ps))
	// The next commit clears what the dead writer left half-written.
	if err := x.Flush(context.Background(), store, 0, true); err != nil {
		t.Fatal(err)
	}
	names, _ := x.store().list()
	for _, n := range names {
		if segment.TempPrefix(n) {
			t.Fatalf("%s: a temporary file %s is left after the next commit", what, n)
		}
	}
}

func skipWithoutSignals(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("the crash tests kill a child process with SIGKILL, which this system lacks")
	}
}

// TestCrashAtEveryStepOfWriting kills the writer at each step of writing
// a segment or a manifest (a section begun, a block written, the file
// written, synced, renamed), at several occurrences of each.
func TestCrashAtEveryStepOfWriting(t *testing.T) {
	skipWithoutSignals(t)
	stages := []struct {
		stage string
		count int
	}{
		{"begin doc.ts", 3}, {"begin doc.meta", 20}, {"block", 4}, {"block", 60}, {"begin lex.docs", 11},
		{"begin vec.0.rows", 7}, {"begin info", 30}, {"begin manifest", 9}, {"begin dead", 40},
		{"written", 5}, {"written", 50}, {"synced", 6}, {"synced", 41}, {"renamed", 8}, {"renamed", 77},
		{"merge", 3}, {"any", 500},
	}
	for _, s := range stages {
		dir := t.TempDir()
		out, err := crashChild(t, dir, s.stage, s.count).CombinedOutput()
		var ee *exec.ExitError
		if err == nil || !asExit(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			if strings.Contains(string(out), "done") {
				t.Fatalf("%s #%d: the child finished without reaching the step", s.stage, s.count)
			}
			t.Fatalf("%s #%d: the child did not die by SIGKILL: %v\n%s", s.stage, s.count, err, out)
		}
		checkRecovered(t, dir, fmt.Sprintf("killed at %s #%d", s.stage, s.count))
	}
}

// TestKillMidMergeInALoop kills a writer from outside as soon as it says
// it starts a merge, again and again on the same files, each time
// somewhere else in the merge.
func TestKillMidMergeInALoop(t *testing.T) {
	skipWithoutSignals(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(21, 22))
	for round := range 12 {
		cmd := crashChild(t, dir, "none", 0)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		merges := 1 + rng.IntN(6)
		killed := false
		for sc.Scan() {
			if sc.Text() == "merging" {
				if merges--; merges == 0 {
					cmd.Process.Signal(syscall.SIGKILL)
					killed = true
					break
				}
			}
		}
		cmd.Wait()
		if !killed {
			t.Fatalf("round %d: the child finished before the merge to kill", round)
		}
		checkRecovered(t, dir, fmt.Sprintf("round %d", round))
	}
}

func asExit(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}
