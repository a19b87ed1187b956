package daemon_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/protocol/peer"
)

// failureBound is how soon after a rank, node or link dies every test
// cluster's job must have ended everywhere: the failure timeout the
// clusters run with, the time ranks get to stop, and slack for a loaded
// machine.
const failureBound = 6 * time.Second

// fastFailure are flags that make a test cluster notice failures quickly.
var fastFailure = []string{"--heartbeat", "100ms", "--failure-timeout", "1s", "--kill-after", "1s"}

func TestJobsAcrossTwoAndThreeNodes(t *testing.T) {
	for _, tc := range []struct {
		nodes []string
		hosts string
	}{
		{[]string{"n1", "n2"}, "n1:2,n2:2"},
		{[]string{"n1", "n2", "n3"}, "n1:2,n2,n3"},
	} {
		t.Run(fmt.Sprintf("%d nodes", len(tc.nodes)), func(t *testing.T) {
			c := newCluster(t, tc.nodes, clusterOpts{})
			prog := c.bin.testprog
			for _, job := range []struct {
				args []string
				want string
			}{
				{[]string{prog, "counter", "-k", "100"}, "counter 400"},
				{[]string{prog, "falseshare", "-phases", "6"}, ""},
				{[]string{prog, "list", "-n", "200"}, ""},
				{[]string{prog, "sets", "-rounds", "6", "-k", "30"}, "sets ok"},
				{[]string{c.bin.sor, "-check", "-rows", "256", "-cols", "512", "-iter", "10"}, "check ok"},
			} {
				// Submit through the last node: the head need not host rank 0.
				r := c.run(c.nodes[len(c.nodes)-1], append([]string{"--hosts", tc.hosts}, job.args...)...)
				require.Equal(t, 0, r.code, "%v: %s%s", job.args, r.stdout, r.stderr)
				require.Contains(t, r.stdout, job.want)
			}
		})
	}
}

func TestOutputAndStatusComeBack(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{})
	sh := "/bin/sh"
	r := c.run(c.nodes[0], "--hosts", "n1,n2", "--tag-output", sh, "-c",
		`printf "out of $SVM_RANK\npartial $SVM_RANK"; echo "err of $SVM_RANK" >&2`)
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{"[0] out of 0\n", "[1] out of 1\n", "[0] partial 0\n", "[1] partial 1\n"} {
		require.Contains(t, r.stdout, want)
	}
	require.Contains(t, r.stderr, "[1] err of 1\n")

	r = c.run(c.nodes[0], "--hosts", "n1,n2", sh, "-c", `exit $((SVM_RANK * 7))`)
	require.Equal(t, 7, r.code)
	require.Regexp(t, `job n1\.\w+\.\d+ failed: rank 1 on node n2 \(pid \d+\) exited with status 7`, r.stderr)

	// The rank's working directory and environment are the submitter's.
	t.Setenv("SVM_TEST_VAR", "forwarded")
	r = c.run(c.nodes[1], "--hosts", "n2,n1", sh, "-c", `echo "$PWD $SVM_TEST_VAR"`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, strings.Repeat(os.TempDir()+" forwarded\n", 2), r.stdout)
}

func TestSubmissionErrors(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{})
	n1 := c.nodes[0]
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--hosts", "n1,n9", "-np", "2", "/bin/true"}, "node n9 is not n1 nor one of its peers (n2)"},
		{[]string{"--hosts", "n1,n2", "-np", "2", "/no/such/program"}, "no such file"},
		{[]string{"--hosts", "n1,,n2", "/bin/true"}, "an empty entry"},
		{[]string{"--hosts", "n1", "--hostfile", "x", "/bin/true"}, "not both"},
		{[]string{"--hosts", "n1:0", "/bin/true"}, `slots "0"`},
	} {
		r := c.run(n1, tc.args...)
		require.NotEqual(t, 0, r.code, "%v", tc.args)
		require.Contains(t, r.stderr, tc.says, "%v", tc.args)
	}
	// A hostfile, and -np taken from its slots.
	hostfile := t.TempDir() + "/hosts"
	require.NoError(t, os.WriteFile(hostfile, []byte("# two nodes\nn2 slots=2\nn1:1\n"), 0o644))
	r := c.run(n1, "--hostfile", hostfile, "--tag-output", "/bin/sh", "-c", `echo "$SVM_RANK of $SVM_NPROCS"`)
	require.Equal(t, 0, r.code, r.stderr)
	for rank := range 3 {
		require.Contains(t, r.stdout, fmt.Sprintf("[%d] %d of 3\n", rank, rank))
	}
}

