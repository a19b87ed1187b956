// Package daemon is svmd, the node daemon: it takes jobs from svmf on its
// node, places their ranks on the nodes the job lists, runs the coherence
// engine for the ranks placed on its own node, and carries the engines'
// protocol messages to and from the other nodes' daemons.
//
// Each pair of nodes shares one TCP connection, authenticated with the
// cluster secret (package protocol/peer) and opened by the node whose name
// sorts first. A job is headed by the node it was submitted to: the head
// starts the job's part on every node (an engine for the ranks there), lets
// the ranks run once every part is ready, collects their output and exits
// for svmf, and stops every part when the job ends — because every rank
// has exited, or one failed, or a node or link was lost. Heartbeats bound
// how long a silent peer goes unnoticed.
package daemon

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	applink "github.com/svmcluster/svm/dsm/internal/link"
	"github.com/svmcluster/svm/protocol/peer"
)

// Daemon is one node's svmd.
type Daemon struct {
	cfg     Config
	secret  []byte
	log     *slog.Logger
	peerLn  net.Listener
	ctlLn   *net.UnixListener
	ctlPath string
	httpSrv *http.Server
	httpLn  net.Listener
	metrics *metrics

	linksMu sync.Mutex
	links   map[string]*link // node → its link; this node's is the loopback
	// linksClosed: Stop has taken the links down; no new one comes up.
	linksClosed bool
	// rejected is when a failed handshake from each host was last logged.
	rejected map[string]time.Time
	// handshakes counts the peer connections whose handshake is under way,
	// by remote host.
	handshakes    map[string]int
	handshakesAll int

	// ctlMu guards the counts of control connections by user: open, and
	// of those, pending (their submission not read yet).
	ctlMu         sync.Mutex
	ctlOpen       map[uint32]int
	ctlPending    map[uint32]int
	ctlPendingAll int

	// mu guards the jobs and the daemon's state.
	mu    sync.Mutex
	heads map[string]*headJob // jobs submitted here
	parts map[string]*partJob // jobs with ranks here
	// steps are the Slurm steps joined here that have not started, gathers
	// those this node heads while their nodes join (see step.go).
	steps   map[string]*stepWait
	gathers map[string]*stepGather
	// history is what the ended parts did, for the node's metrics.
	history nodeHistory
	// run and seq make job ids: run tells this daemon's jobs from those of
	// an earlier one on the same node, whose parts on other nodes may
	// still be stopping.
	run      string
	seq      int
	stopping bool
	// settled is signalled whenever a job part or a headed job ends.
	settled *sync.Cond

	stopOnce sync.Once
	quit     chan struct{} // closed when Stop begins
	done     chan struct{} // closed when Stop has finished
	wg       sync.WaitGroup
}

// New checks the configuration, reads the secret and opens the daemon's
// sockets: the peer port, the control socket and the metrics endpoint.
// Nothing is served before Start.
func New(cfg Config, log *slog.Logger) (*Daemon, error) {
	if err := cfg.Check(); err != nil {
		return nil, fmt.Errorf("svmd: %w", err)
	}
	d := &Daemon{
		cfg: cfg, log: log, links: map[string]*link{}, rejected: map[string]time.Time{}, handshakes: map[string]int{},
		ctlOpen: map[uint32]int{}, ctlPending: map[uint32]int{},
		heads: map[string]*headJob{}, parts: map[string]*partJob{},
		steps: map[string]*stepWait{}, gathers: map[string]*stepGather{},
		run:  strconv.FormatInt(time.Now().UnixMilli(), 36),
		quit: make(chan struct{}), done: make(chan struct{}),
	}
	d.settled = sync.NewCond(&d.mu)
	if cfg.SecretFile != "" {
		s, err := ReadSecret(cfg.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("svmd: %w", err)
		}
		d.secret = s
	}
	d.metrics = newMetrics(d)
	var err error
	if d.ctlLn, d.ctlPath, err = listenControl(cfg.SocketDir); err != nil {
		return nil, fmt.Errorf("svmd: %w", err)
	}
	d.removeStaleJobs()
	if d.peerLn, err = net.Listen("tcp", cfg.Listen); err != nil {
		d.ctlLn.Close()
		return nil, fmt.Errorf("svmd: peer port: %w", err)
	}
	if cfg.Metrics != "" {
		if d.httpLn, err = net.Listen("tcp", cfg.Metrics); err != nil {
			d.ctlLn.Close()
			d.peerLn.Close()
			return nil, fmt.Errorf("svmd: metrics port: %w", err)
		}
		d.httpSrv = &http.Server{Handler: d.metrics.handler(), ReadHeaderTimeout: 10 * time.Second}
	}
	return d, nil
}

