package postgres

import (
	"context"
	"sync"
)

var migrationsMu sync.Mutex

// OpenAtVersion opens a store as a build whose newest migration is
// version would: for testing the upgrade of a database it wrote.
func OpenAtVersion(ctx context.Context, url string, version int) (*DB, error) {
	migrationsMu.Lock()
	defer migrationsMu.Unlock()
	all := migrations
	defer func() { migrations = all }()
	migrations = migrations[:version]
	return Open(ctx, url, nil)
}
