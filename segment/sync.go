package segment

import (
	"os"
	"runtime"
)

// SyncDir makes a rename or a removal in dir durable. Windows offers no
// directory sync; there it does nothing.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