// listenControl opens the socket svmf submits through. Any user may
// connect (mode 0666): svmd learns who with SO_PEERCRED and runs the job as
// that user. A socket left by a daemon that died is replaced; one that a
// live daemon answers on is not.
func listenControl(dir string) (*net.UnixListener, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("socket directory: %w", err)
	}
	path := filepath.Join(dir, ControlSocket)
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, "", fmt.Errorf("another svmd already serves %s", path)
	}
	os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, "", fmt.Errorf("control socket: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, "", fmt.Errorf("control socket: %w", err)
	}
	return ln, path, nil
}

// removeStaleJobs removes the job directories an svmd that died (killed,
// or crashed) left in the socket directory: no job of it goes on, and a
// leftover must not stand in a new job's way. No other svmd serves the
// directory: listenControl made sure.
func (d *Daemon) removeStaleJobs() {
	dirs, err := filepath.Glob(filepath.Join(d.cfg.SocketDir, jobDirPrefix+"*"))
	if err != nil {
		return
	}
	for _, dir := range dirs {
		if err := os.RemoveAll(dir); err != nil {
			d.log.Warn("cannot remove the directory of a job of an earlier svmd", "dir", dir, "err", err)
			continue
		}
		d.log.Info("removed the directory of a job of an earlier svmd", "dir", dir)
	}
}

// PeerAddr is the address the peer port listens on.
func (d *Daemon) PeerAddr() net.Addr { return d.peerLn.Addr() }

// MetricsAddr is the address of the metrics endpoint, or nil.
func (d *Daemon) MetricsAddr() net.Addr {
	if d.httpLn == nil {
		return nil
	}
	return d.httpLn.Addr()
}

// Start serves: it accepts peers and jobs, dials the peers this node
// connects to, and serves metrics.
func (d *Daemon) Start() {
	self := newLink(d.cfg.Node, nil, 0, nil)
	self.deliver = func(kind peer.Kind, body []byte) {
		if err := d.handle(d.cfg.Node, kind, body); err != nil {
			d.log.Error("bad frame from this node to itself", "kind", kindName(kind), "err", err)
		}
	}
	d.links[d.cfg.Node] = self
	d.spawn(self.run)
	d.spawn(d.acceptPeers)
	d.spawn(d.acceptControl)
	for name, addr := range d.cfg.Peers {
		if d.cfg.Node < name {
			d.spawn(func() { d.dialLoop(name, addr) })
		}
	}
	if d.httpSrv != nil {
		d.spawn(func() { d.httpSrv.Serve(d.httpLn) })
	}
	d.log.Info("svmd serving", "node", d.cfg.Node, "listen", d.peerLn.Addr().String(),
		"socket", d.ctlPath, "metrics", d.cfg.Metrics, "peers", len(d.cfg.Peers), "authenticated", d.secret != nil)
}

func (d *Daemon) spawn(f func()) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f()
	}()
}

// Done is closed when Stop has finished.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Stop ends every running job with a message to its user naming why, waits
// (a bounded time) for their ranks to be gone, then closes every socket.
// It may be called any number of times, from any goroutine; every call
// returns once the daemon has stopped.
func (d *Daemon) Stop(reason string) {
	d.stopOnce.Do(func() {
		d.log.Info("svmd stopping", "reason", reason)
		d.mu.Lock()
		d.stopping = true
		msg := fmt.Sprintf("svmd on node %s is shutting down (%s)", d.cfg.Node, reason)
		for _, h := range d.heads {
			d.headFail(h, 1, msg)
			d.headStop(h, msg)
		}
		for _, p := range d.parts {
			if p.head != d.cfg.Node {
				d.sendTo(p.head, kindJobFailed, encode(jobFailed{ID: p.id, Reason: msg}))
			}
			p.failure = msg
			d.partStop(p)
		}
		for id := range d.steps {
			d.stepRefuse(id, msg)
		}
		for _, g := range d.gathers {
			d.gatherFail(g, msg)
		}
		grace := d.cfg.KillAfter
		for _, p := range d.parts {
			grace = max(grace, p.killAfter())
		}
		deadline := time.Now().Add(grace + 2*time.Second)
		timer := time.AfterFunc(time.Until(deadline), func() {
			d.mu.Lock()
			d.settled.Broadcast()
			d.mu.Unlock()
		})
		for (len(d.heads) > 0 || len(d.parts) > 0) && time.Now().Before(deadline) {
			d.settled.Wait()
		}
		timer.Stop()
		d.mu.Unlock()
		close(d.quit)
		d.ctlLn.Close()
		d.peerLn.Close()
		if d.httpSrv != nil {
			d.httpSrv.Close()
		}
		d.linksMu.Lock()
		d.linksClosed = true
		links := slices.Collect(maps.Values(d.links))
		d.linksMu.Unlock()
		for _, l := range links {
			l.down(errors.New("svmd stopped"))
		}
		d.wg.Wait()
		d.log.Info("svmd stopped")
		close(d.done)
	})
	<-d.done
}

