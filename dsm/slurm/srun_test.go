package slurm_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cluster is a single-machine Slurm (munged, slurmctld, slurmd) run by the
// test, and SVM's programs built for it.
type cluster struct {
	dir, conf, bin string
	env            []string
	// svmd, when set, is the svmd serving the node, in socket directory
	// svmdDir, which the steps go through.
	svmd    *exec.Cmd
	svmdDir string
}

// TestSrun brings up a real Slurm from Debian's packages on this machine and
// runs SVM jobs through srun and sbatch: the lock counter, SOR checked
// against a sequential run, and an SVM-Fortran program checked against its
// gfortran-only build; then a killed rank and a scancel, each ending the
// step with no process left behind. All of it twice: with the engines the
// steps start themselves, then through an svmd serving the node, which
// serves a normal job afterwards.
func TestSrun(t *testing.T) {
	if testing.Short() {
		t.Skip("brings up Slurm")
	}
	if os.Getuid() != 0 {
		t.Skip("running slurmctld and slurmd needs root")
	}
	for _, p := range []string{"munged", "slurmctld", "slurmd", "srun", "sbatch", "scancel", "gfortran"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not found (scripts/setup installs munge, slurmctld, slurmd and slurm-client as root): %v", p, err)
		}
	}
	c := startCluster(t)
	// No svmd here: each step starts its own engine.
	c.env = append(c.env, "SVM_DAEMON="+filepath.Join(c.dir, "no-svmd"))
	t.Run("own engines", func(t *testing.T) { runSteps(t, c) })
	t.Run("svmd", func(t *testing.T) {
		c.startSvmd(t)
		runSteps(t, c)
		out := c.run(t, 0, filepath.Join(c.bin, "svmf"), "run", "--daemon", c.svmdDir, "--hosts", c.node()+":2",
			filepath.Join(c.bin, "testprog"), "counter", "-k", "10")
		assert.Contains(t, out, "counter 20;")
		assert.Nil(t, c.svmd.ProcessState, "svmd exited")
	})
}

// runSteps runs the jobs through srun and sbatch.
func runSteps(t *testing.T, c *cluster) {
	t.Run("counter", func(t *testing.T) {
		out := c.run(t, 0, "srun", "-n", "2", filepath.Join(c.bin, "testprog"), "counter", "-k", "200")
		assert.Contains(t, out, "counter 400;")
	})
	t.Run("sor", func(t *testing.T) {
		out := c.run(t, 0, "srun", "-n", "2", filepath.Join(c.bin, "sor"), "-iter", "10")
		assert.Contains(t, out, "on 2 ranks", out)
		assert.Contains(t, out, "check ok", out)
	})
	t.Run("fortran", func(t *testing.T) {
		want := c.run(t, 0, filepath.Join(c.bin, "blocks-seq"))
		got := c.run(t, 0, "srun", "-n", "2", filepath.Join(c.bin, "blocks"))
		assert.Equal(t, want, got, "srun -n 2 blocks against gfortran alone")
	})
	t.Run("sbatch", func(t *testing.T) {
		script := filepath.Join(c.dir, "job.sh")
		out := filepath.Join(c.dir, "job.out")
		require.NoError(t, os.WriteFile(script, []byte(fmt.Sprintf(`#!/bin/bash
#SBATCH --ntasks=2
#SBATCH --output=%s
set -e
srun %s counter -k 100
srun %s -iter 10
srun %s
echo job done
`, out, filepath.Join(c.bin, "testprog"), filepath.Join(c.bin, "sor"), filepath.Join(c.bin, "blocks"))), 0o755))
		c.run(t, 0, "sbatch", "--wait", script)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		want := c.run(t, 0, filepath.Join(c.bin, "blocks-seq"))
		assert.Contains(t, string(b), "counter 200;")
		assert.Contains(t, string(b), "check ok")
		assert.Contains(t, string(b), want)
		assert.Contains(t, string(b), "job done")
	})
	t.Run("killed rank", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := c.command(ctx, "srun", "-n", "2", filepath.Join(c.bin, "testprog"), "hang")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		var victim int
		require.Eventually(t, func() bool {
			pids := c.processes(t)
			for pid, args := range pids {
				if strings.HasSuffix(args, "testprog hang") && strings.Contains(out.String(), "ready") {
					victim = max(victim, pid) // the later one: which rank is which does not matter
				}
			}
			return victim != 0
		}, 30*time.Second, 50*time.Millisecond, "the step did not start: %s", &out)
		require.NoError(t, syscall.Kill(victim, syscall.SIGKILL))
		err := cmd.Wait()
		require.Error(t, err, "srun must fail when a rank is killed: %s", &out)
		assert.Regexp(t, `rank \d on node \S+ \(pid \d+\) left the job without closing it`, out.String())
		c.noneLeft(t)
	})
	t.Run("scancel", func(t *testing.T) {
		script := filepath.Join(c.dir, "hang.sh")
		out := filepath.Join(c.dir, "hang.out")
		require.NoError(t, os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/bash\n#SBATCH --ntasks=2\n#SBATCH --output=%s\nsrun %s hang\n",
			out, filepath.Join(c.bin, "testprog"))), 0o755))
		id := strings.TrimSpace(c.run(t, 0, "sbatch", "--parsable", script))
		require.Eventually(t, func() bool {
			b, _ := os.ReadFile(out)
			return bytes.Contains(b, []byte("ready"))
		}, 30*time.Second, 50*time.Millisecond, "job %s did not start", id)
		c.run(t, 0, "scancel", id)
		require.Eventually(t, func() bool {
			return strings.TrimSpace(c.run(t, 0, "squeue", "-h", "-j", id)) == ""
		}, 30*time.Second, 100*time.Millisecond, "job %s did not end", id)
		c.noneLeft(t)
	})
}