// startHanging starts a job whose last rank waits forever (the others wait
// for it in a barrier), and returns once it runs.
func startHanging(t *testing.T, c *cluster, via *node, hosts string, np int) (*exec.Cmd, *strings.Builder) {
	cmd := c.svmf(via, nil, "--hosts", hosts, "-np", fmt.Sprint(np), c.bin.testprog, "hang")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the job did not start: %s", stderr)
	require.Equal(t, "ready\n", line)
	go io.Copy(io.Discard, out)
	return cmd, stderr
}

// waitJob waits for a submitted job's svmf, at most the failure bound.
func waitJob(t *testing.T, cmd *exec.Cmd) (int, time.Duration) {
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, time.Since(start)
	case <-time.After(failureBound):
		cmd.Process.Kill()
		t.Fatalf("the job did not end within %v", failureBound)
		return 0, 0
	}
}

func TestKilledRankEndsTheJobEverywhere(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{extra: fastFailure})
	cmd, stderr := startHanging(t, c, c.nodes[0], "n1:2,n2:2", 4)
	victims := ranksLeft(t, c.bin.testprog)
	require.Len(t, victims, 4)
	// Kill one rank of n2's (the ranks' order in /proc is not their rank
	// order; any one will do).
	var pid int
	fmt.Sscan(victims[len(victims)-1], &pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	code, took := waitJob(t, cmd)
	require.Equal(t, 128+9, code, stderr.String())
	require.Regexp(t, `rank \d on node n\d \(pid `+fmt.Sprint(pid)+`\) was killed by signal 9`, stderr.String())
	t.Logf("the job ended %v after the kill", took)
	require.Eventually(t, func() bool { return len(ranksLeft(t, c.bin.testprog)) == 0 }, failureBound, 20*time.Millisecond,
		"ranks left behind: %v", ranksLeft(t, c.bin.testprog))
	// Both daemons go on serving.
	r := c.run(c.nodes[1], "--hosts", "n1,n2", c.bin.testprog, "counter", "-k", "50")
	require.Equal(t, 0, r.code, r.stderr)
}

func TestKilledDaemonEndsTheJobEverywhere(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2", "n3"}, clusterOpts{extra: fastFailure})
	n1, n3 := c.node("n1"), c.node("n3")
	cmd, stderr := startHanging(t, c, n1, "n1,n2,n3", 3)
	n3.signal(syscall.SIGKILL)
	code, took := waitJob(t, cmd)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "node n3 lost")
	t.Logf("the job ended %v after svmd was killed", took)
	require.Eventually(t, func() bool { return len(ranksLeft(t, c.bin.testprog)) == 0 }, failureBound, 20*time.Millisecond,
		"ranks left behind: %v", ranksLeft(t, c.bin.testprog))
	// The survivors run the next job; n3 comes back and rejoins.
	r := c.run(n1, "--hosts", "n1,n2", c.bin.testprog, "counter", "-k", "50")
	require.Equal(t, 0, r.code, r.stderr)
	<-n3.exited
	c.start(n3)
	c.waitPeers(n1, 2)
	r = c.run(n1, "--hosts", "n1,n3", c.bin.testprog, "counter", "-k", "50")
	require.Equal(t, 0, r.code, r.stderr)
}

// TestSilentDaemonEndsTheJob: a node that stops answering without closing
// its connections (frozen, or cut off) is found out by the heartbeats.
func TestSilentDaemonEndsTheJob(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{extra: fastFailure})
	n2 := c.node("n2")
	cmd, stderr := startHanging(t, c, c.node("n1"), "n1,n2", 2)
	n2.signal(syscall.SIGSTOP)
	defer n2.signal(syscall.SIGCONT)
	code, took := waitJob(t, cmd)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "node n2 lost: no heartbeat for 1s")
	t.Logf("the job ended %v after svmd froze", took)
}

func TestGracefulStop(t *testing.T) {
	// The shutdown message must win: a failure timeout a loaded machine
	// cannot trip before it arrives (1 s once lost to "no heartbeat").
	graceful := []string{"--heartbeat", "100ms", "--failure-timeout", "4s", "--kill-after", "1s"}
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{extra: graceful})
	n1, n2 := c.node("n1"), c.node("n2")
	// One job headed by each node; stopping n2 ends both with a message.
	cmd1, stderr1 := startHanging(t, c, n1, "n1,n2", 2)
	cmd2, stderr2 := startHanging(t, c, n2, "n2,n1", 2)
	n2.signal(syscall.SIGTERM)
	for _, j := range []struct {
		cmd    *exec.Cmd
		stderr *strings.Builder
	}{{cmd1, stderr1}, {cmd2, stderr2}} {
		code, _ := waitJob(t, j.cmd)
		require.Equal(t, 1, code)
		require.Contains(t, j.stderr.String(), "svmd on node n2 is shutting down (received terminated)")
	}
	select {
	case <-n2.exited:
	case <-time.After(failureBound):
		t.Fatal("svmd did not stop")
	}
	require.Equal(t, 0, n2.cmd.ProcessState.ExitCode())
	require.Eventually(t, func() bool { return len(ranksLeft(t, c.bin.testprog)) == 0 }, failureBound, 20*time.Millisecond)
	_, err := os.Stat(n2.dir + "/svmd.sock")
	require.True(t, os.IsNotExist(err), "the control socket outlived svmd")
	r := c.run(n1, "--hosts", "n1", "-np", "2", c.bin.testprog, "counter", "-k", "50")
	require.Equal(t, 0, r.code, r.stderr)
}

