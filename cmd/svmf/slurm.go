package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/svmcluster/svm/dsm/daemon"
	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/dsm/slurm"
	"github.com/svmcluster/svm/protocol"
	"github.com/svmcluster/svm/protocol/peer"
)

// slurmEngineCommand is svmf slurm-engine: the coherence engine of a Slurm
// job step for the step's ranks on this node, started by the step's first
// task here (package slurm) with the task's environment. A step across
// nodes has one on each, connected pairwise and authenticated with the
// cluster secret as svmd's nodes are. It ends when every rank of the step
// has closed; when one leaves without closing (killed), does not join in
// time, the engine fails, or a node is lost, it says so naming the rank and
// node, and closes, which ends every remaining rank's next call with an
// error. Where svmd runs on the node, the step runs through it instead
// (stepThroughDaemon).
func slurmEngineCommand(stderr io.Writer) (int, error) {
	step, err := slurm.FromEnv(os.Getenv)
	if err != nil {
		return 2, err
	}
	fs, f := runFlagSet(stderr)
	if err := fs.Parse(strings.Fields(os.Getenv(slurm.EnvFlags))); err != nil {
		return 2, fmt.Errorf("%s: %w", slurm.EnvFlags, err)
	}
	f.np = step.NProcs
	settings, err := f.settings()
	if err != nil {
		return 2, fmt.Errorf("%s: %w", slurm.EnvFlags, err)
	}
	if c := dialDaemon(os.Getenv); c != nil {
		return stepThroughDaemon(c, step, settings)
	}
	if err := os.Mkdir(step.Dir(), 0o700); err != nil {
		return 1, fmt.Errorf("job %s: engine directory: %w", step.ID(), err)
	}
	defer os.RemoveAll(step.Dir())
	cfg := engine.Config{Settings: settings, Socket: step.Socket(), Ranks: step.LocalRanks}
	var m *mesh
	if len(step.Nodes) > 1 {
		if m, err = connectMesh(step, os.Getenv); err != nil {
			return 1, fmt.Errorf("job %s: node %s: %w", step.ID(), step.Node, err)
		}
		defer m.close()
		cfg.Remote = m
	}
	// The ranks join once the engine is ready.
	collectLessOften()
	eng, err := engine.New(cfg)
	if err != nil {
		return 1, fmt.Errorf("job %s: node %s: %w", step.ID(), step.Node, err)
	}
	defer eng.Close()
	if err := os.WriteFile(step.Ready(), nil, 0o600); err != nil {
		return 1, fmt.Errorf("job %s: %w", step.ID(), err)
	}
	joinBy := time.Now().Add(step.JoinTimeout)
	events := make(chan meshEvent, 1)
	if m != nil {
		events = m.serve(eng)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	engDone := make(chan error, 1)
	go func() { engDone <- eng.Run(ctx) }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()

	fail := func(cause string) (int, error) {
		if m != nil {
			m.broadcast(kindStepFailed, []byte(fmt.Sprintf("node %s: %s", step.Node, cause)))
		}
		return 1, fmt.Errorf("job %s failed: %s; stopping the step", step.ID(), cause)
	}
	departed := func() string {
		var msgs []string
		for _, d := range eng.Departed() {
			msgs = append(msgs, fmt.Sprintf("rank %d on node %s (pid %d) left the job without closing it (killed, or it exited early)", d.Rank, step.Node, d.Pid))
		}
		return strings.Join(msgs, "; ")
	}
	localDone := false
	doneNodes := map[string]bool{}
	for {
		if localDone && (m == nil || len(doneNodes) == len(m.peers)) {
			return 0, nil
		}
		select {
		case err := <-engDone:
			engDone = nil
			if err != nil {
				if d := departed(); d != "" {
					return fail(d + "; engine: " + err.Error())
				}
				return fail("node " + step.Node + ": engine: " + err.Error())
			}
			localDone = true
			if m != nil {
				m.broadcast(kindStepDone, nil)
			}
		case <-tick.C:
			if d := departed(); d != "" {
				return fail(d)
			}
			if late := eng.Waiting(); len(late) > 0 && time.Now().After(joinBy) {
				return fail(slurm.LateRanks(step.Node, late, step.JoinTimeout))
			}
		case ev := <-events:
			switch {
			case ev.err != nil:
				return fail(ev.err.Error())
			case ev.done:
				doneNodes[ev.node] = true
			}
		case s := <-sigs:
			return 128 + int(s.(syscall.Signal)), fmt.Errorf("job %s: the engine on node %s was stopped by %v", step.ID(), step.Node, s)
		}
	}
}

// dialDaemon connects to the control socket of the svmd on this node, if
// one answers: at $SVM_DAEMON if set, else where a node service's is
// (/run/svm), else where this user's own svmd's would be. Nil: no svmd.
func dialDaemon(getenv func(string) string) net.Conn {
	dirs := []string{"/run/svm", daemon.DefaultSocketDir()}
	if d := getenv("SVM_DAEMON"); d != "" {
		dirs = []string{d}
	}
	for _, dir := range dirs {
		if c, err := net.Dial("unix", filepath.Join(dir, daemon.ControlSocket)); err == nil {
			return c
		}
	}
	return nil
}

// stepThroughDaemon runs this node's part of the step through the node's
// svmd (c): svmd runs the engine for the node's ranks and, for a step
// across nodes, connects it with the other nodes' svmd. Once every node
// has joined, the engine's socket is linked from the step's directory
// where the ranks look for it (package slurm). It ends as svmd says the
// step ended, or by a signal, which makes svmd end the step.
func stepThroughDaemon(c net.Conn, step slurm.Step, settings engine.Settings) (int, error) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	defer os.RemoveAll(step.Dir())
	j := daemon.StepJoin{ID: step.ID(), Node: step.Node, Nodes: step.Nodes, Ranks: step.LocalRanks, Settings: settings,
		JoinTimeout: int64(step.JoinTimeout)}
	code, err := daemon.JoinStep(c, j, func(socket string) error {
		if err := os.Mkdir(step.Dir(), 0o700); err != nil {
			return fmt.Errorf("job %s: engine directory: %w", step.ID(), err)
		}
		if err := os.Symlink(socket, step.Socket()); err != nil {
			return fmt.Errorf("job %s: %w", step.ID(), err)
		}
		return os.WriteFile(step.Ready(), nil, 0o600)
	}, sigs)
	if err != nil {
		return code, fmt.Errorf("svmd on node %s: %w", step.Node, err)
	}
	return 0, nil
}