// node is this machine's name, to Slurm and to svmd.
func (c *cluster) node() string {
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	return host
}

// startSvmd starts an svmd serving the node, in its own socket directory,
// which the steps find through SVM_DAEMON; it is stopped at the end.
func (c *cluster) startSvmd(t *testing.T) {
	c.svmdDir = filepath.Join(c.dir, "svmd")
	cmd := exec.Command(filepath.Join(c.bin, "svmd"), "--node", c.node(), "--listen", fmt.Sprint("127.0.0.1:", freePort(t)),
		"--metrics", "", "--socket-dir", c.svmdDir)
	log, err := os.Create(filepath.Join(c.dir, "svmd.log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	c.svmd = cmd
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(c.dir, "svmd.log"))
			t.Logf("svmd's log:\n%s", b)
		}
	})
	require.Eventually(t, func() bool {
		conn, err := net.Dial("unix", filepath.Join(c.svmdDir, "svmd.sock"))
		if err == nil {
			conn.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "svmd did not start")
	for i, e := range c.env {
		if strings.HasPrefix(e, "SVM_DAEMON=") {
			c.env[i] = "SVM_DAEMON=" + c.svmdDir
		}
	}
}

// startCluster writes a Slurm configuration for this machine alone, on free
// ports, and starts munged, slurmctld and slurmd, each stopped at the end.
func startCluster(t *testing.T) *cluster {
	dir := t.TempDir()
	c := &cluster{dir: dir, conf: filepath.Join(dir, "slurm.conf"), bin: filepath.Join(dir, "svm", "bin")}
	build(t, c)
	host, err := os.Hostname()
	require.NoError(t, err)
	host, _, _ = strings.Cut(host, ".")
	for _, d := range []string{"munge", "state", "spool", "tmp"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o700))
	}
	key := make([]byte, 128)
	f, err := os.Open("/dev/urandom")
	require.NoError(t, err)
	_, err = f.Read(key)
	f.Close()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "munge", "key"), key, 0o600))
	sock := filepath.Join(dir, "munge", "sock")
	conf := fmt.Sprintf(`ClusterName=svmtest
SlurmctldHost=%[2]s(127.0.0.1)
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
AuthType=auth/munge
AuthInfo=socket=%[5]s
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[1]s/state
SlurmdSpoolDir=%[1]s/spool
SlurmctldPidFile=%[1]s/slurmctld.pid
SlurmdPidFile=%[1]s/slurmd.pid
SlurmctldLogFile=%[1]s/slurmctld.log
SlurmdLogFile=%[1]s/slurmd.log
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
KillWait=2
NodeName=%[2]s NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=%[2]s Default=YES MaxTime=INFINITE State=UP
`, dir, host, freePort(t), freePort(t), sock)
	require.NoError(t, os.WriteFile(c.conf, []byte(conf), 0o644))
	c.env = append(os.Environ(), "SLURM_CONF="+c.conf, "PATH="+c.bin+":"+os.Getenv("PATH"),
		"TMPDIR="+filepath.Join(dir, "tmp"))
	daemon(t, c, "munged", "-F", "-f", "--socket="+sock, "--key-file="+filepath.Join(dir, "munge", "key"),
		"--pid-file="+filepath.Join(dir, "munge", "pid"), "--log-file="+filepath.Join(dir, "munge", "log"),
		"--seed-file="+filepath.Join(dir, "munge", "seed"))
	daemon(t, c, "slurmctld", "-D", "-i", "-f", c.conf)
	daemon(t, c, "slurmd", "-D", "-f", c.conf)
	ok := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !ok; time.Sleep(200 * time.Millisecond) {
		out, _ := c.command(context.Background(), "sinfo", "-h", "-o", "%T").Output()
		ok = strings.TrimSpace(string(out)) == "idle"
	}
	if !ok {
		logs, _ := os.ReadFile(filepath.Join(dir, "slurmd.log"))
		t.Skipf("this machine's Slurm did not come up (node not idle after 30s); slurmd's log:\n%s", logs)
	}
	return c
}

