package daemon_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/svmcluster/svm/dsm/daemon"
	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/protocol/peer"
)

// agent plays svmf slurm-engine: one node's part of a Slurm step, joined
// to that node's svmd through its control socket.
type agent struct {
	t      *testing.T
	pc     *peer.Conn
	socket string // the engine's, once ready
}

// joinStep joins j to via's svmd as cred's user (nil: as the tests').
func joinStep(t *testing.T, via *node, cred *syscall.Credential, j daemon.StepJoin) *agent {
	c, err := dialAs("unix", filepath.Join(via.dir, daemon.ControlSocket), cred)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	pc := peer.Local(c, "svmd")
	body, err := msgpack.Marshal(j)
	require.NoError(t, err)
	require.NoError(t, pc.Send(daemon.KindStepJoin, body))
	return &agent{t: t, pc: pc}
}

// ready waits for the engine's socket.
func (a *agent) ready() string {
	a.pc.SetReadDeadline(time.Now().Add(20 * time.Second))
	kind, body, err := a.pc.Recv()
	require.NoError(a.t, err)
	require.Equal(a.t, daemon.KindStepReady, kind, "%s", body)
	var m daemon.StepReady
	require.NoError(a.t, msgpack.Unmarshal(body, &m))
	a.socket = m.Socket
	return m.Socket
}

// end waits for the step's end and returns its exit frame.
func (a *agent) end() daemon.Exit {
	a.pc.SetReadDeadline(time.Now().Add(20 * time.Second))
	kind, body, err := a.pc.Recv()
	require.NoError(a.t, err)
	require.Equal(a.t, daemon.KindExit, kind)
	var ex daemon.Exit
	require.NoError(a.t, msgpack.Unmarshal(body, &ex))
	return ex
}

var stepSeq int

// step is a step of np ranks on nodes, ranks on this node, joining
// within a second.
func step(node string, nodes []string, np int, ranks ...int) daemon.StepJoin {
	stepSeq++
	return daemon.StepJoin{ID: fmt.Sprintf("%d.0", stepSeq), Node: node, Nodes: nodes, Ranks: ranks,
		Settings: engine.DefaultSettings(np), JoinTimeout: int64(time.Second)}
}

// rank starts testprog args as rank r of the step whose engine a is ready
// with.
func rank(t *testing.T, c *cluster, a *agent, r int, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(c.bin.testprog, args...)
	cmd.Env = append(os.Environ(), "SVM_SOCKET="+a.socket, fmt.Sprint("SVM_RANK=", r))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	return cmd, &out
}