func TestWrongSecretIsRejected(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{secrets: []string{"0123456789abcdef-right", "0123456789abcdef-right"}})
	n1, n2 := c.node("n1"), c.node("n2")
	n2.signal(syscall.SIGTERM)
	<-n2.exited
	require.NoError(t, os.WriteFile(n2.secretFile, []byte("0123456789abcdef-wrong"), 0o600))
	c.start(n2)
	// Each side finds the other out, says so, and counts it.
	for _, n := range []*node{n1, n2} {
		require.Eventually(t, func() bool {
			return strings.Contains(n.log.String(), "does not hold") &&
				regexp.MustCompile(`(?m)^svm_peer_auth_failures_total [1-9]`).MatchString(n.scrape(t, true))
		}, 10*time.Second, 20*time.Millisecond, "%s's log:\n%s", n.name, n.log)
	}
	r := c.run(n1, "--hosts", "n1,n2", c.bin.testprog, "counter")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "node n2 is not connected")
}

// TestGarbageOnThePeerPort: junk before or after the handshake closes that
// connection with a log line, and the daemon goes on.
func TestGarbageOnThePeerPort(t *testing.T) {
	secret := "0123456789abcdef-secret"
	// The test plays node n2, which n1 expects at a port nobody listens on.
	c := newCluster(t, []string{"n1"}, clusterOpts{secrets: []string{secret}, extra: []string{"--peer", "n2=127.0.0.1:1"}})
	n1 := c.node("n1")
	// Before the handshake: not even a frame.
	conn, err := net.Dial("tcp", n1.peerAddr)
	require.NoError(t, err)
	conn.Write([]byte("GET / HTTP/1.0\r\n\r\n\x00\x01\x02"))
	conn.Close()
	// Its handshake runs on a goroutine of its own, which a busy machine
	// may schedule after the connections below.
	require.Eventually(t, func() bool {
		return strings.Contains(n1.log.String(), "peer connection rejected")
	}, 5*time.Second, 20*time.Millisecond, "n1's log:\n%s", n1.log)
	// After it, with the secret: a frame of an unknown kind, then a job
	// frame whose body is not msgpack.
	for _, f := range []struct {
		kind peer.Kind
		body []byte
		says string
	}{
		{200, []byte("x"), "bad kind 200 frame: unexpected frame kind 200"},
		{peer.FirstKind + 1, []byte{0xdc, 0xff, 0xff}, "bad job start frame"},
	} {
		pc, err := peer.Dial(n1.peerAddr, "n2", []byte(secret))
		require.NoError(t, err)
		require.NoError(t, pc.Send(f.kind, f.body))
		_, _, err = pc.Recv()
		require.Error(t, err, "the connection stays open after a bad frame")
		pc.Close()
		require.Eventually(t, func() bool {
			return regexp.MustCompile(`peer lost.*` + regexp.QuoteMeta(f.says)).MatchString(n1.log.String())
		}, 5*time.Second, 20*time.Millisecond, "n1's log:\n%s", n1.log)
	}
	r := c.run(n1, "--hosts", "n1", "-np", "2", c.bin.testprog, "counter", "-k", "50")
	require.Equal(t, 0, r.code, r.stderr)
}

// TestOtherUsers: a job runs as the user who submitted it, and no one else
// can reach its engine.
func TestOtherUsers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: the daemon must be able to run ranks as another user")
	}
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{})
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	r := c.runAs(c.nodes[0], nobody, "--hosts", "n1,n2", "/bin/sh", "-c", "id -u; id -g")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "65534\n65534\n65534\n65534\n", r.stdout)

	// A job of root's: its socket directory is closed to nobody, and the
	// engine refuses a process of another user even if it got through.
	cmd, _ := startHanging(t, c, c.nodes[0], "n1,n2", 2)
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}()
	dirs, err := os.ReadDir(c.nodes[0].dir)
	require.NoError(t, err)
	var sock string
	for _, d := range dirs {
		if strings.HasPrefix(d.Name(), "job-") {
			sock = c.nodes[0].dir + "/" + d.Name() + "/engine.sock"
		}
	}
	require.NotEmpty(t, sock)
	probe := exec.Command(c.bin.testprog, "counter")
	probe.Env = append(os.Environ(), "SVM_SOCKET="+sock, "SVM_RANK=0")
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	out, err := probe.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "permission denied")
}
