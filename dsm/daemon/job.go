package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/dsm/launch"
	"github.com/svmcluster/svm/protocol"
	"github.com/svmcluster/svm/protocol/peer"
)

// headJob is a job as the node it was submitted to sees it. Its fields are
// under the daemon's mu.
type headJob struct {
	id        string
	spec      JobSpec
	placement []string
	nodes     []string
	ctl       *link // to svmf
	ready     map[string]bool
	exited    []bool
	nexited   int
	// code and failures: the job's exit status and what went wrong, the
	// first cause first.
	code     int
	failures []string
	stopping bool
	stopped  map[string]bool
	finished bool
	started  time.Time
	// ranks are the counters of the ranks whose nodes have stopped.
	ranks []RankFigures
}

// maxOutputBacklog bounds the output queued for an svmf that does not
// read it.
const maxOutputBacklog = 256 << 20

// submit starts a job, checked already, for the user uid:gid whose svmf
// talks through ctl.
func (d *Daemon) submit(spec JobSpec, uid, gid uint32, ctl *link) (*headJob, error) {
	if d.stopping {
		return nil, fmt.Errorf("svmd on node %s is shutting down", d.cfg.Node)
	}
	if err := d.mayRunAs(uid); err != nil {
		return nil, err
	}
	placement, err := Place(spec.Settings.NProcs, spec.Hosts)
	if err != nil {
		return nil, err
	}
	nodes := nodesOf(placement)
	for _, n := range nodes {
		if d.linkTo(n) != nil {
			continue
		}
		if addr, ok := d.cfg.Peers[n]; ok {
			return nil, fmt.Errorf("node %s is not connected: its svmd at %s is down or unreachable (see this node's log)", n, addr)
		}
		return nil, fmt.Errorf("node %s is not %s nor one of its peers (%s)", n, d.cfg.Node, strings.Join(d.peerNames(), ", "))
	}
	d.seq++
	h := d.newHead(fmt.Sprintf("%s.%s.%d", d.cfg.Node, d.run, d.seq), spec, placement, ctl)
	d.log.Info("job submitted", "job", h.id, "uid", uid, "ranks", spec.Settings.NProcs, "program", spec.Program,
		"placement", describePlacement(placement))
	ctl.send(kindAccepted, encode(accepted{ID: h.id, Placement: placement}))
	d.headStart(h, jobStart{ID: h.id, Head: d.cfg.Node, Placement: placement, Spec: spec, UID: uid, GID: gid})
	return h, nil
}

// mayRunAs refuses a job of user uid that this svmd cannot run.
func (d *Daemon) mayRunAs(uid uint32) error {
	if os.Getuid() != 0 && int(uid) != os.Getuid() {
		return fmt.Errorf("svmd on node %s runs as uid %d, not as root, so it runs jobs only for uid %d, not for uid %d", d.cfg.Node, os.Getuid(), os.Getuid(), uid)
	}
	return nil
}

// newHead records a job this node heads; ctl is its svmf, nil for a Slurm
// step (whose nodes' svmf slurm-engine hear how it ended from their node).
func (d *Daemon) newHead(id string, spec JobSpec, placement []string, ctl *link) *headJob {
	h := &headJob{
		id: id, spec: spec, placement: placement, nodes: nodesOf(placement), ctl: ctl,
		ready: map[string]bool{}, exited: make([]bool, spec.Settings.NProcs), stopped: map[string]bool{}, started: time.Now(),
	}
	d.heads[h.id] = h
	d.metrics.jobsRunning.Inc()
	return h
}

// headStart starts the job's part on every node.
func (d *Daemon) headStart(h *headJob, start jobStart) {
	body := encode(start)
	for _, n := range h.nodes {
		if err := d.sendTo(n, kindJobStart, body); err != nil {
			h.stopped[n] = true
			d.headFail(h, 1, fmt.Sprintf("starting the job on node %s: %v", n, err))
			d.headStop(h, "")
			break
		}
	}
}

func (d *Daemon) peerNames() []string {
	var names []string
	for n := range d.cfg.Peers {
		names = append(names, n)
	}
	if len(names) == 0 {
		return []string{"it has none"}
	}
	return names
}

