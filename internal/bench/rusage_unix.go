//go:build unix

package bench

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSSMiB is an ended process's peak RSS.
func maxRSSMiB(ps *os.ProcessState) float64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return float64(ru.Maxrss) / (1 << 20) // bytes there
	}
	return float64(ru.Maxrss) / 1024 // kilobytes
}