// linkTo is the link to node, or nil when there is none.
func (d *Daemon) linkTo(node string) *link {
	d.linksMu.Lock()
	defer d.linksMu.Unlock()
	return d.links[node]
}

// sendTo queues a frame for node.
func (d *Daemon) sendTo(node string, kind peer.Kind, body []byte) error {
	l := d.linkTo(node)
	if l == nil {
		return fmt.Errorf("no link to node %s", node)
	}
	return l.send(kind, body)
}

// Bounds on the peer connections that have not proved they hold the
// secret: each costs a read buffer and a goroutine for at most
// peer.HandshakeTimeout. Per host, so that one host cannot keep the
// cluster's nodes from reconnecting.
const (
	maxHandshakes        = 32
	maxHandshakesPerHost = 8
)

// acceptPeers takes the other nodes' connections.
func (d *Daemon) acceptPeers() {
	for {
		c, err := d.peerLn.Accept()
		if err != nil {
			return
		}
		host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
		if err := d.admitHandshake(host); err != nil {
			c.Close()
			d.logRejection(c.RemoteAddr(), err)
			continue
		}
		d.spawn(func() {
			defer d.handshakeDone(host)
			d.handshake(c)
		})
	}
}

func (d *Daemon) admitHandshake(host string) error {
	d.linksMu.Lock()
	defer d.linksMu.Unlock()
	if d.handshakesAll >= maxHandshakes || d.handshakes[host] >= maxHandshakesPerHost {
		return fmt.Errorf("%d handshakes under way, %d of them from this host (at most %d, and %d from one host): connection closed",
			d.handshakesAll, d.handshakes[host], maxHandshakes, maxHandshakesPerHost)
	}
	d.handshakesAll++
	d.handshakes[host]++
	return nil
}

func (d *Daemon) handshakeDone(host string) {
	d.linksMu.Lock()
	defer d.linksMu.Unlock()
	d.handshakesAll--
	if d.handshakes[host]--; d.handshakes[host] == 0 {
		delete(d.handshakes, host)
	}
}

func (d *Daemon) handshake(c net.Conn) {
	defer d.survive("a peer's handshake", func() { c.Close() })
	var pc *peer.Conn
	err := d.checkUnauthenticated(c)
	if err == nil {
		pc, err = peer.Server(c, d.cfg.Node, d.secret)
	}
	if err == nil {
		if _, ok := d.cfg.Peers[pc.Peer]; !ok {
			pc.Close()
			err = fmt.Errorf("node %q is not one of this node's peers", pc.Peer)
		}
	}
	if err != nil {
		c.Close()
		if errors.Is(err, peer.ErrAuth) {
			d.metrics.authFailures.Inc()
		}
		d.logRejection(c.RemoteAddr(), err)
		return
	}
	d.addLink(pc)
}

// checkUnauthenticated lets a peer connection on without a cluster secret
// only if the other end is a process of svmd's own user.
func (d *Daemon) checkUnauthenticated(c net.Conn) error {
	if d.secret != nil {
		return nil
	}
	return checkLoopbackOwner(c)
}