// The frames between the engines of a step.
const (
	kindStepHosts   = peer.FirstKind + iota // the ranks the sender hosts: u32 each
	kindStepMessage                         // from u32 | to u32 | encoded protocol message
	kindStepDone                            // every rank the sender hosts has closed
	kindStepFailed                          // the step failed: why
)

// How long the engines of a step have to find each other.
const meshTimeout = 45 * time.Second

// mesh connects the engine of one node of a step with the others' and is
// its engine's Remote.
type mesh struct {
	step  slurm.Step
	route []string // each rank's node
	peers map[string]*meshPeer
}

type meshPeer struct {
	node string
	conn *peer.Conn
	mu   sync.Mutex
	out  []byte // frames not yet written
	wake chan struct{}
}

type meshEvent struct {
	node string
	done bool
	err  error
}

// connectMesh connects this node's engine with every other node's of the
// step: node i listens on its port for the nodes after it and dials the
// nodes before it; each pair authenticates with the cluster secret and
// says which ranks it hosts.
func connectMesh(step slurm.Step, getenv func(string) string) (*mesh, error) {
	secretFile := getenv(slurm.EnvSecretFile)
	if secretFile == "" {
		secretFile = slurm.DefaultSecretFile
	}
	secret, err := daemon.ReadSecret(secretFile)
	if err != nil {
		return nil, fmt.Errorf("a step across nodes needs the cluster secret (install it as for svmd, or set %s): %w", slurm.EnvSecretFile, err)
	}
	port, err := step.Port(getenv)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		return nil, fmt.Errorf("listening for the step's other engines (choose another port with %s): %w", slurm.EnvPort, err)
	}
	defer ln.Close()
	m := &mesh{step: step, route: make([]string, step.NProcs), peers: map[string]*meshPeer{}}
	deadline := time.Now().Add(meshTimeout)
	type result struct {
		pc  *peer.Conn
		err error
	}
	results := make(chan result, len(step.Nodes))
	for i, node := range step.Nodes[:step.NodeIndex] {
		go func() {
			p, err := step.PortOf(i, getenv)
			if err != nil {
				results <- result{nil, err}
				return
			}
			for {
				pc, err := peer.Dial(net.JoinHostPort(node, fmt.Sprint(p)), step.Node, secret)
				if err == nil || errors.Is(err, peer.ErrAuth) || time.Now().After(deadline) {
					results <- result{pc, err}
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	go func() {
		for range len(step.Nodes) - 1 - step.NodeIndex {
			ln.(*net.TCPListener).SetDeadline(deadline)
			c, err := ln.Accept()
			if err != nil {
				results <- result{nil, err}
				return
			}
			pc, err := peer.Server(c, step.Node, secret)
			if err != nil {
				c.Close()
			}
			results <- result{pc, err}
		}
	}()
	var errs []error
	for range len(step.Nodes) - 1 {
		r := <-results
		if r.err == nil {
			r.err = m.add(r.pc)
		}
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		m.close()
		return nil, fmt.Errorf("connecting to the step's other engines: %w", err)
	}
	for _, r := range step.LocalRanks {
		m.route[r] = step.Node
	}
	for r, node := range m.route {
		if node == "" {
			m.close()
			return nil, fmt.Errorf("no node hosts rank %d", r)
		}
	}
	return m, nil
}

// add takes a connected engine: it tells it the ranks here, and learns its.
func (m *mesh) add(pc *peer.Conn) error {
	if !m.isPeer(pc.Peer) || m.peers[pc.Peer] != nil {
		pc.Close()
		return fmt.Errorf("node %q is not another node of the step", pc.Peer)
	}
	var hosts []byte
	for _, r := range m.step.LocalRanks {
		hosts = binary.LittleEndian.AppendUint32(hosts, uint32(r))
	}
	pc.SetReadDeadline(time.Now().Add(meshTimeout))
	kind, body, err := func() (peer.Kind, []byte, error) {
		if err := pc.Send(kindStepHosts, hosts); err != nil {
			return 0, nil, err
		}
		return pc.Recv()
	}()
	pc.SetReadDeadline(time.Time{})
	if err == nil && (kind != kindStepHosts || len(body)%4 != 0) {
		err = errors.New("it did not say which ranks it hosts")
	}
	for i := 0; err == nil && i < len(body); i += 4 {
		r := int(binary.LittleEndian.Uint32(body[i:]))
		if r >= len(m.route) || m.route[r] != "" {
			err = fmt.Errorf("it hosts rank %d, out of range or hosted twice", r)
			break
		}
		m.route[r] = pc.Peer
	}
	if err != nil {
		pc.Close()
		return fmt.Errorf("node %s: %w", pc.Peer, err)
	}
	m.peers[pc.Peer] = &meshPeer{node: pc.Peer, conn: pc, wake: make(chan struct{}, 1)}
	return nil
}

func (m *mesh) isPeer(node string) bool {
	for _, n := range m.step.Nodes {
		if n == node && n != m.step.Node {
			return true
		}
	}
	return false
}

// serve delivers the other engines' messages to eng and writes this one's
// to them; the channel hears when a node is done or fails, or is lost.
func (m *mesh) serve(eng *engine.Engine) chan meshEvent {
	events := make(chan meshEvent, 4*len(m.peers))
	for _, p := range m.peers {
		go m.read(p, eng, events)
		go p.write(events)
	}
	return events
}

func (m *mesh) read(p *meshPeer, eng *engine.Engine, events chan<- meshEvent) {
	done := false
	for {
		kind, body, err := p.conn.Recv()
		switch {
		case err != nil:
			if !done {
				events <- meshEvent{node: p.node, err: fmt.Errorf("node %s lost: %w", p.node, err)}
			}
			return
		case kind == kindStepDone:
			done = true
			events <- meshEvent{node: p.node, done: true}
		case kind == kindStepFailed:
			events <- meshEvent{node: p.node, err: errors.New(string(body))}
			return
		case kind == kindStepMessage && len(body) >= 8:
			from, to := int(binary.LittleEndian.Uint32(body)), int(binary.LittleEndian.Uint32(body[4:]))
			if from >= len(m.route) || m.route[from] != p.node {
				events <- meshEvent{node: p.node, err: fmt.Errorf("node %s sent a message from rank %d, which it does not host", p.node, from)}
				return
			}
			msg, err := protocol.Decode(body[8:])
			if err == nil {
				err = eng.Deliver(protocol.Envelope{From: from, To: to, Msg: msg}, len(body)-8)
			}
			if err != nil {
				events <- meshEvent{node: p.node, err: fmt.Errorf("a message from rank %d on node %s: %w", from, p.node, err)}
				return
			}
		default:
			events <- meshEvent{node: p.node, err: fmt.Errorf("node %s sent a bad frame (kind %d, %d bytes)", p.node, kind, len(body))}
			return
		}
	}
}

// Send queues a message for the engine of the rank it is for; it never
// waits for that engine.
func (m *mesh) Send(env protocol.Envelope, encoded []byte) error {
	if env.To < 0 || env.To >= len(m.route) || m.peers[m.route[env.To]] == nil {
		return fmt.Errorf("no node hosts rank %d", env.To)
	}
	body := make([]byte, 8, 8+len(encoded))
	binary.LittleEndian.PutUint32(body, uint32(env.From))
	binary.LittleEndian.PutUint32(body[4:], uint32(env.To))
	m.peers[m.route[env.To]].queue(kindStepMessage, append(body, encoded...))
	return nil
}

func (m *mesh) broadcast(kind peer.Kind, body []byte) {
	for _, p := range m.peers {
		p.queue(kind, body)
	}
}

// close sends what is queued (a bounded time) and closes the connections.
func (m *mesh) close() {
	deadline := time.Now().Add(time.Second)
	for _, p := range m.peers {
		for time.Now().Before(deadline) {
			p.mu.Lock()
			empty := len(p.out) == 0
			p.mu.Unlock()
			if empty {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		p.conn.Close()
	}
}

func (p *meshPeer) queue(kind peer.Kind, body []byte) {
	p.mu.Lock()
	p.out = peer.AppendFrame(p.out, kind, body)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// write writes the queued frames, in batches, until the connection fails.
func (p *meshPeer) write(events chan<- meshEvent) {
	var buf []byte
	for range p.wake {
		p.mu.Lock()
		buf, p.out = p.out, buf[:0]
		p.mu.Unlock()
		if err := p.conn.WriteFrames(buf); err != nil {
			events <- meshEvent{node: p.node, err: fmt.Errorf("node %s lost: %w", p.node, err)}
			return
		}
	}
}
