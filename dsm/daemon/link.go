package daemon

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/svmcluster/svm/protocol/peer"
)

// link is an ordered, never-blocking channel of frames to one node (or to
// a submitter): senders queue, a writer goroutine drains the queue in
// batches. Over a network link the writer also sends a heartbeat when it
// has been idle for a heartbeat period.
type link struct {
	node string
	// conn is nil for the loopback link of a node to itself, whose writer
	// hands frames straight to deliver.
	conn    *peer.Conn
	deliver func(kind peer.Kind, body []byte)
	// heartbeat is the idle period after which the writer says it is
	// alive; 0: never.
	heartbeat time.Duration

	mu     sync.Mutex
	queue  []frame
	queued int  // bytes in queue
	busy   bool // the writer holds a batch it has not finished
	// wrote says a frame went out since the writer's last heartbeat tick.
	wrote bool
	// direct is send's buffer for frames it writes itself.
	direct []byte
	// drained is signalled whenever the writer empties the queue.
	drained *sync.Cond
	wake    chan struct{}
	err     error         // why the link went down
	done    chan struct{} // closed once down and onDown has returned
	onDown  func(*link, error)
}

// frame is a frame to send, or, with raw set, the unsent end of frames
// that send began writing itself.
type frame struct {
	kind peer.Kind
	body []byte
	raw  []byte
}

func newLink(node string, conn *peer.Conn, heartbeat time.Duration, onDown func(*link, error)) *link {
	l := &link{node: node, conn: conn, heartbeat: heartbeat, wake: make(chan struct{}, 1), done: make(chan struct{}), onDown: onDown}
	l.drained = sync.NewCond(&l.mu)
	return l
}

// errLinkDown is what send says once the link has gone.
var errLinkDown = errors.New("link is down")

// send sends a frame, or queues it; it never blocks. The body is the
// link's from now on.
//
// When nothing waits ahead of the frame, send writes it to the socket
// itself, as far as the socket takes it without waiting: handing it to the
// writer goroutine would cost a scheduling delay per message, and the
// sender is often an engine goroutine about to block in poll(2) with its
// processor, which would leave the writer waiting for the runtime to take
// that processor back.
func (l *link) send(kind peer.Kind, body []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return fmt.Errorf("to node %s: %w (%v)", l.node, errLinkDown, l.err)
	}
	if l.conn != nil && len(l.queue) == 0 && !l.busy && len(body) <= peer.MaxFrame {
		l.direct = peer.AppendFrame(l.direct[:0], kind, body)
		n, err := l.conn.TryWrite(l.direct)
		if n > 0 {
			l.wrote = true
		}
		if err == nil && n == len(l.direct) {
			return nil
		}
		// The rest goes to the writer, which also meets the error, if
		// any, and takes the link down.
		l.queue = append(l.queue, frame{raw: append([]byte(nil), l.direct[n:]...)})
		l.queued += len(l.direct) - n
		l.wakeWriter()
		return nil
	}
	l.queue = append(l.queue, frame{kind: kind, body: body})
	l.queued += len(body)
	l.wakeWriter()
	return nil
}

func (l *link) wakeWriter() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// sendPaced queues a frame once fewer than limit bytes wait ahead of it:
// a rank that writes output faster than it can be carried waits in its
// write, instead of growing the queue without bound.
func (l *link) sendPaced(kind peer.Kind, body []byte, limit int) error {
	l.mu.Lock()
	for l.queued >= limit && l.err == nil {
		l.drained.Wait()
	}
	l.mu.Unlock()
	return l.send(kind, body)
}

// run writes queued frames until the link goes down.
func (l *link) run() {
	var tick <-chan time.Time
	if l.heartbeat > 0 {
		t := time.NewTicker(l.heartbeat)
		defer t.Stop()
		tick = t.C
	}
	var buf []byte
	for {
		select {
		case <-l.done:
			return
		case <-tick:
			l.mu.Lock()
			idle := !l.wrote
			l.wrote = false
			l.mu.Unlock()
			if idle {
				l.send(kindHeartbeat, nil)
			}
			continue
		case <-l.wake:
		}
		l.mu.Lock()
		batch := l.queue
		l.queue, l.queued, l.busy = nil, 0, true
		l.drained.Broadcast()
		l.mu.Unlock()
		if err := l.write(batch, &buf); err != nil {
			l.down(err)
			return
		}
		l.mu.Lock()
		l.busy = false
		l.wrote = true
		l.mu.Unlock()
	}
}

func (l *link) write(batch []frame, buf *[]byte) error {
	if l.conn == nil {
		for _, f := range batch {
			l.deliver(f.kind, f.body)
		}
		return nil
	}
	b := (*buf)[:0]
	for _, f := range batch {
		if f.raw != nil {
			b = append(b, f.raw...)
		} else {
			b = peer.AppendFrame(b, f.kind, f.body)
		}
	}
	err := l.conn.WriteFrames(b)
	if cap(b) > 1<<20 {
		b = nil // a burst must not pin its buffer
	}
	*buf = b
	return err
}

// down ends the link with err; the first call wins and tells onDown.
func (l *link) down(err error) {
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return
	}
	l.err = err
	l.queue = nil
	l.drained.Broadcast()
	l.mu.Unlock()
	if l.conn != nil {
		l.conn.Close()
	}
	if l.onDown != nil {
		l.onDown(l, err)
	}
	// Closed last: whoever waits for done (the redial loop) must find the
	// loss already told, or a new link could replace this one first and
	// linkDown would take the loss for an old link's.
	close(l.done)
}

// flush waits until the queue is empty or the link is down, at most for d.
func (l *link) flush(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		empty := len(l.queue) == 0 && !l.busy || l.err != nil
		l.mu.Unlock()
		if empty {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