func (d *Daemon) headReady(h *headJob, node, failure string) {
	if h.stopping {
		return
	}
	if failure != "" {
		d.headFail(h, 1, fmt.Sprintf("node %s: %s", node, failure))
		d.headStop(h, "")
		return
	}
	h.ready[node] = true
	if len(h.ready) < len(h.nodes) {
		return
	}
	for _, n := range h.nodes {
		if err := d.sendTo(n, kindJobRun, encode(jobRef{ID: h.id})); err != nil {
			d.headFail(h, 1, fmt.Sprintf("running the job on node %s: %v", n, err))
			d.headStop(h, "")
			return
		}
	}
}

func (d *Daemon) headOutput(h *headJob, body []byte) {
	if h.finished {
		return
	}
	h.ctl.mu.Lock()
	backlog := h.ctl.queued
	h.ctl.mu.Unlock()
	if backlog > maxOutputBacklog {
		if !h.stopping {
			d.headFail(h, 1, fmt.Sprintf("svmf left %d MiB of the job's output unread", backlog>>20))
			d.headStop(h, "")
		}
		return
	}
	h.ctl.send(kindOutput, body)
}

func (d *Daemon) headRankExit(h *headJob, node string, m rankExit) error {
	if m.Rank < 0 || m.Rank >= len(h.placement) || h.placement[m.Rank] != node {
		return fmt.Errorf("exit of rank %d, which node %s does not host", m.Rank, node)
	}
	if h.exited[m.Rank] {
		return nil
	}
	h.exited[m.Rank] = true
	h.nexited++
	if m.Code != 0 && !h.stopping {
		d.headFail(h, m.Code, fmt.Sprintf("rank %d on node %s (pid %d) %s", m.Rank, node, m.Pid, m.How))
		d.headStop(h, "")
	}
	if h.nexited == len(h.placement) {
		d.headStop(h, "")
	}
	return nil
}

// headFail records what went wrong; the first failure sets the status.
func (d *Daemon) headFail(h *headJob, code int, msg string) {
	if h.finished {
		return
	}
	if h.code == 0 {
		h.code = max(code, 1)
	}
	h.failures = append(h.failures, msg)
}

// headStop stops the job on every node that has not said it stopped.
func (d *Daemon) headStop(h *headJob, reason string) {
	if h.stopping {
		return
	}
	h.stopping = true
	if reason != "" {
		d.log.Info("stopping job", "job", h.id, "reason", reason)
	}
	if h.ctl == nil && h.code != 0 {
		// A Slurm step: each node tells its svmf slurm-engine why.
		reason = fmt.Sprintf("job %s failed: %s", h.id, strings.Join(h.failures, "; "))
	}
	for _, n := range h.nodes {
		if h.stopped[n] {
			continue
		}
		if err := d.sendTo(n, kindJobStop, encode(jobStop{ID: h.id, Reason: reason})); err != nil {
			h.stopped[n] = true
		}
	}
	// A node that says nothing (it may be the one failing) does not keep
	// the job's user waiting past the time its ranks get to stop.
	grace := d.cfg.KillAfter
	if h.spec.KillAfter > 0 {
		grace = time.Duration(h.spec.KillAfter)
	}
	time.AfterFunc(grace+d.cfg.FailureTimeout, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if h.finished {
			return
		}
		var silent []string
		for _, n := range h.nodes {
			if !h.stopped[n] {
				silent = append(silent, n)
				h.stopped[n] = true
			}
		}
		d.headFail(h, 1, fmt.Sprintf("node %s did not confirm the job's end", strings.Join(silent, ", ")))
		d.headCheckFinished(h)
	})
	d.headCheckFinished(h)
}

// headCheckFinished ends the job for its user once every node has stopped.
func (d *Daemon) headCheckFinished(h *headJob) {
	if h.finished || !h.stopping {
		return
	}
	for _, n := range h.nodes {
		if !h.stopped[n] {
			return
		}
	}
	h.finished = true
	delete(d.heads, h.id)
	d.settled.Broadcast()
	d.metrics.jobsRunning.Dec()
	e := exit{Code: h.code, Ranks: h.ranks}
	if h.code != 0 {
		e.Message = fmt.Sprintf("job %s failed: %s", h.id, strings.Join(h.failures, "; "))
		d.metrics.jobsFailed.Inc()
		d.log.Warn("job failed", "job", h.id, "status", h.code, "cause", strings.Join(h.failures, "; "))
	} else {
		d.metrics.jobsFinished.Inc()
		d.log.Info("job finished", "job", h.id, "seconds", time.Since(h.started).Seconds())
	}
	if h.ctl != nil {
		endAgent(h.ctl, e)
	}
}

