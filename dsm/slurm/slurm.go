// Package slurm lets a program started by Slurm's srun join an SVM job: one
// job per job step, its ranks and size from the environment Slurm gives each
// task, and on every node of the step an engine that the step's first task
// there starts (svmf slurm-engine) and the other tasks join.
//
// It only reads the environment, starts that engine and waits for its
// socket; the engine itself runs in svmf, never in the application.
package slurm

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The environment beyond Slurm's that the step's processes read.
const (
	// EnvSvmf is the svmf program that starts each node's engine; unset,
	// svmf is looked up on PATH.
	EnvSvmf = "SVM_SVMF"
	// EnvFlags holds svmf run's flags for the step's engines ("-region 1G").
	EnvFlags = "SVM_SLURM_FLAGS"
	// EnvPort is the TCP port the first node's engine listens on for the
	// other engines (node i of the step's node list: the port plus i).
	// Unset, it is derived from the job and step ids.
	EnvPort = "SVM_SLURM_PORT"
	// EnvSecretFile is the cluster secret the engines of a step across
	// nodes authenticate each other with; unset: /etc/svm/secret.
	EnvSecretFile = "SVM_SECRET_FILE"
	// EnvJoinTimeout is how long the step's ranks have to join (a Go
	// duration): a rank that fails before it joins ends the step then,
	// naming it, instead of leaving the others waiting.
	EnvJoinTimeout = "SVM_SLURM_JOIN_TIMEOUT"
)

// The time the step's ranks have to join unless EnvJoinTimeout says
// otherwise, and the most it may say.
const (
	DefaultJoinTimeout = time.Minute
	MaxJoinTimeout     = time.Hour
)

// DefaultSecretFile is svmd's secret file in deploy/, shared by the nodes.
const DefaultSecretFile = "/etc/svm/secret"

// Step is the job step a task of srun belongs to, as its environment says.
type Step struct {
	JobID, StepID string
	// Rank is the task's rank (SLURM_PROCID), NProcs the step's size.
	Rank, NProcs int
	// LocalID is the task's index on its node; the task with LocalID 0
	// starts the node's engine.
	LocalID int
	// Node is this node's name, Nodes the step's nodes in order and
	// NodeIndex this node's place among them.
	Node      string
	Nodes     []string
	NodeIndex int
	// LocalRanks are the ranks on this node (SLURM_GTIDS).
	LocalRanks []int
	// JoinTimeout is how long the step's nodes, and then the ranks on
	// each, have to join (EnvJoinTimeout).
	JoinTimeout time.Duration
}

// InStep reports whether getenv describes a task started by srun in a job
// step.
func InStep(getenv func(string) string) bool {
	return getenv("SLURM_JOB_ID") != "" && getenv("SLURM_STEP_ID") != "" && getenv("SLURM_PROCID") != ""
}

