// Command routes measures two ways of running tree-sitter without cgo on
// the same files: the WebAssembly module run by wazero (compiled, or
// loaded from wazero's compilation cache, then instantiated), and the same
// module translated to Go by wasm2go (package
// internal/treesitter/parsers). Each run is one process: it reports how
// long making the module took and when the first parse was done (what a
// command that parses one file waits for, the files listed), then files/s
// and MB/s over every file, by the clock and by CPU time. It lives in its own module so that cairn
// does not depend on wazero.
//
//	KEEP_WASM=/tmp/parsers.wasm scripts/gen-treesitter.sh
//	cd scripts/treesitter/routes
//	go run . -route wazero -wasm /tmp/parsers.wasm -cache /tmp/wazero-cache /usr/lib/python3.11
//	go run . -route wasm2go /usr/lib/python3.11
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cairnhq/cairn/internal/treesitter/parsers"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// grammars maps extensions to scripts/treesitter/cairn.c's grammar numbers.
var grammars = map[string]uint32{".py": 1, ".js": 2, ".mjs": 2, ".cjs": 2, ".ts": 3, ".mts": 3, ".cts": 3,
	".tsx": 4, ".rs": 5, ".java": 6, ".c": 7, ".h": 7}

// module is one instance of the parsers module, whichever the route.
type module interface {
	malloc(n uint32) uint32
	free(p uint32)
	parse(lang, src, n, res uint32) uint32
	memory() []byte
}

func main() {
	route := flag.String("route", "wasm2go", "wazero or wasm2go")
	wasmPath := flag.String("wasm", "", "the module, for -route wazero (KEEP_WASM of scripts/gen-treesitter.sh)")
	cacheDir := flag.String("cache", "", "wazero's compilation cache directory (none: compile every time)")
	maxBytes := flag.Int("max", 1<<20, "skip files larger than this")
	flag.Parse()
	files := list(flag.Args(), *maxBytes)
	start, startCPU := time.Now(), cpuTime()
	var m module
	var err error
	switch *route {
	case "wazero":
		m, err = newWazero(*wasmPath, *cacheDir)
	case "wasm2go":
		m = newWasm2go()
	default:
		err = fmt.Errorf("unknown route %q", *route)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "routes:", err)
		os.Exit(1)
	}
	ready, readyCPU := time.Since(start), cpuTime()-startCPU
	var bytes int
	var first, firstCPU time.Duration
	cpu0, t0 := cpuTime(), time.Now()
	for i, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		parseOne(m, grammars[strings.ToLower(filepath.Ext(f))], src)
		if i == 0 {
			first, firstCPU = time.Since(start), cpuTime()-startCPU
		}
		bytes += len(src)
	}
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	rate := func(d time.Duration) string {
		s := max(d.Seconds(), 1e-9)
		return fmt.Sprintf("%.2f s, %.1f files/s, %.2f MB/s", d.Seconds(), float64(len(files))/s, float64(bytes)/1e6/s)
	}
	fmt.Printf("%s: module ready %.1f ms (CPU %.1f), first parse done %.1f ms (CPU %.1f); %d files, %.1f MB; wall %s; CPU %s\n",
		*route, ms(ready), ms(readyCPU), ms(first), ms(firstCPU), len(files), float64(bytes)/1e6, rate(wall), rate(cpu))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// parseOne parses src as cairn's treesitter package does (stopping at the
// first check in error recovery), without reading the tree back.
func parseOne(m module, lang uint32, src []byte) {
	buf := m.malloc(uint32(len(src) + 20))
	copy(m.memory()[buf+20:], src)
	m.parse(lang, buf+20, uint32(len(src)), buf)
	_ = binary.LittleEndian.Uint32(m.memory()[buf:])
	m.free(buf)
}

func list(roots []string, maxBytes int) []string {
	var files []string
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && grammars[strings.ToLower(filepath.Ext(p))] != 0 {
				if info, err := d.Info(); err == nil && info.Size() <= int64(maxBytes) {
					files = append(files, p)
				}
			}
			return nil
		})
	}
	return files
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wasm2go

type w2g struct{ m *parsers.Module }

type noWASI struct{}

func (noWASI) Xclock_time_get(int32, int64, int32) int32  { return 52 }
func (noWASI) Xfd_close(int32) int32                      { return 52 }
func (noWASI) Xfd_seek(int32, int64, int32, int32) int32  { return 52 }
func (noWASI) Xfd_write(int32, int32, int32, int32) int32 { return 52 }

func newWasm2go() module {
	m := parsers.New(noWASI{})
	m.X_initialize()
	return w2g{m}
}

func (w w2g) malloc(n uint32) uint32 { return uint32(w.m.Xcairn_malloc(int32(n))) }
func (w w2g) free(p uint32)          { w.m.Xcairn_free(int32(p)) }
func (w w2g) parse(lang, src, n, res uint32) uint32 {
	return uint32(w.m.Xcairn_parse(int32(lang), int32(src), int32(n), 0, int32(res)))
}
func (w w2g) memory() []byte { return *w.m.Xmemory().Slice() }

// wazero

type wz struct {
	ctx                context.Context
	mem                func() []byte
	malloc_, free_, ps func(...uint64) ([]uint64, error)
}

func newWazero(path, cache string) (module, error) {
	ctx := context.Background()
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg := wazero.NewRuntimeConfig()
	if cache != "" {
		c, err := wazero.NewCompilationCacheWithDir(cache)
		if err != nil {
			return nil, err
		}
		cfg = cfg.WithCompilationCache(c)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, err
	}
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		return nil, err
	}
	call := func(name string) func(...uint64) ([]uint64, error) {
		f := mod.ExportedFunction(name)
		return func(args ...uint64) ([]uint64, error) { return f.Call(ctx, args...) }
	}
	return &wz{ctx: ctx, mem: func() []byte {
		b, _ := mod.Memory().Read(0, mod.Memory().Size())
		return b
	}, malloc_: call("cairn_malloc"), free_: call("cairn_free"), ps: call("cairn_parse")}, nil
}

func (w *wz) malloc(n uint32) uint32 { r, _ := w.malloc_(uint64(n)); return uint32(r[0]) }
func (w *wz) free(p uint32)          { _, _ = w.free_(uint64(p)) }
func (w *wz) parse(lang, src, n, res uint32) uint32 {
	r, err := w.ps(uint64(lang), uint64(src), uint64(n), 0, uint64(res))
	if err != nil {
		panic(err)
	}
	return uint32(r[0])
}
func (w *wz) memory() []byte { return w.mem() }