// TestSlurmSteps joins Slurm steps to svmd by hand, as svmf slurm-engine
// does on each node: hostile and broken parts are refused with what was
// wrong, a step across two svmds runs its ranks (which join by
// themselves), and a killed rank, a node that never joins and ranks that
// never join each end the step with a message naming them. svmd serves a
// normal job afterwards, with no job state left.
func TestSlurmSteps(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{})
	n1, n2 := c.nodes[0], c.nodes[1]
	both := []string{"n1", "n2"}

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			edit func(*daemon.StepJoin)
			want string
		}{
			{"too many ranks", func(j *daemon.StepJoin) { j.Settings.NProcs = 5000 }, "-np 5000: want 1 to 1024"},
			{"rank out of range", func(j *daemon.StepJoin) { j.Ranks = []int{7} }, "rank 7 out of range [0,2)"},
			{"one rank twice", func(j *daemon.StepJoin) { j.Ranks = []int{1, 1} }, "rank 1 is listed twice"},
			{"another node's name", func(j *daemon.StepJoin) { j.Node = "n2" }, `Slurm calls this node "n2", its svmd "n1"`},
			{"not a step id", func(j *daemon.StepJoin) { j.ID = "../../x" }, `step "../../x": want JOB.STEP`},
			{"unknown node", func(j *daemon.StepJoin) { j.Nodes = []string{"n1", "n7"} }, "node n7 is not one of the peers"},
			{"no time to join", func(j *daemon.StepJoin) { j.JoinTimeout = 0 }, "SVM_SLURM_JOIN_TIMEOUT 0s: want 1s to 1h0m0s"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				j := step("n1", []string{"n1"}, 2, 0, 1)
				tc.edit(&j)
				ex := joinStep(t, n1, nil, j).end()
				assert.Equal(t, 2, ex.Code)
				assert.Contains(t, ex.Message, tc.want)
			})
		}
	})
	t.Run("one rank claimed by two nodes", func(t *testing.T) {
		j := step("n1", both, 2, 0)
		a1 := joinStep(t, n1, nil, j)
		j.Node = "n2"
		a2 := joinStep(t, n2, nil, j)
		for _, a := range []*agent{a1, a2} {
			ex := a.end()
			assert.Equal(t, 1, ex.Code)
			assert.Regexp(t, `rank 0 is claimed by node n. and node n.`, ex.Message)
		}
	})
	t.Run("joined twice on one node", func(t *testing.T) {
		// Either may come first; the other is refused.
		j := step("n1", both, 2, 0)
		var msgs []string
		for _, a := range []*agent{joinStep(t, n1, nil, j), joinStep(t, n1, nil, j)} {
			msgs = append(msgs, a.end().Message)
		}
		assert.ElementsMatch(t, []string{fmt.Sprintf("step %s has joined svmd on node n1 already", j.ID),
			fmt.Sprintf("job slurm-%s failed: node n2 did not join the step within 1s (SVM_SLURM_JOIN_TIMEOUT; is svmd running there?)", j.ID)}, msgs)
	})
	t.Run("wrong user", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root: a part must join as another user")
		}
		j := step("n1", both, 2, 0)
		a1 := joinStep(t, n1, nil, j)
		j.Node, j.Ranks = "n2", []int{1}
		a2 := joinStep(t, n2, nobody, j)
		for _, a := range []*agent{a1, a2} {
			ex := a.end()
			assert.Equal(t, 1, ex.Code)
			assert.Regexp(t, `its ranks on node n. run as uid (0|65534), those on node n. as uid (0|65534): a step is one user's`, ex.Message)
		}
	})
	t.Run("ranks that never join", func(t *testing.T) {
		a := joinStep(t, n1, nil, step("n1", []string{"n1"}, 2, 0, 1))
		a.ready()
		ex := a.end()
		assert.Equal(t, 1, ex.Code)
		assert.Regexp(t, `job slurm-\d+\.0 failed: ranks 0,1 on node n1 did not join the job within 1s \(SVM_SLURM_JOIN_TIMEOUT\)`, ex.Message)
	})

	// A step across the two svmds, ranks 0 and 1 on n1, 2 on n2.
	across := func() [2]*agent {
		j := step("n1", both, 3, 0, 1)
		j.JoinTimeout = int64(10 * time.Second)
		a1 := joinStep(t, n1, nil, j)
		j.Node, j.Ranks = "n2", []int{2}
		a2 := joinStep(t, n2, nil, j)
		a1.ready()
		a2.ready()
		return [2]*agent{a1, a2}
	}
	t.Run("across nodes", func(t *testing.T) {
		a := across()
		var cmds []*exec.Cmd
		var outs []*bytes.Buffer
		for r, ag := range []*agent{a[0], a[0], a[1]} {
			cmd, out := rank(t, c, ag, r, "counter", "-k", "50")
			cmds, outs = append(cmds, cmd), append(outs, out)
		}
		for r, cmd := range cmds {
			assert.NoError(t, cmd.Wait(), "rank %d: %s", r, outs[r])
		}
		assert.Contains(t, outs[0].String(), "counter 150;")
		for _, ag := range a {
			assert.Equal(t, daemon.Exit{}, ag.end())
		}
	})
	t.Run("killed rank", func(t *testing.T) {
		a := across()
		var cmds []*exec.Cmd
		for r, ag := range []*agent{a[0], a[0], a[1]} {
			cmd, _ := rank(t, c, ag, r, "hang")
			cmds = append(cmds, cmd)
		}
		time.Sleep(500 * time.Millisecond)
		require.NoError(t, cmds[2].Process.Kill())
		for _, ag := range a {
			ex := ag.end()
			assert.Equal(t, 1, ex.Code)
			assert.Regexp(t, `rank 2 on node n2 \(pid \d+\) left the job without closing it`, ex.Message)
		}
		for r, cmd := range cmds {
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				assert.Error(t, err, "rank %d must fail once its step has", r)
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Errorf("rank %d still runs after its step failed", r)
			}
		}
	})
	t.Run("svmf slurm-engine cancelled", func(t *testing.T) {
		a := across()
		a[1].pc.Close()
		ex := a[0].end()
		assert.Equal(t, 1, ex.Code)
		assert.Regexp(t, `node n2: svmf slurm-engine \(pid \d+\) went away`, ex.Message)
	})

	for _, n := range c.nodes {
		alive(t, n)
		assert.Eventually(t, func() bool {
			dirs, _ := filepath.Glob(filepath.Join(n.dir, "job-*"))
			return len(dirs) == 0
		}, 10*time.Second, 50*time.Millisecond, "job directories left on %s", n.name)
	}
	r := c.run(n1, "--hosts", "n1,n2", c.bin.testprog, "counter", "-k", "10")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "counter 20;")
}