// FromEnv reads the step from a task's environment.
func FromEnv(getenv func(string) string) (Step, error) {
	s := Step{JobID: getenv("SLURM_JOB_ID"), StepID: getenv("SLURM_STEP_ID"), Node: getenv("SLURMD_NODENAME")}
	for _, id := range []struct{ name, v string }{{"SLURM_JOB_ID", s.JobID}, {"SLURM_STEP_ID", s.StepID}} {
		if _, err := strconv.ParseUint(id.v, 10, 32); err != nil {
			return Step{}, fmt.Errorf("slurm: %s=%q is not a number", id.name, id.v)
		}
	}
	if s.Node == "" {
		return Step{}, errors.New("slurm: SLURMD_NODENAME is not set: start the program with srun")
	}
	var err error
	ints := []struct {
		name string
		v    *int
		min  int
	}{{"SLURM_NTASKS", &s.NProcs, 1}, {"SLURM_PROCID", &s.Rank, 0}, {"SLURM_LOCALID", &s.LocalID, 0}}
	for _, i := range ints {
		v := getenv(i.name)
		if *i.v, err = strconv.Atoi(v); err != nil || *i.v < i.min {
			return Step{}, fmt.Errorf("slurm: %s=%q is not a number from %d", i.name, v, i.min)
		}
	}
	if s.Rank >= s.NProcs {
		return Step{}, fmt.Errorf("slurm: SLURM_PROCID %d is not below SLURM_NTASKS %d", s.Rank, s.NProcs)
	}
	if s.Nodes, err = ExpandHostlist(getenv("SLURM_STEP_NODELIST")); err != nil {
		return Step{}, fmt.Errorf("slurm: SLURM_STEP_NODELIST: %w", err)
	}
	if s.NodeIndex = slices.Index(s.Nodes, s.Node); s.NodeIndex < 0 {
		return Step{}, fmt.Errorf("slurm: node %s is not in the step's node list %v", s.Node, s.Nodes)
	}
	gtids := getenv("SLURM_GTIDS")
	for f := range strings.SplitSeq(gtids, ",") {
		r, err := strconv.Atoi(f)
		if err != nil || r < 0 || r >= s.NProcs || slices.Contains(s.LocalRanks, r) {
			return Step{}, fmt.Errorf("slurm: SLURM_GTIDS=%q: want the distinct ranks on this node", gtids)
		}
		s.LocalRanks = append(s.LocalRanks, r)
	}
	if !slices.Contains(s.LocalRanks, s.Rank) {
		return Step{}, fmt.Errorf("slurm: rank %d is not among this node's ranks %v", s.Rank, s.LocalRanks)
	}
	s.JoinTimeout = DefaultJoinTimeout
	if v := getenv(EnvJoinTimeout); v != "" {
		if s.JoinTimeout, err = time.ParseDuration(v); err != nil || s.JoinTimeout < time.Second || s.JoinTimeout > MaxJoinTimeout {
			return Step{}, fmt.Errorf("slurm: %s=%q: want a duration from 1s to %v", EnvJoinTimeout, v, MaxJoinTimeout)
		}
	}
	return s, nil
}

// LateRanks says that ranks, on node, did not join their job within
// timeout.
func LateRanks(node string, ranks []int, timeout time.Duration) string {
	list := make([]string, len(ranks))
	for i, r := range ranks {
		list[i] = strconv.Itoa(r)
	}
	what := "rank "
	if len(ranks) > 1 {
		what = "ranks "
	}
	return fmt.Sprintf("%s%s on node %s did not join the job within %v (%s)", what, strings.Join(list, ","), node, timeout, EnvJoinTimeout)
}

// ID names the job the step runs as: JOB.STEP.
func (s Step) ID() string { return s.JobID + "." + s.StepID }

// Dir is the private directory, on this node, of the step's engine: in the
// temporary directory Slurm gives the step's tasks, named by user and step.
func (s Step) Dir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("svm-slurm-%d-%s", os.Getuid(), s.ID()))
}

// Socket is the engine's socket in Dir.
func (s Step) Socket() string { return filepath.Join(s.Dir(), "engine.sock") }

// Ready is the file the engine creates in Dir once it listens on Socket:
// the socket's file exists a moment before it takes connections.
func (s Step) Ready() string { return filepath.Join(s.Dir(), "ready") }

// Port is the TCP port of this node's engine for the other nodes' engines:
// base plus this node's index in the step, base from EnvPort or else from
// the job and step ids, so that every engine of the step knows every
// other's without asking.
func (s Step) Port(getenv func(string) string) (int, error) {
	return s.PortOf(s.NodeIndex, getenv)
}

// PortOf is the port of the engine of the step's node i (see Port).
func (s Step) PortOf(i int, getenv func(string) string) (int, error) {
	base := 0
	if v := getenv(EnvPort); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p+len(s.Nodes) > 65535 {
			return 0, fmt.Errorf("slurm: %s=%q: want a port from 1 that leaves room for %d nodes", EnvPort, v, len(s.Nodes))
		}
		base = p
	} else {
		h := fnv.New32a()
		h.Write([]byte(s.ID()))
		// Above the usual ephemeral range's start is avoided: 20000-44999.
		base = 20000 + int(h.Sum32()%uint32(25000-len(s.Nodes)))
	}
	return base + i, nil
}

// How long the tasks of a step wait for their node's engine, beyond the
// time the step's nodes have to join: the engines of a step across nodes
// first connect to each other, and the nodes' tasks do not start at the
// same moment.
const engineWait = time.Minute

