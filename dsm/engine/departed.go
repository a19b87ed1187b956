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
	var gone []Departure
	e.eachHost(func(h *host) {
		if h.gone && !h.closed {
			gone = append(gone, Departure{Rank: h.id, Pid: h.pid})
		}
	})
	return gone
}

// Waiting lists the hosted ranks whose process has not joined yet. A
// launcher that did not start the ranks itself (under Slurm) gives them a
// time to join, and ends the job naming those that did not.
func (e *Engine) Waiting() []int {
	var waiting []int
	e.eachHost(func(h *host) {
		if h.conn == nil && !h.gone && !h.closed {
			waiting = append(waiting, h.id)
		}
	})
	return waiting
}