// partJob is the part of a job on this node: its engine and the ranks
// placed here. Its fields are under the daemon's mu.
type partJob struct {
	id, head  string
	placement []string
	spec      JobSpec
	ranks     []int
	uid       uint32
	dir       string
	eng       *engine.Engine
	cancel    context.CancelFunc
	cred      *syscall.Credential
	observer  *jobObserver
	procs     []*launch.Process
	running   int
	stopping  bool
	// agent, for a Slurm step, is its svmf slurm-engine on this node,
	// joinTimeout the time the ranks have to join the engine, and failure
	// why the step ended, if it failed.
	agent       *link
	joinTimeout int64
	failure     string
}

// partStart sets up this node's part of a job and tells the head whether
// it is ready.
func (d *Daemon) partStart(head string, m jobStart) {
	p, err := d.newPart(head, m)
	if err != nil {
		d.sendTo(head, kindJobReady, encode(jobReady{ID: m.ID, Err: err.Error()}))
		return
	}
	d.parts[p.id] = p
	d.history.jobs++
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		err := p.eng.Run(ctx)
		if errors.Is(err, context.Canceled) || err == nil && p.agent == nil {
			return
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		switch {
		case p.stopping:
		case err != nil:
			if p.agent != nil {
				// A step's rank that left can make the engine fail (no
				// rank left to end a barrier): it is the cause.
				d.stepDeparted(p, nil)
			}
			d.sendTo(p.head, kindJobFailed, encode(jobFailed{ID: p.id, Reason: fmt.Sprintf("node %s: engine: %v", d.cfg.Node, err)}))
		case p.agent != nil:
			d.stepClosed(p)
		}
	}()
	d.sendTo(head, kindJobReady, encode(jobReady{ID: m.ID}))
}

func (d *Daemon) newPart(head string, m jobStart) (*partJob, error) {
	if d.stopping {
		return nil, fmt.Errorf("svmd is shutting down")
	}
	if d.parts[m.ID] != nil || len(m.ID) > 255 {
		return nil, fmt.Errorf("job id %q is taken or too long", m.ID)
	}
	check := m.Spec.Check
	if m.Step {
		check = m.Spec.Settings.Check
	}
	if err := check(d.cfg.MaxRanks); err != nil {
		return nil, err
	}
	if len(m.Placement) != m.Spec.Settings.NProcs {
		return nil, fmt.Errorf("placement of %d ranks for a job of %d", len(m.Placement), m.Spec.Settings.NProcs)
	}
	p := &partJob{id: m.ID, head: head, placement: m.Placement, spec: m.Spec, uid: m.UID}
	if p.spec.KillAfter <= 0 {
		p.spec.KillAfter = int64(d.cfg.KillAfter)
	}
	for r, n := range m.Placement {
		if n == d.cfg.Node {
			p.ranks = append(p.ranks, r)
		}
	}
	if len(p.ranks) == 0 {
		return nil, fmt.Errorf("no ranks placed on this node")
	}
	if m.Step {
		w := d.steps[m.ID]
		if w == nil || w.join.Nodes[0] != head || w.uid != m.UID || !slices.Equal(p.ranks, slices.Sorted(slices.Values(w.join.Ranks))) {
			return nil, fmt.Errorf("these are not the ranks of step %s that joined here", m.ID)
		}
		p.agent, p.joinTimeout = w.agent, w.join.JoinTimeout
	}
	cred, err := d.credential(m.UID, m.GID)
	if err != nil {
		return nil, err
	}
	p.cred = cred
	p.dir = filepath.Join(d.cfg.SocketDir, jobDirPrefix+m.ID)
	if err := os.Mkdir(p.dir, 0o700); err != nil {
		return nil, fmt.Errorf("job directory: %w", err)
	}
	if err := os.Chown(p.dir, int(m.UID), int(m.GID)); err != nil && os.Getuid() == 0 {
		os.RemoveAll(p.dir)
		return nil, fmt.Errorf("job directory: %w", err)
	}
	cfg := engine.Config{
		Settings: m.Spec.Settings, Socket: engine.SocketPath(p.dir), Ranks: p.ranks,
		Owner: &engine.Owner{UID: int(m.UID), GID: int(m.GID)},
	}
	if len(p.ranks) < m.Spec.Settings.NProcs {
		cfg.Remote = &router{d: d, part: p}
	}
	p.observer = d.metrics.observer(p.id)
	cfg.Observer = p.observer
	if p.eng, err = engine.New(cfg); err != nil {
		os.RemoveAll(p.dir)
		d.metrics.forget(p.id)
		return nil, err
	}
	if p.agent != nil {
		// The step's svmf slurm-engine is the part's now.
		w := d.steps[p.id]
		delete(d.steps, p.id)
		w.timer.Stop()
	}
	return p, nil
}

