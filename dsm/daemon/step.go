package daemon

// Slurm job steps run through svmd. srun starts a step's ranks, not svmd:
// on each node of the step, the step's first task there starts svmf
// slurm-engine (package dsm/slurm), which joins the node's part of the
// step to the node's svmd with the ranks Slurm put there and holds its
// connection while the step runs. The svmd of the step's first node heads
// the job: it gathers every node's part, checks that together they are the
// whole step, of one user, and starts the job as it starts a submitted one,
// except that no node starts ranks: once every part's engine is ready,
// each node tells its svmf slurm-engine where the engine listens, and the
// ranks join it by themselves. A node watches its engine for ranks that
// leave without closing, or do not join in time, and tells the head, which
// stops the step everywhere and tells every node's svmf slurm-engine why.

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/dsm/slurm"
)

// StepJoin is what svmf slurm-engine sends the svmd of its node: the
// node's part of a Slurm job step.
type StepJoin struct {
	// ID is the step's JOB.STEP.
	ID string
	// Node is this node's name to Slurm (SLURMD_NODENAME), which must be
	// its svmd's; Nodes are the step's nodes in order, each running svmd:
	// the first heads the job.
	Node  string
	Nodes []string
	// Ranks are the step's ranks on this node (SLURM_GTIDS).
	Ranks []int
	// Settings are the job's; NProcs is the step's size (SLURM_NTASKS).
	Settings engine.Settings
	// JoinTimeout is how long the step's nodes, then the ranks on each,
	// have to join (nanoseconds, slurm.EnvJoinTimeout).
	JoinTimeout int64
}

// stepPart is a node's part of a step, sent to the step's head.
type stepPart struct {
	Join     StepJoin
	UID, GID uint32
}

// stepReady tells svmf slurm-engine where the ranks join.
type stepReady struct {
	Socket string
}

var stepIDPattern = regexp.MustCompile(`^[0-9]{1,10}\.[0-9]{1,10}$`)

// Check reports the first thing wrong with a step's part on node: its
// settings (at most maxRanks ranks), its id, nodes, ranks and time to
// join.
func (j StepJoin) Check(node string, maxRanks int) error {
	if !stepIDPattern.MatchString(j.ID) {
		return fmt.Errorf("step %q: want JOB.STEP, two numbers", j.ID)
	}
	if err := j.Settings.Check(maxRanks); err != nil {
		return fmt.Errorf("step %s: %w", j.ID, err)
	}
	n := j.Settings.NProcs
	if j.Node != node {
		return fmt.Errorf("step %s: Slurm calls this node %q, its svmd %q: give svmd Slurm's node names (--node)", j.ID, j.Node, node)
	}
	if len(j.Nodes) == 0 || len(j.Nodes) > n || !slices.Contains(j.Nodes, j.Node) {
		return fmt.Errorf("step %s: %d nodes for %d ranks, this node %s among them: want 1 to %d, this node included", j.ID, len(j.Nodes), n, j.Node, n)
	}
	for i, name := range j.Nodes {
		if err := checkNodeName(name); err != nil {
			return fmt.Errorf("step %s: %w", j.ID, err)
		}
		if slices.Contains(j.Nodes[:i], name) {
			return fmt.Errorf("step %s: node %q is listed twice", j.ID, name)
		}
	}
	if len(j.Ranks) == 0 || len(j.Ranks) > n {
		return fmt.Errorf("step %s: %d ranks on this node in a step of %d: want 1 to %d", j.ID, len(j.Ranks), n, n)
	}
	for i, r := range j.Ranks {
		if r < 0 || r >= n {
			return fmt.Errorf("step %s: rank %d out of range [0,%d)", j.ID, r, n)
		}
		if slices.Contains(j.Ranks[:i], r) {
			return fmt.Errorf("step %s: rank %d is listed twice", j.ID, r)
		}
	}
	if t := time.Duration(j.JoinTimeout); t < time.Second || t > slurm.MaxJoinTimeout {
		return fmt.Errorf("step %s: %s %v: want 1s to %v", j.ID, slurm.EnvJoinTimeout, t, slurm.MaxJoinTimeout)
	}
	return nil
}

// stepJobID is the id of a step's job in svmd.
func stepJobID(step string) string { return "slurm-" + step }

// stepWait is a step's part on this node, joined by svmf slurm-engine,
// until the head starts the job. Under the daemon's mu.
type stepWait struct {
	join     StepJoin
	uid, gid uint32
	agent    *link // to svmf slurm-engine
	timer    *time.Timer
}

// stepGather is a step this node heads, while its nodes join. Under the
// daemon's mu.
type stepGather struct {
	id       string
	first    StepJoin // the first node's: the nodes and settings
	uid, gid uint32
	// placement is each rank's node, as the nodes say.
	placement []string
	joined    []string
	timer     *time.Timer
}