// dialPeer connects to the peer node at addr and runs the handshake.
func (d *Daemon) dialPeer(addr string) (*peer.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, peer.HandshakeTimeout)
	if err != nil {
		return nil, fmt.Errorf("peer: dial %s: %w", addr, err)
	}
	pc, err := func() (*peer.Conn, error) {
		if err := d.checkUnauthenticated(c); err != nil {
			return nil, err
		}
		return peer.Client(c, d.cfg.Node, d.secret)
	}()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("peer: %s: %w", addr, err)
	}
	return pc, nil
}

// rejectionQuiet is how long svmd keeps quiet about more failed handshakes
// from a host it has logged one of: a misconfigured node retries every
// second, and the log must stay readable.
const rejectionQuiet = time.Minute

func (d *Daemon) logRejection(addr net.Addr, err error) {
	host, _, _ := net.SplitHostPort(addr.String())
	d.linksMu.Lock()
	last, seen := d.rejected[host]
	if !seen || time.Since(last) > rejectionQuiet {
		d.rejected[host] = time.Now()
	} else {
		err = nil
	}
	d.linksMu.Unlock()
	if err != nil {
		d.log.Warn("peer connection rejected", "addr", addr.String(), "err", err,
			"note", "further rejections from this host are not logged for "+rejectionQuiet.String())
	}
}

// dialLoop keeps a link to the peer node open while the daemon runs.
func (d *Daemon) dialLoop(name, addr string) {
	retry := 100 * time.Millisecond
	var lastErr string
	for {
		select {
		case <-d.quit:
			return
		default:
		}
		pc, err := d.dialPeer(addr)
		if err == nil && pc.Peer != name {
			pc.Close()
			err = fmt.Errorf("node %q answered where node %q was expected", pc.Peer, name)
		}
		if err != nil {
			if errors.Is(err, peer.ErrAuth) {
				d.metrics.authFailures.Inc()
			}
			if err.Error() != lastErr {
				d.log.Warn("cannot connect to peer", "node", name, "addr", addr, "err", err)
				lastErr = err.Error()
			}
			select {
			case <-d.quit:
				return
			case <-time.After(retry):
			}
			retry = min(2*retry, time.Second)
			continue
		}
		lastErr, retry = "", 100*time.Millisecond
		l := d.addLink(pc)
		select {
		case <-d.quit:
			return
		case <-l.done:
		}
	}
}

// addLink makes pc the link to its node, replacing an older one.
func (d *Daemon) addLink(pc *peer.Conn) *link {
	l := newLink(pc.Peer, pc, d.cfg.Heartbeat, d.linkDown)
	d.linksMu.Lock()
	if d.linksClosed {
		d.linksMu.Unlock()
		l.down(errors.New("svmd is stopping"))
		return l
	}
	old := d.links[pc.Peer]
	d.links[pc.Peer] = l
	d.linksMu.Unlock()
	if old != nil {
		d.log.Info("peer link replaced by a new connection", "node", pc.Peer)
		old.down(errors.New("replaced by a new connection"))
	}
	d.metrics.peerUp.WithLabelValues(pc.Peer).Set(1)
	d.log.Info("peer connected", "node", pc.Peer, "addr", pc.RemoteAddr().String())
	d.spawn(l.run)
	d.spawn(func() { d.readLink(l) })
	return l
}

// readLink hands the frames of a peer to the daemon. A peer silent for the
// failure timeout, or a frame the daemon cannot take, ends the link.
func (d *Daemon) readLink(l *link) {
	defer d.survive("node "+l.node+"'s frames", func() { l.down(errors.New("svmd failed on a frame from it (see its log)")) })
	for {
		l.conn.SetReadDeadline(time.Now().Add(d.cfg.FailureTimeout))
		kind, body, err := l.conn.Recv()
		if err != nil {
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout():
				err = fmt.Errorf("no heartbeat for %v", d.cfg.FailureTimeout)
			case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
				err = fmt.Errorf("its svmd closed the connection (%w)", err)
			}
			l.down(err)
			return
		}
		if err := d.handle(l.node, kind, body); err != nil {
			l.down(fmt.Errorf("bad %s frame: %w", kindName(kind), err))
			return
		}
	}
}