// credential is who a job's ranks run as: the submitter, which only a
// daemon running as root can become.
func (d *Daemon) credential(uid, gid uint32) (*syscall.Credential, error) {
	self := os.Getuid()
	if self != 0 {
		if int(uid) != self {
			return nil, fmt.Errorf("svmd runs as uid %d, not as root, so it cannot run ranks as uid %d", self, uid)
		}
		return nil, nil
	}
	if uid == 0 {
		return nil, nil
	}
	cred := &syscall.Credential{Uid: uid, Gid: gid}
	if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		if ids, err := u.GroupIds(); err == nil {
			for _, id := range ids {
				if g, err := strconv.ParseUint(id, 10, 32); err == nil {
					cred.Groups = append(cred.Groups, uint32(g))
				}
			}
		}
	}
	return cred, nil
}

// jobDirPrefix begins the name of each job part's directory in the
// socket directory.
const jobDirPrefix = "job-"

// startFailure says why rank r did not start. Whether the program and the
// working directory will do is for the rank's own chdir and exec, as the
// job's user, to say; the errors they give would tell a missing file from
// one in a directory closed to that user, so every error of that kind
// reads the same, naming only what the user gave.
func (d *Daemon) startFailure(p *partJob, r int, err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOENT, syscall.EACCES, syscall.EPERM, syscall.ENOTDIR, syscall.EISDIR, syscall.ELOOP, syscall.ENAMETOOLONG:
			return fmt.Sprintf("node %s: uid %d cannot run %s in %s: the program must be an executable file, and the working directory a directory, that uid %d may use on node %s",
				d.cfg.Node, p.uid, p.spec.Program, p.spec.Dir, p.uid, d.cfg.Node)
		}
	}
	return fmt.Sprintf("node %s: starting rank %d: %v", d.cfg.Node, r, err)
}

// partRun starts the ranks placed here.
func (d *Daemon) partRun(p *partJob) {
	if p.stopping || p.procs != nil {
		return
	}
	if p.agent != nil {
		d.stepRun(p)
		return
	}
	head := d.linkTo(p.head)
	if head == nil {
		d.partStop(p)
		return
	}
	cpus, err := launch.Bindings(len(p.ranks), p.spec.Bind)
	if err != nil {
		head.send(kindJobFailed, encode(jobFailed{ID: p.id, Reason: fmt.Sprintf("node %s: %v", d.cfg.Node, err)}))
		d.partStop(p)
		return
	}
	for i, r := range p.ranks {
		spec := launch.Rank{
			Rank: r, NProcs: p.spec.Settings.NProcs, Socket: engine.SocketPath(p.dir),
			Program: p.spec.Program, Args: p.spec.Args, Env: p.spec.Env, Dir: p.spec.Dir,
			Stdout:     &outputWriter{link: head, id: p.id, rank: r, stream: stdout},
			Stderr:     &outputWriter{link: head, id: p.id, rank: r, stream: stderr},
			Credential: p.cred,
		}
		if cpus != nil {
			spec.Bind, spec.CPU = true, cpus[i]
		}
		proc, err := launch.Start(spec)
		if err != nil {
			head.send(kindJobFailed, encode(jobFailed{ID: p.id, Reason: d.startFailure(p, r, err)}))
			d.partStop(p)
			return
		}
		p.procs = append(p.procs, proc)
		p.running++
		go func() {
			<-proc.Done()
			code, how := 0, "exited with status 0"
			if err := proc.Err(); err != nil {
				code, how = launch.ExitCode(err), launch.DescribeExit(err)
			}
			head.send(kindRankExit, encode(rankExit{ID: p.id, Rank: r, Pid: proc.Cmd.Process.Pid, Code: code, How: how}))
			d.mu.Lock()
			defer d.mu.Unlock()
			p.running--
			if p.stopping && p.running == 0 {
				d.partFinish(p)
			}
		}()
	}
}

