package engine

// Departure is a hosted rank whose process left the job without closing
// it: killed, or it exited without Close.
type Departure struct {
	Rank, Pid int
}

// Departed lists the hosted ranks that have left the job without closing
// it. A launcher that did not start the ranks itself (under Slurm) learns
// of a dead rank this way, where svmf run and svmd learn it from the exit
// status.
func (e *Engine) Departed() []Departure {
	e.mu.Lock()
	defer e.mu.Unlock()
	var gone []Departure
	for _, h := range e.hosts {
		if h != nil && h.gone && !h.closed {
			gone = append(gone, Departure{Rank: h.id, Pid: h.pid})
		}
	}
	return gone
}