// linkDown ends every job that needed the link.
func (d *Daemon) linkDown(l *link, err error) {
	d.linksMu.Lock()
	current := d.links[l.node] == l
	if current {
		delete(d.links, l.node)
	}
	d.linksMu.Unlock()
	if !current {
		return
	}
	d.metrics.peerUp.WithLabelValues(l.node).Set(0)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopping {
		return
	}
	d.log.Warn("peer lost", "node", l.node, "err", err)
	msg := fmt.Sprintf("node %s lost: %v", l.node, err)
	for _, h := range d.heads {
		if slices.Contains(h.nodes, l.node) {
			h.stopped[l.node] = true
			d.headFail(h, 1, msg)
			d.headStop(h, msg)
		}
	}
	for _, p := range d.parts {
		if p.head == l.node {
			p.failure = msg
			d.partStop(p)
		}
	}
	for id, w := range d.steps {
		if slices.Contains(w.join.Nodes, l.node) {
			d.stepRefuse(id, fmt.Sprintf("job %s failed: %s", id, msg))
		}
	}
	for _, g := range d.gathers {
		if slices.Contains(g.first.Nodes, l.node) {
			d.gatherFail(g, msg)
		}
	}
}

// handle takes one frame from node.
func (d *Daemon) handle(node string, kind peer.Kind, body []byte) error {
	if kind == kindHeartbeat {
		return nil
	}
	if kind == kindJobMessage {
		return d.jobMessage(node, body)
	}
	var err error
	d.mu.Lock()
	defer d.mu.Unlock()
	switch kind {
	case kindJobStart:
		var m jobStart
		if err = decode(body, &m); err == nil {
			d.partStart(node, m)
		}
	case kindJobRun:
		var m jobRef
		if err = decode(body, &m); err == nil {
			if p := d.parts[m.ID]; p != nil && p.head == node {
				d.partRun(p)
			}
		}
	case kindJobStop:
		var m jobStop
		if err = decode(body, &m); err == nil {
			if w := d.steps[m.ID]; w != nil && w.join.Nodes[0] == node {
				d.stepRefuse(m.ID, m.Reason)
			}
			p := d.parts[m.ID]
			switch {
			case p == nil:
				// Its part never started here (it failed to): nothing to
				// wait for.
				d.sendTo(node, kindJobStopped, encode(jobStopped{ID: m.ID}))
			case p.head == node:
				p.failure = m.Reason
				d.partStop(p)
			}
		}
	case kindJobReady:
		var m jobReady
		if err = decode(body, &m); err == nil {
			if h := d.headOf(m.ID, node); h != nil {
				d.headReady(h, node, m.Err)
			}
		}
	case kindOutput:
		var m output
		if err = decode(body, &m); err == nil {
			if h := d.headOf(m.ID, node); h != nil {
				d.headOutput(h, body)
			}
		}
	case kindRankExit:
		var m rankExit
		if err = decode(body, &m); err == nil {
			if h := d.headOf(m.ID, node); h != nil {
				err = d.headRankExit(h, node, m)
			}
		}
	case kindJobFailed:
		var m jobFailed
		if err = decode(body, &m); err == nil {
			if h := d.headOf(m.ID, node); h != nil {
				d.headFail(h, 1, m.Reason)
				d.headStop(h, m.Reason)
			}
			if g := d.gathers[m.ID]; g != nil && slices.Contains(g.joined, node) {
				d.gatherFail(g, m.Reason)
			}
		}
	case kindStepPart:
		var m stepPart
		if err = decode(body, &m); err == nil {
			d.stepPartArrived(node, m)
		}
	case kindJobStopped:
		var m jobStopped
		if err = decode(body, &m); err == nil {
			if h := d.headOf(m.ID, node); h != nil && !h.stopped[node] {
				h.stopped[node] = true
				h.ranks = append(h.ranks, m.Ranks...)
				d.headCheckFinished(h)
			}
		}
	default:
		err = fmt.Errorf("unexpected frame kind %d", kind)
	}
	return err
}

// headOf is the job this node heads with id, if node takes part in it.
func (d *Daemon) headOf(id, node string) *headJob {
	h := d.heads[id]
	if h == nil || !slices.Contains(h.nodes, node) {
		return nil
	}
	return h
}

// acceptControl takes svmf's connections.
func (d *Daemon) acceptControl() {
	for {
		c, err := d.ctlLn.AcceptUnix()
		if err != nil {
			return
		}
		d.spawn(func() { d.serveControl(c) })
	}
}

// Bounds on the control socket, which every local user may connect to.
// A job's svmf holds its connection while the job runs; a connection
// whose submission svmd has not read yet can make it hold up to
// MaxRequest bytes for up to requestTimeout.
const (
	maxUserConnections = 32
	maxUserPending     = 4
	maxPending         = 64
	requestTimeout     = 10 * time.Second
)

