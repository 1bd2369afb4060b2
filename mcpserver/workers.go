package mcpserver

import "time"

// warmPool runs tool calls on long-lived goroutines. The SDK starts a new
// goroutine per request; SQLite's call chains are deep, so each of those
// would grow its stack from scratch on every call. A worker keeps its grown
// stack between calls and exits after a while idle.
type warmPool struct {
	jobs chan func()
	idle time.Duration
}

func newWarmPool(idle time.Duration) *warmPool {
	return &warmPool{jobs: make(chan func()), idle: idle}
}

// run calls f on a warm worker (or a new one when all are busy) and waits.
func (p *warmPool) run(f func()) {
	done := make(chan struct{})
	job := func() { defer close(done); f() }
	select {
	case p.jobs <- job:
	default:
		go p.worker(job)
	}
	<-done
}

func (p *warmPool) worker(job func()) {
	t := time.NewTimer(p.idle)
	defer t.Stop()
	for {
		job()
		t.Reset(p.idle)
		select {
		case job = <-p.jobs:
		case <-t.C:
			return
		}
	}
}