// Attach returns the socket of the engine on this node for the task whose
// environment getenv reads, and its rank. The task with LocalID 0 starts
// svmf slurm-engine first, which runs the node's engine, or joins the step
// to the node's svmd where one runs; every task waits until the engine is
// ready.
func Attach(ctx context.Context, getenv func(string) string) (socket string, rank int, err error) {
	s, err := FromEnv(getenv)
	if err != nil {
		return "", 0, err
	}
	var exited chan error
	if s.LocalID == 0 {
		if exited, err = startEngine(getenv); err != nil {
			return "", 0, err
		}
	}
	wait := engineWait + s.JoinTimeout
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := checkOwnDir(s.Dir()); err != nil {
			return "", 0, err
		}
		if _, err := os.Stat(s.Ready()); err == nil {
			return s.Socket(), s.Rank, nil
		}
		select {
		case err := <-exited:
			return "", 0, fmt.Errorf("slurm: this node's engine ended before it was ready: %w", err)
		case <-ctx.Done():
			return "", 0, fmt.Errorf("slurm: job %s: no engine on node %s after %v (the step's first task on each node starts one; see its messages): %w",
				s.ID(), s.Node, wait, ctx.Err())
		case <-tick.C:
		}
	}
}

// startEngine starts svmf slurm-engine with this task's environment; the
// channel hears how it ended. The engine outlives this task if it must
// (other ranks still use it): it is not tied to the task's death, and
// Slurm, which tracks every process of the step, ends it with the step.
func startEngine(getenv func(string) string) (chan error, error) {
	svmf := getenv(EnvSvmf)
	if svmf == "" {
		p, err := exec.LookPath("svmf")
		if err != nil {
			return nil, fmt.Errorf("slurm: starting this node's engine: svmf is not on PATH (put SVM's bin/ on PATH, or set %s): %w", EnvSvmf, err)
		}
		svmf = p
	}
	cmd := exec.Command(svmf, "slurm-engine")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("slurm: starting this node's engine: %w", err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if err == nil {
			err = errors.New("it exited")
		}
		exited <- err
	}()
	return exited, nil
}

// checkOwnDir refuses an engine directory that exists and is not this
// user's alone: another user could have made it to pose as the engine.
func checkOwnDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("slurm: engine directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("slurm: engine directory %s is not a directory of uid %d closed to others", dir, os.Getuid())
	}
	return nil
}

// ExpandHostlist expands a Slurm host list: "n1,gpu[01-03,7],x" is n1,
// gpu01, gpu02, gpu03, gpu7, x. Only one bracket group a name is taken, as
// Slurm writes node lists of one dimension.
func ExpandHostlist(list string) ([]string, error) {
	var hosts []string
	for len(list) > 0 {
		end := strings.IndexAny(list, ",[")
		if end < 0 {
			hosts = append(hosts, list)
			break
		}
		if list[end] == ',' {
			if end == 0 {
				return nil, fmt.Errorf("empty host name in %q", list)
			}
			hosts = append(hosts, list[:end])
			list = list[end+1:]
			continue
		}
		prefix := list[:end]
		closing := strings.IndexByte(list, ']')
		if closing < end {
			return nil, fmt.Errorf("unclosed [ in %q", list)
		}
		rest := list[closing+1:]
		next := strings.IndexByte(rest, ',')
		if next < 0 {
			next = len(rest)
		}
		suffix := rest[:next]
		if strings.ContainsAny(suffix, "[]") {
			return nil, fmt.Errorf("more than one [...] in a name in %q", list)
		}
		for r := range strings.SplitSeq(list[end+1:closing], ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a > b || b-a > 1<<16 {
				return nil, fmt.Errorf("bad range %q in %q", r, list)
			}
			for i := a; i <= b; i++ {
				hosts = append(hosts, fmt.Sprintf("%s%0*d%s", prefix, len(lo), i, suffix))
			}
		}
		list = strings.TrimPrefix(rest[next:], ",")
	}
	if len(hosts) == 0 {
		return nil, errors.New("no hosts")
	}
	return hosts, nil
}