// admitControl counts a new connection of user uid, or says why it is
// refused.
func (d *Daemon) admitControl(uid uint32) error {
	d.ctlMu.Lock()
	defer d.ctlMu.Unlock()
	switch {
	case d.ctlOpen[uid] >= maxUserConnections:
		return fmt.Errorf("uid %d has %d connections to svmd on node %s open, the most one user may have (each running job holds one)",
			uid, d.ctlOpen[uid], d.cfg.Node)
	case d.ctlPending[uid] >= maxUserPending:
		return fmt.Errorf("uid %d has %d submissions to svmd on node %s under way, the most one user may have at once",
			uid, d.ctlPending[uid], d.cfg.Node)
	case d.ctlPendingAll >= maxPending:
		return fmt.Errorf("svmd on node %s has %d submissions under way, the most it takes at once: try again", d.cfg.Node, d.ctlPendingAll)
	}
	d.ctlOpen[uid]++
	d.ctlPending[uid]++
	d.ctlPendingAll++
	return nil
}

// controlRead says that uid's connection is no longer pending.
func (d *Daemon) controlRead(uid uint32) {
	d.ctlMu.Lock()
	defer d.ctlMu.Unlock()
	d.ctlPendingAll--
	if d.ctlPending[uid]--; d.ctlPending[uid] == 0 {
		delete(d.ctlPending, uid)
	}
}

// controlClosed says that uid's connection is gone.
func (d *Daemon) controlClosed(uid uint32) {
	d.ctlMu.Lock()
	defer d.ctlMu.Unlock()
	if d.ctlOpen[uid]--; d.ctlOpen[uid] == 0 {
		delete(d.ctlOpen, uid)
	}
}

// serveControl runs one submission: the job spec, then cancellations
// until the job ends or svmf goes.
func (d *Daemon) serveControl(c *net.UnixConn) {
	cred, err := applink.PeerCred(c)
	if err != nil {
		c.Close()
		d.log.Warn("job submission refused", "err", fmt.Errorf("reading the submitter's credentials: %w", err))
		return
	}
	if err := d.admitControl(cred.Uid); err != nil {
		d.log.Warn("job submission refused", "uid", cred.Uid, "pid", cred.Pid, "err", err)
		// The frame fits in the socket's buffer: this never waits for a
		// reader.
		c.SetWriteDeadline(time.Now().Add(time.Second))
		c.Write(peer.AppendFrame(nil, kindExit, encode(exit{Code: 2, Message: err.Error()})))
		c.Close()
		return
	}
	defer d.controlClosed(cred.Uid)
	pending := true
	defer func() {
		if pending {
			d.controlRead(cred.Uid)
		}
	}()
	pc := peer.Local(c, "svmf")
	pc.SetMaxFrame(MaxRequest)
	ctl := newLink(fmt.Sprintf("svmf (pid %d)", cred.Pid), pc, 0, nil)
	d.spawn(ctl.run)
	defer d.survive("a job submission", func() { ctl.down(errors.New("svmd failed on the submission (see its log)")) })
	refuse := func(err error) {
		d.log.Warn("job submission refused", "uid", cred.Uid, "pid", cred.Pid, "err", err)
		ctl.send(kindExit, encode(exit{Code: 2, Message: err.Error()}))
		ctl.flush(5 * time.Second)
		ctl.down(errors.New("refused"))
	}
	pc.SetReadDeadline(time.Now().Add(requestTimeout))
	kind, body, err := pc.Recv()
	pending = false
	d.controlRead(cred.Uid)
	if errors.Is(err, peer.ErrFrameTooLarge) {
		refuse(fmt.Errorf("job submission: %w", err))
		return
	}
	if err != nil {
		ctl.down(err)
		return
	}
	pc.SetReadDeadline(time.Time{})
	if kind == kindStepJoin {
		d.serveStep(pc, ctl, cred, body, refuse)
		return
	}
	if kind != kindSubmit {
		refuse(fmt.Errorf("the first frame must submit a job, not be a %s frame", kindName(kind)))
		return
	}
	spec, err := decodeSubmission(body, d.cfg.MaxRanks)
	if err != nil {
		refuse(fmt.Errorf("svmd on node %s: %w", d.cfg.Node, err))
		return
	}
	d.awaitLinks(spec.Hosts)
	var h *headJob
	d.withLock(func() { h, err = d.submit(spec, cred.Uid, cred.Gid, ctl) })
	if err != nil {
		refuse(err)
		return
	}
	for {
		kind, body, err := pc.Recv()
		d.withLock(func() {
			switch {
			case err != nil:
				if !h.finished {
					d.headFail(h, 1, "svmf, which submitted the job, went away")
					d.headStop(h, "svmf went away")
				}
			case kind == kindCancel:
				var m cancel
				if decode(body, &m) == nil && !h.finished {
					if m.Signal < 1 || m.Signal > 64 {
						m.Signal = int(syscall.SIGTERM) // from a hand-made client
					}
					sig := syscall.Signal(m.Signal)
					d.headFail(h, 128+m.Signal, fmt.Sprintf("interrupted by %v", sig))
					d.headStop(h, fmt.Sprintf("interrupted by %v", sig))
				}
			}
		})
		if err != nil {
			return
		}
	}
}