// build installs SVM's layout under the cluster's directory, and the test
// programs beside it.
func build(t *testing.T, c *cluster) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	prefix := filepath.Dir(c.bin)
	steps := [][]string{
		{filepath.Join(root, "scripts", "install-layout"), prefix},
		{"go", "build", "-o", filepath.Join(c.bin, "testprog"), "./dsm/internal/testprog"},
		{"go", "build", "-o", filepath.Join(c.bin, "sor"), "./bench/sor"},
		{filepath.Join(c.bin, "svmf"), "build", "-o", filepath.Join(c.bin, "blocks"), "svmfortran/compile/testdata/programs/blocks.f"},
		{filepath.Join(c.bin, "svmf"), "build", "-nodist", "-fcray-pointer", "-o", filepath.Join(c.bin, "blocks-seq"), "svmfortran/compile/testdata/programs/blocks.f"},
	}
	for _, s := range steps {
		cmd := exec.Command(s[0], s[1:]...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", s, out)
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// daemon starts one of Slurm's daemons in the foreground, dying with the
// test's process, and stops it at the end of the test.
func daemon(t *testing.T, c *cluster, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Env = c.env
	log, err := os.Create(filepath.Join(c.dir, name+".out"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		log.Close()
	})
}

func (c *cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env, cmd.Dir = c.env, c.dir
	cmd.WaitDelay = time.Second
	return cmd
}

// run runs a command of the cluster with a time limit and returns its
// output; it must exit with status want.
func (c *cluster) run(t *testing.T, want int, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := c.command(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	require.Equal(t, want, code, "%s %v: %v\nstdout: %s\nstderr: %s", name, args, err, &stdout, &stderr)
	return stdout.String()
}

// processes lists the processes running a program of the cluster's bin/
// directory: pid → command line.
func (c *cluster) processes(t *testing.T) map[int]string {
	found := map[int]string{}
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.HasPrefix(b, []byte(c.bin+"/")) || c.svmd != nil && pid == c.svmd.Process.Pid {
			continue
		}
		found[pid] = strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	}
	return found
}

// noneLeft waits a bounded time for every rank and engine to be gone, and
// for their socket directories with them (svmd's job directories too).
func (c *cluster) noneLeft(t *testing.T) {
	t.Helper()
	assert.Eventually(t, func() bool { return len(c.processes(t)) == 0 }, 20*time.Second, 50*time.Millisecond,
		"processes left behind: %v", c.processes(t))
	assert.Eventually(t, func() bool {
		dirs, _ := filepath.Glob(filepath.Join(c.dir, "tmp", "svm-slurm-*"))
		jobs, _ := filepath.Glob(filepath.Join(c.dir, "svmd", "job-*"))
		return len(dirs)+len(jobs) == 0
	}, 20*time.Second, 50*time.Millisecond, "engine directories left behind")
}

// TestStepAcrossNodes runs a step of two nodes on this machine without
// Slurm, each task with the environment srun would give it on its node
// ("localhost" and "127.0.0.1", each with its own temporary directory):
// the two nodes' engines connect with the cluster secret and the lock
// counter runs across them.
func TestStepAcrossNodes(t *testing.T) {
	dir := t.TempDir()
	for _, b := range [][2]string{{"svmf", "../../cmd/svmf"}, {"testprog", "../internal/testprog"}} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1]).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("a secret the two nodes share"), 0o600))
	nodes := []string{"localhost", "127.0.0.1"}
	port := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cmds []*exec.Cmd
	outs := make([]bytes.Buffer, len(nodes))
	for i, node := range nodes {
		tmp := filepath.Join(dir, fmt.Sprint("tmp", i))
		require.NoError(t, os.Mkdir(tmp, 0o700))
		cmd := exec.CommandContext(ctx, filepath.Join(dir, "testprog"), "counter", "-k", "100")
		cmd.Env = append(os.Environ(), "SLURM_JOB_ID=7", "SLURM_STEP_ID=0", fmt.Sprint("SLURM_PROCID=", i), "SLURM_NTASKS=2",
			"SLURM_LOCALID=0", "SLURMD_NODENAME="+node, "SLURM_STEP_NODELIST="+strings.Join(nodes, ","), fmt.Sprint("SLURM_GTIDS=", i),
			fmt.Sprint("SVM_SLURM_PORT=", port), "SVM_SECRET_FILE="+secret, "SVM_SVMF="+filepath.Join(dir, "svmf"), "TMPDIR="+tmp)
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		cmd.WaitDelay = time.Second
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		assert.NoError(t, cmd.Wait(), "rank %d: %s", i, &outs[i])
	}
	assert.Contains(t, outs[0].String(), "counter 200;")
}