// partStop stops the ranks here; the part finishes once they are gone.
func (d *Daemon) partStop(p *partJob) {
	if p.stopping {
		return
	}
	p.stopping = true
	launch.Stop(p.procs, p.killAfter())
	if p.running == 0 {
		d.partFinish(p)
	}
}

// killAfter is how long the part's ranks get between SIGTERM and SIGKILL:
// the job's own setting, as svmf gave it.
func (p *partJob) killAfter() time.Duration {
	return time.Duration(p.spec.KillAfter)
}

// partFinish releases the part's engine and tells the head it is over.
func (d *Daemon) partFinish(p *partJob) {
	snaps := p.eng.Snapshot()
	d.history.retire(snaps, p.placement)
	delete(d.parts, p.id)
	d.settled.Broadcast()
	d.metrics.forget(p.id)
	if p.agent != nil {
		e := exit{}
		if p.failure != "" {
			e = exit{Code: 1, Message: p.failure}
		}
		endAgent(p.agent, e)
	}
	p.cancel()
	p.eng.Close()
	os.RemoveAll(p.dir)
	d.sendTo(p.head, kindJobStopped, encode(jobStopped{ID: p.id, Ranks: figuresOf(snaps)}))
}

// jobMessage hands a protocol message from a rank on node to the rank it
// is for here.
func (d *Daemon) jobMessage(node string, body []byte) error {
	id, from, to, msg, err := parseJobMessage(body)
	if err != nil {
		return err
	}
	d.mu.Lock()
	p := d.parts[id]
	d.mu.Unlock()
	if p == nil {
		return nil // the job has ended here
	}
	if from < 0 || from >= len(p.placement) || p.placement[from] != node {
		return fmt.Errorf("job %s: a message from rank %d, which node %s does not host", id, from, node)
	}
	m, err := protocol.Decode(msg)
	if err != nil {
		return fmt.Errorf("job %s: from rank %d: %w", id, from, err)
	}
	if err := p.eng.Deliver(protocol.Envelope{From: from, To: to, Msg: m}, len(msg)); err != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		if !p.stopping {
			d.sendTo(p.head, kindJobFailed, encode(jobFailed{ID: p.id, Reason: fmt.Sprintf("node %s: %v", d.cfg.Node, err)}))
			d.partStop(p)
		}
	}
	return nil
}

// router is a part's engine's way to the ranks on other nodes.
type router struct {
	d    *Daemon
	part *partJob
}

func (r *router) Send(env protocol.Envelope, encoded []byte) error {
	if env.To < 0 || env.To >= len(r.part.placement) {
		return fmt.Errorf("no rank %d", env.To)
	}
	node := r.part.placement[env.To]
	return r.d.sendTo(node, kindJobMessage, appendJobMessage(nil, r.part.id, env.From, env.To, encoded))
}

// outputWriter carries one stream of a rank's output to the job's head.
type outputWriter struct {
	link   *link
	id     string
	rank   int
	stream int
}

// outputPacing is how much of a rank's output may wait for the network
// before the rank waits in its writes.
const outputPacing = 4 << 20

func (w *outputWriter) Write(b []byte) (int, error) {
	written := len(b)
	for len(b) > 0 {
		n := min(len(b), peer.MaxFrame/2)
		// Once the link is gone the job is ending: the output has nowhere
		// to go, and the rank must not block on it.
		w.link.sendPaced(kindOutput, encode(output{ID: w.id, Rank: w.rank, Stream: w.stream, Data: b[:n]}), outputPacing)
		b = b[n:]
	}
	return written, nil
}
