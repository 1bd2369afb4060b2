//go:build !unix

package bench

import "os"

// maxRSSMiB is not reported here.
func maxRSSMiB(*os.ProcessState) float64 { return 0 }