// stepJoin takes a step's part on this node from svmf slurm-engine (pid,
// of user uid:gid), checked already, and sends it to the step's head.
func (d *Daemon) stepJoin(j StepJoin, uid, gid uint32, pid int32, agent *link) error {
	if d.stopping {
		return fmt.Errorf("svmd on node %s is shutting down", d.cfg.Node)
	}
	if err := d.mayRunAs(uid); err != nil {
		return err
	}
	id := stepJobID(j.ID)
	if d.steps[id] != nil || d.parts[id] != nil {
		return fmt.Errorf("step %s has joined svmd on node %s already", j.ID, d.cfg.Node)
	}
	for _, n := range j.Nodes {
		if n != d.cfg.Node && d.linkTo(n) == nil {
			if _, ok := d.cfg.Peers[n]; ok {
				return fmt.Errorf("step %s: node %s is not connected: its svmd is down or unreachable (see the log of svmd on node %s)", j.ID, n, d.cfg.Node)
			}
			return fmt.Errorf("step %s: node %s is not one of the peers of svmd on node %s (%s)", j.ID, n, d.cfg.Node, strings.Join(d.peerNames(), ", "))
		}
	}
	w := &stepWait{join: j, uid: uid, gid: gid, agent: agent}
	d.steps[id] = w
	d.log.Info("step joined", "job", id, "uid", uid, "pid", pid, "ranks", rankList(slices.Clone(j.Ranks)), "head", j.Nodes[0])
	// The head answers within the join timeout; this bounds the wait
	// should it not.
	w.timer = time.AfterFunc(2*time.Duration(j.JoinTimeout)+d.cfg.FailureTimeout, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.steps[id] == w {
			d.stepRefuse(id, fmt.Sprintf("job %s failed: node %s, which heads the step, did not start it", id, j.Nodes[0]))
		}
	})
	if err := d.sendTo(j.Nodes[0], kindStepPart, encode(stepPart{Join: j, UID: uid, GID: gid})); err != nil {
		d.stepRefuse(id, fmt.Sprintf("job %s failed: %v", id, err))
	}
	return nil
}

// stepRefuse ends a step's part that has not started here, telling its
// svmf slurm-engine why.
func (d *Daemon) stepRefuse(id, msg string) {
	w := d.steps[id]
	if w == nil {
		return
	}
	delete(d.steps, id)
	w.timer.Stop()
	d.log.Warn("step refused", "job", id, "reason", msg)
	endAgent(w.agent, exit{Code: 1, Message: msg})
}

// endAgent sends svmf slurm-engine the step's end, then closes its
// connection.
func endAgent(agent *link, e exit) {
	agent.send(kindExit, encode(e))
	go func() {
		agent.flush(10 * time.Second)
		agent.down(errors.New("step over"))
	}()
}

// stepAgentGone runs when the connection of the svmf slurm-engine that
// joined step id here has ended: the step was cancelled, or it was killed.
func (d *Daemon) stepAgentGone(id string, agent *link, pid int32) {
	msg := fmt.Sprintf("node %s: svmf slurm-engine (pid %d) went away (the step was cancelled, or it was killed)", d.cfg.Node, pid)
	if w := d.steps[id]; w != nil && w.agent == agent {
		delete(d.steps, id)
		w.timer.Stop()
		d.sendTo(w.join.Nodes[0], kindJobFailed, encode(jobFailed{ID: id, Reason: msg}))
	}
	if p := d.parts[id]; p != nil && p.agent == agent && !p.stopping {
		d.sendTo(p.head, kindJobFailed, encode(jobFailed{ID: id, Reason: msg}))
	}
}

