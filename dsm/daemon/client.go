package daemon

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/dsm/launch"
	"github.com/svmcluster/svm/protocol/peer"
)

// SubmitOptions say where a submitted job's output goes.
type SubmitOptions struct {
	Stdout, Stderr io.Writer
	// Tag prefixes each line of output with the rank's number, "[3] ".
	Tag bool
	// Signals, when a signal arrives on it, cancel the job; a second one
	// stops waiting for it.
	Signals <-chan os.Signal
	// Accepted, if set, hears the job's id and each rank's node.
	Accepted func(id string, placement []string)
	// Ranks, if set, hears at the job's end the final counters of its
	// ranks (of every node that said it stopped).
	Ranks func([]engine.RankSnapshot)
}

// DaemonStartWait is how long svmf waits for an svmd that is starting: its
// control socket not there yet, or not listening yet.
const DaemonStartWait = 5 * time.Second

// answerWait is how long svmf waits for svmd's first answer to a
// submission: svmd accepts or refuses a job as soon as it has checked and
// placed it, so a longer silence is an svmd that is stuck.
var answerWait = 30 * time.Second

// dialDaemon connects to the control socket of the svmd whose socket
// directory is dir, waiting up to wait for one that is starting, and then
// says which it is: no svmd there, or one that does not answer.
func dialDaemon(dir string, wait time.Duration) (net.Conn, error) {
	path := filepath.Join(dir, ControlSocket)
	deadline := time.Now().Add(wait)
	for {
		c, err := net.Dial("unix", path)
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			if errors.Is(err, syscall.ECONNREFUSED) {
				return nil, fmt.Errorf("svmd not answering at %s: its socket is there but nothing has accepted for %v (an svmd that was killed? start it again): %w", path, wait, err)
			}
			return nil, fmt.Errorf("no svmd at %s after waiting %v (start svmd, or point --daemon or SVM_DAEMON at its socket directory): %w", dir, wait, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Submit runs a job through the svmd whose socket directory is dir, copies
// its ranks' output as it comes, and returns the job's exit status: 0 when
// every rank exited 0, else the first failure's status with an error that
// says what failed.
func Submit(dir string, spec JobSpec, opt SubmitOptions) (int, error) {
	body := encode(spec)
	if len(body) > MaxRequest {
		return 2, fmt.Errorf("the job's submission takes %d bytes, and svmd takes at most %d: its arguments and environment are too large", len(body), MaxRequest)
	}
	c, err := dialDaemon(dir, DaemonStartWait)
	if err != nil {
		return 1, err
	}
	pc := peer.Local(c, "svmd")
	defer pc.Close()
	if err := pc.Send(kindSubmit, body); err != nil {
		return 1, err
	}
	var tagMu sync.Mutex
	writers := map[[2]int]io.Writer{}
	writer := func(rank, stream int) io.Writer {
		w := opt.Stdout
		if stream == stderr {
			w = opt.Stderr
		}
		if !opt.Tag {
			return w
		}
		k := [2]int{rank, stream}
		if writers[k] == nil {
			writers[k] = launch.NewTagger(w, fmt.Sprintf("[%d] ", rank), &tagMu)
		}
		return writers[k]
	}
	closeTaggers := func() {
		for _, w := range writers {
			w.(*launch.Tagger).Close()
		}
	}
	frames, done := receive(pc)
	defer close(done)
	cancelled := false
	silence := time.NewTimer(answerWait)
	defer silence.Stop()
	for {
		var f answer
		select {
		case f = <-frames:
			silence.Stop()
		case <-silence.C:
			return 1, fmt.Errorf("svmd at %s took the submission and has not answered it in %v: it is stuck (its log may say why)", dir, answerWait)
		case s := <-opt.Signals:
			if cancelled {
				return 128 + int(s.(syscall.Signal)), fmt.Errorf("interrupted by %v again: not waiting for the job to stop", s)
			}
			cancelled = true
			pc.Send(kindCancel, encode(cancel{Signal: int(s.(syscall.Signal))}))
			continue
		}
		if f.err != nil {
			closeTaggers()
			if errors.Is(f.err, io.EOF) {
				f.err = errors.New("svmd closed the connection")
			}
			return 1, fmt.Errorf("lost the job: %w", f.err)
		}
		switch f.kind {
		case kindAccepted:
			var m accepted
			if err := decode(f.body, &m); err != nil {
				return 1, fmt.Errorf("svmd: %w", err)
			}
			if opt.Accepted != nil {
				opt.Accepted(m.ID, m.Placement)
			}
		case kindOutput:
			var m output
			if err := decode(f.body, &m); err != nil {
				return 1, fmt.Errorf("svmd: %w", err)
			}
			writer(m.Rank, m.Stream).Write(m.Data)
		case kindExit:
			closeTaggers()
			var m exit
			if err := decode(f.body, &m); err != nil {
				return 1, fmt.Errorf("svmd: %w", err)
			}
			if opt.Ranks != nil {
				snaps := make([]engine.RankSnapshot, len(m.Ranks))
				for i, r := range m.Ranks {
					snaps[i] = r.Snapshot()
				}
				opt.Ranks(snaps)
			}
			if m.Code != 0 {
				return m.Code, errors.New(m.Message)
			}
			return 0, nil
		default:
			return 1, fmt.Errorf("svmd sent a %s frame", kindName(f.kind))
		}
	}
}

// answer is a frame svmd sent, or why none came.
type answer struct {
	kind peer.Kind
	body []byte
	err  error
}

// receive reads pc's frames into the returned channel, until one fails or
// done is closed, so that a caller can wait for a frame and a signal at
// once.
func receive(pc *peer.Conn) (<-chan answer, chan<- struct{}) {
	frames, done := make(chan answer), make(chan struct{})
	go func() {
		for {
			kind, body, err := pc.Recv()
			select {
			case frames <- answer{kind, body, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return frames, done
}

// JoinStep joins this node's part of a Slurm job step to the svmd at the
// other end of c (a connection to its control socket), for svmf
// slurm-engine. ready is called with the socket of the node's engine once
// every node of the step has joined; JoinStep then waits for the step to
// end, and returns its status: 0 when every rank closed, else 1 with an
// error naming what failed. A signal on signals ends it at once (svmd then
// ends the step).
func JoinStep(c net.Conn, j StepJoin, ready func(socket string) error, signals <-chan os.Signal) (int, error) {
	pc := peer.Local(c, "svmd")
	defer pc.Close()
	if err := pc.Send(kindStepJoin, encode(j)); err != nil {
		return 1, fmt.Errorf("joining svmd: %w", err)
	}
	// svmd answers within the step's time to join, or refuses it.
	pc.SetReadDeadline(time.Now().Add(2*time.Duration(j.JoinTimeout) + time.Minute))
	frames, done := receive(pc)
	defer close(done)
	for {
		var f answer
		select {
		case f = <-frames:
		case s := <-signals:
			return 128 + int(s.(syscall.Signal)), fmt.Errorf("stopped by %v", s)
		}
		if f.err != nil {
			if errors.Is(f.err, io.EOF) {
				f.err = errors.New("svmd closed the connection")
			}
			return 1, fmt.Errorf("lost the step: %w", f.err)
		}
		switch f.kind {
		case kindStepReady:
			var m stepReady
			if err := decode(f.body, &m); err != nil {
				return 1, fmt.Errorf("svmd: %w", err)
			}
			pc.SetReadDeadline(time.Time{})
			if err := ready(m.Socket); err != nil {
				return 1, err
			}
		case kindExit:
			var m exit
			if err := decode(f.body, &m); err != nil {
				return 1, fmt.Errorf("svmd: %w", err)
			}
			if m.Code != 0 {
				return m.Code, errors.New(m.Message)
			}
			return 0, nil
		default:
			return 1, fmt.Errorf("svmd sent a %s frame", kindName(f.kind))
		}
	}
}