// serveStep runs the part of a Slurm step that svmf slurm-engine (of
// cred) joins here, until the step ends or svmf slurm-engine goes.
func (d *Daemon) serveStep(pc *peer.Conn, ctl *link, cred *unix.Ucred, body []byte, refuse func(error)) {
	var j StepJoin
	err := decode(body, &j)
	if err == nil {
		err = j.Check(d.cfg.Node, d.cfg.MaxRanks)
	}
	if err != nil {
		refuse(fmt.Errorf("svmd on node %s: step join: %w", d.cfg.Node, err))
		return
	}
	hosts := make([]HostSlots, len(j.Nodes))
	for i, n := range j.Nodes {
		hosts[i].Node = n
	}
	d.awaitLinks(hosts)
	d.withLock(func() { err = d.stepJoin(j, cred.Uid, cred.Gid, cred.Pid, ctl) })
	if err != nil {
		refuse(err)
		return
	}
	// svmf slurm-engine says nothing more: its connection ends with it.
	pc.Recv()
	ctl.down(errors.New("svmf slurm-engine went away"))
	d.withLock(func() { d.stepAgentGone(stepJobID(j.ID), ctl, cred.Pid) })
}

// withLock runs f under the daemon's mu, which a panic in f (that survive
// recovers from) does not leave locked.
func (d *Daemon) withLock(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f()
}

// survive, deferred by a goroutine serving one connection, turns a panic
// into a log line and the end of that connection (cleanup), so that a bug
// met on one user's input does not end every job of the node. It is the
// last line of defence: what arrives is checked before it is used.
func (d *Daemon) survive(what string, cleanup func()) {
	if r := recover(); r != nil {
		d.log.Error("internal error serving "+what+"; connection closed", "panic", r, "stack", string(debug.Stack()))
		cleanup()
	}
}

// awaitLinks gives the links to a job's peer nodes up to the failure
// timeout to come up: a job submitted just after a node restarted should
// not fail because the nodes have not reconnected yet.
func (d *Daemon) awaitLinks(hosts []HostSlots) {
	deadline := time.Now().Add(d.cfg.FailureTimeout)
	for _, h := range hosts {
		if _, ok := d.cfg.Peers[h.Node]; !ok {
			continue
		}
		for d.linkTo(h.Node) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// nodesOf lists the distinct nodes of a placement, in order of their first
// rank.
func nodesOf(placement []string) []string {
	var nodes []string
	for _, n := range placement {
		if !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// describePlacement says where the ranks are: "n1: 0-1; n2: 2-3".
func describePlacement(placement []string) string {
	ranks := map[string][]int{}
	for r, n := range placement {
		ranks[n] = append(ranks[n], r)
	}
	var parts []string
	for _, n := range nodesOf(placement) {
		parts = append(parts, fmt.Sprintf("%s: %s", n, rankList(ranks[n])))
	}
	return strings.Join(parts, "; ")
}

// rankList writes sorted ranks with runs collapsed: "0-3,6".
func rankList(ranks []int) string {
	sort.Ints(ranks)
	var b strings.Builder
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", ranks[i], ranks[j])
		} else {
			fmt.Fprintf(&b, "%d", ranks[i])
		}
		i = j + 1
	}
	return b.String()
}