// stepPartArrived takes node's part of a step this node heads.
func (d *Daemon) stepPartArrived(node string, m stepPart) {
	j := m.Join
	id := stepJobID(j.ID)
	refuse := func(msg string) {
		d.sendTo(node, kindJobStop, encode(jobStop{ID: id, Reason: fmt.Sprintf("job %s failed: %s", id, msg)}))
	}
	if err := j.Check(node, d.cfg.MaxRanks); err != nil {
		refuse(err.Error())
		return
	}
	if j.Nodes[0] != d.cfg.Node {
		refuse(fmt.Sprintf("node %s does not head step %s", d.cfg.Node, j.ID))
		return
	}
	if d.stopping || d.heads[id] != nil {
		refuse(fmt.Sprintf("node %s joined step %s when it had started or ended", node, j.ID))
		return
	}
	g := d.gathers[id]
	if g == nil {
		g = &stepGather{id: id, first: j, uid: m.UID, gid: m.GID, placement: make([]string, j.Settings.NProcs)}
		d.gathers[id] = g
		timeout := time.Duration(j.JoinTimeout)
		g.timer = time.AfterFunc(timeout, func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.gathers[id] != g {
				return
			}
			var missing []string
			for _, n := range g.first.Nodes {
				if !slices.Contains(g.joined, n) {
					missing = append(missing, n)
				}
			}
			d.gatherFail(g, fmt.Sprintf("node %s did not join the step within %v (%s; is svmd running there?)",
				strings.Join(missing, ", "), timeout, slurm.EnvJoinTimeout))
		})
	}
	var problem string
	switch {
	case slices.Contains(g.joined, node):
		problem = fmt.Sprintf("node %s joined the step twice", node)
	case m.UID != g.uid:
		problem = fmt.Sprintf("its ranks on node %s run as uid %d, those on node %s as uid %d: a step is one user's", node, m.UID, g.first.Node, g.uid)
	case !slices.Equal(j.Nodes, g.first.Nodes):
		problem = fmt.Sprintf("node %s says the step's nodes are %v, node %s %v", node, j.Nodes, g.first.Node, g.first.Nodes)
	case !bytes.Equal(encode(j.Settings), encode(g.first.Settings)):
		problem = fmt.Sprintf("node %s and node %s give the step different settings (%s)", node, g.first.Node, slurm.EnvFlags)
	}
	for _, r := range j.Ranks {
		if problem == "" && g.placement[r] != "" {
			problem = fmt.Sprintf("rank %d is claimed by node %s and node %s", r, g.placement[r], node)
		}
	}
	if problem != "" {
		refuse(problem)
		d.gatherFail(g, problem)
		return
	}
	g.joined = append(g.joined, node)
	for _, r := range j.Ranks {
		g.placement[r] = node
	}
	if len(g.joined) < len(g.first.Nodes) {
		return
	}
	g.timer.Stop()
	delete(d.gathers, id)
	if r := slices.Index(g.placement, ""); r >= 0 {
		d.gatherFail(g, fmt.Sprintf("no node has rank %d", r))
		return
	}
	h := d.newHead(id, JobSpec{Settings: g.first.Settings}, g.placement, nil)
	d.log.Info("step started", "job", id, "uid", g.uid, "ranks", g.first.Settings.NProcs, "placement", describePlacement(g.placement))
	d.headStart(h, jobStart{ID: id, Head: d.cfg.Node, Placement: g.placement, Spec: h.spec, UID: g.uid, GID: g.gid, Step: true})
}

// gatherFail ends a step this node heads before it has started, on every
// node that has joined it.
func (d *Daemon) gatherFail(g *stepGather, msg string) {
	g.timer.Stop()
	delete(d.gathers, g.id)
	d.log.Warn("step failed", "job", g.id, "cause", msg)
	for _, n := range g.joined {
		d.sendTo(n, kindJobStop, encode(jobStop{ID: g.id, Reason: fmt.Sprintf("job %s failed: %s", g.id, msg)}))
	}
}

// stepRun lets the ranks of a step's part join its engine, and watches
// them: a rank that leaves without closing, or that has not joined in
// time, ends the step.
func (d *Daemon) stepRun(p *partJob) {
	p.agent.send(kindStepReady, encode(stepReady{Socket: engine.SocketPath(p.dir)}))
	timeout := time.Duration(p.joinTimeout)
	deadline := time.Now().Add(timeout)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		reported := map[int]bool{}
		for range tick.C {
			d.mu.Lock()
			if p.stopping {
				d.mu.Unlock()
				return
			}
			d.stepDeparted(p, reported)
			if late := p.eng.Waiting(); len(late) > 0 && time.Now().After(deadline) {
				d.sendTo(p.head, kindJobFailed, encode(jobFailed{ID: p.id, Reason: slurm.LateRanks(d.cfg.Node, late, timeout)}))
				deadline = deadline.Add(maxKillAfter) // once: the head stops the step
			}
			d.mu.Unlock()
		}
	}()
}

// stepDeparted tells the head of the ranks of a step's part that have left
// without closing, those in reported (if set) excepted, and adds them there.
func (d *Daemon) stepDeparted(p *partJob, reported map[int]bool) {
	for _, gone := range p.eng.Departed() {
		if !reported[gone.Rank] {
			if reported != nil {
				reported[gone.Rank] = true
			}
			d.sendTo(p.head, kindRankExit, encode(rankExit{ID: p.id, Rank: gone.Rank, Pid: gone.Pid, Code: 1,
				How: "left the job without closing it (killed, or it exited early)"}))
		}
	}
}

// stepClosed tells the head that every rank of a step's part here has
// closed.
func (d *Daemon) stepClosed(p *partJob) {
	for _, r := range p.ranks {
		d.sendTo(p.head, kindRankExit, encode(rankExit{ID: p.id, Rank: r, How: "closed"}))
	}
}
