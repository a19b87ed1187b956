package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The end-to-end tests run real jobs: svmf and the test programs are built
// once into a directory any user can read, and every job runs in its own
// processes with a real engine, memfds and userfaultfds.

var binDir, testprog string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "svmf-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755)
	for _, b := range [][2]string{{"svmf", "."}, {"testprog", "../../dsm/internal/testprog"}} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1])
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", b[0], err)
			os.Exit(1)
		}
	}
	binDir = dir
	testprog = filepath.Join(dir, "testprog")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type job struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// svmf runs svmf with args (testprog paths resolved) and waits at most limit.
func svmf(t *testing.T, limit time.Duration, attr *syscall.SysProcAttr, args ...string) job {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "svmf"), args...)
	cmd.Dir = binDir
	cmd.SysProcAttr = attr
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		j := job{stdout: out.String(), stderr: errOut.String(), took: time.Since(start)}
		if ee, ok := err.(*exec.ExitError); ok {
			j.code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return j
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("svmf %v did not finish within %v\nstdout:\n%s\nstderr:\n%s", args, limit, out.String(), errOut.String())
		return job{}
	}
}

func okJob(t *testing.T, j job) {
	t.Helper()
	require.Equal(t, 0, j.code, "stdout:\n%s\nstderr:\n%s", j.stdout, j.stderr)
}

// orphans lists the test programs still running.
func orphans() []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(cmdline), testprog+"\x00") {
			found = append(found, e.Name())
		}
	}
	return found
}

func noOrphans(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(orphans()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	assert.Empty(t, orphans(), "rank processes left behind")
}

func TestLockCounter(t *testing.T) {
	j := svmf(t, time.Minute, nil, "run", "-np", "4", testprog, "counter", "-k", "500")
	okJob(t, j)
	assert.Contains(t, j.stdout, "counter 2000;")
}

// TestProcessorSetsAndCounters: set barriers and shares in two halves of
// the job at once, and fetch-and-add counters.
func TestProcessorSetsAndCounters(t *testing.T) {
	for _, np := range []string{"1", "5"} {
		j := svmf(t, time.Minute, nil, "run", "-np", np, testprog, "sets")
		okJob(t, j)
		assert.Contains(t, j.stdout, "sets ok")
	}
}

func TestFalseSharing(t *testing.T) {
	okJob(t, svmf(t, time.Minute, nil, "run", "-np", "4", testprog, "falseshare", "-phases", "15"))
	// Funneled: the engine leaves written pages writable around calls.
	t.Setenv("SVM_TEST_FUNNELED", "1")
	okJob(t, svmf(t, time.Minute, nil, "run", "-np", "4", testprog, "falseshare", "-phases", "15"))
	okJob(t, svmf(t, time.Minute, nil, "run", "-np", "3", testprog, "counter", "-k", "300"))
	okJob(t, svmf(t, time.Minute, nil, "run", "-np", "3", testprog, "syscall"))
}

// TestProtocolsAndWriteTracking: programs that check their own results
// (locks, false sharing between barriers, a linked list built by every rank,
// a log passed between ranks under a lock while they write outside it)
// under the home-based and the homeless protocol, with writes found by
// faults or reported without them (where the kernel can), from ranks that
// are funneled or not.
func TestProtocolsAndWriteTracking(t *testing.T) {
	for _, proto := range []string{"home", "homeless"} {
		for _, writes := range []string{"auto", "faults"} {
			for _, funneled := range []string{"0", "1"} {
				t.Run(fmt.Sprintf("%s/%s/funneled=%s", proto, writes, funneled), func(t *testing.T) {
					t.Setenv("SVM_TEST_FUNNELED", funneled)
					run := func(np string, args ...string) job {
						return svmf(t, time.Minute, nil, append([]string{"run", "-np", np, "-protocol", proto, "-writes", writes, testprog}, args...)...)
					}
					okJob(t, run("4", "falseshare", "-phases", "8"))
					j := run("3", "counter", "-k", "200")
					okJob(t, j)
					assert.Contains(t, j.stdout, "counter 600;")
					okJob(t, run("3", "list", "-n", "300"))
					j = run("3", "handoff", "-k", "300")
					okJob(t, j)
					assert.Contains(t, j.stdout, "handoff ok;")
				})
			}
		}
	}
}

// TestLargeRegionCostsNoPageTables: a rank's page tables follow the memory
// it uses, not the size of the region. With writes found without faults,
// the pages are write-protected a page table's span at a time before their
// first mapping; protected all at once up front, a 64 GiB region took 128
// MiB of page tables a rank.
func TestLargeRegionCostsNoPageTables(t *testing.T) {
	for _, writes := range []string{"auto", "faults"} {
		j := svmf(t, time.Minute, nil, "run", "-np", "2", "-region", "64G", "-writes", writes, testprog, "pagetables")
		okJob(t, j)
		sizes := regexp.MustCompile(`pagetables rank \d: (\d+) kB`).FindAllStringSubmatch(j.stdout, -1)
		require.Len(t, sizes, 2, j.stdout)
		for _, m := range sizes {
			kB, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			assert.Less(t, kB, 8<<10, "-writes %s: %s", writes, m[0])
		}
	}
}

// TestJobStatistics: --stats prints every rank's figures and the totals,
// --stats-json writes them, and they are the engine's: rank 0's own
// counters (which it prints) match its row, the locks and barriers are
// those the program made, and the messages by type add up.
func TestJobStatistics(t *testing.T) {
	for _, np := range []string{"1", "3"} {
		file := filepath.Join(t.TempDir(), "stats.json")
		j := svmf(t, time.Minute, nil, "run", "-np", np, "--stats", "--stats-json", file, testprog, "counter", "-k", "100")
		okJob(t, j)
		assert.Contains(t, j.stderr, "svmf: job statistics: wall time")
		assert.Regexp(t, `rank +read faults +write faults +pages fetched`, j.stderr)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var js jobStats
		require.NoError(t, json.Unmarshal(data, &js))
		n, _ := strconv.Atoi(np)
		require.Len(t, js.Ranks, n)
		var messages, remote, local int64
		_, err = fmt.Sscanf(j.stdout, "counter %d; rank 0: %d messages, %d remote and %d local lock acquires", new(int64), &messages, &remote, &local)
		require.NoError(t, err, j.stdout)
		r0 := js.Ranks[0]
		assert.Equal(t, remote+local, r0.LockAcquires, "rank 0's lock acquires")
		assert.LessOrEqual(t, messages, r0.MessagesSent, "rank 0 sends no fewer messages by the end than it had counted")
		assert.Equal(t, int64(100*n), js.Total.LockAcquires)
		assert.Equal(t, int64(n), js.Total.Barriers, "one barrier each")
		var byType int64
		for _, c := range js.Messages {
			byType += c.Messages
		}
		assert.Equal(t, js.Total.MessagesSent, byType)
		if n == 1 {
			assert.Zero(t, js.Total.MessagesSent, "a rank alone sends nothing")
		}
		assert.Greater(t, js.WallSeconds, 0.0)
	}
}

// TestBinding: -bind none and cpu run jobs, and a wrong policy is named.
func TestBinding(t *testing.T) {
	for _, bind := range []string{"none", "cpu", "auto"} {
		okJob(t, svmf(t, time.Minute, nil, "run", "-np", "3", "-bind", bind, testprog, "counter", "-k", "50"))
	}
	j := svmf(t, time.Minute, nil, "run", "-np", "2", "-bind", "core", testprog, "counter")
	assert.Equal(t, 2, j.code)
	assert.Contains(t, j.stderr, `-bind: binding "core": want auto, none or cpu`)
}

func TestPointersInSharedMemory(t *testing.T) {
	okJob(t, svmf(t, time.Minute, nil, "run", "-np", "3", testprog, "list", "-n", "2000"))
}

// TestGarbageCollectorCannotDeadlock: copy, clear and bytes.Equal fault
// inside runtime assembly while runtime.GC runs in a loop.
func TestGarbageCollectorCannotDeadlock(t *testing.T) {
	j := svmf(t, 2*time.Minute, nil, "run", "-np", "2", testprog, "gc", "-rounds", "40")
	okJob(t, j)
	assert.Contains(t, j.stdout, "rank 0: 40 rounds with")
}

// TestValidateBeforeSyscall: read(2) into stale shared memory works once the
// range is validated.
func TestValidateBeforeSyscall(t *testing.T) {
	okJob(t, svmf(t, time.Minute, nil, "run", "-np", "3", testprog, "syscall"))
}

func TestMisuseGetsErrors(t *testing.T) {
	j := svmf(t, time.Minute, nil, "run", "-np", "3", testprog, "misuse")
	okJob(t, j)
	assert.Contains(t, j.stdout, "every wrong call was refused")
}

func TestTagOutput(t *testing.T) {
	j := svmf(t, time.Minute, nil, "run", "-np", "2", "--tag-output", testprog, "gc", "-rounds", "1")
	okJob(t, j)
	assert.Contains(t, j.stdout, "[0] rank 0: 1 rounds")
	assert.Contains(t, j.stdout, "[1] rank 1: 1 rounds")
}

func TestRankPanicEndsJob(t *testing.T) {
	j := svmf(t, 30*time.Second, nil, "run", "-np", "3", testprog, "crash")
	assert.Equal(t, 2, j.code, "a Go panic exits with status 2")
	assert.Regexp(t, `svmf: job failed: rank 1 \(pid \d+\) exited with status 2; stopping the other ranks`, j.stderr)
	assert.Contains(t, j.stderr, "rank 1 fails on purpose")
	assert.Less(t, j.took, 10*time.Second)
	noOrphans(t)
}

// startHang starts a job whose last rank sleeps while the others wait at
// a barrier, and returns once the job is running. env, if set, is svmf's
// environment.
func startHang(t *testing.T, np int, stderr *bytes.Buffer, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "svmf"), "run", "-np", strconv.Itoa(np), testprog, "hang")
	cmd.Dir = binDir
	cmd.Env = env
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	return cmd
}

func TestRankKilledEndsJob(t *testing.T) {
	var errOut bytes.Buffer
	cmd := startHang(t, 3, &errOut, nil)
	// Kill the sleeping rank (the last one) the way an OOM killer would.
	var victim int
	for _, pid := range orphans() {
		env, _ := os.ReadFile("/proc/" + pid + "/environ")
		if bytes.Contains(env, []byte("SVM_RANK=2\x00")) {
			victim, _ = strconv.Atoi(pid)
		}
	}
	require.NotZero(t, victim)
	killed := time.Now()
	require.NoError(t, syscall.Kill(victim, syscall.SIGKILL))
	require.Error(t, cmd.Wait())
	assert.Less(t, time.Since(killed), 10*time.Second)
	assert.Equal(t, 128+9, cmd.ProcessState.ExitCode())
	assert.Contains(t, errOut.String(), fmt.Sprintf("rank 2 (pid %d) was killed by signal 9", victim))
	noOrphans(t)
}

func TestInterruptStopsJob(t *testing.T) {
	cmd := startHang(t, 2, &bytes.Buffer{}, nil)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.Error(t, cmd.Wait())
	assert.Equal(t, 130, cmd.ProcessState.ExitCode())
	noOrphans(t)
}

func TestDeadlockDetected(t *testing.T) {
	j := svmf(t, 30*time.Second, nil, "run", "-np", "3", testprog, "deadlock")
	assert.Equal(t, 1, j.code)
	assert.Contains(t, j.stderr, "engine: deadlock: rank 0 waits in barrier 1; rank 1 waits in barrier 2; rank 2 waits in barrier 2")
	noOrphans(t)
}

// TestNonRoot runs a job as user nobody when the tests run as root.
func TestNonRoot(t *testing.T) {
	if os.Getuid() != 0 {
		j := svmf(t, time.Minute, nil, "run", "-np", "2", testprog, "counter", "-k", "100")
		okJob(t, j)
		return
	}
	attr := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	j := svmf(t, time.Minute, attr, "run", "-np", "3", testprog, "counter", "-k", "200")
	okJob(t, j)
	assert.Contains(t, j.stdout, "counter 600;")
}

func TestRunUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "run: no program given: svmf run -np N PROGRAM"},
		{[]string{"run", testprog}, "run: -np N is required"},
		{[]string{"run", "-np", "4611686018427387904", testprog}, "-np 4611686018427387904: want 1 to 65536 ranks"},
		{[]string{"run", "-np", "2", "./no-such-program"}, "no-such-program"},
		{[]string{"run", "-np", "2", "-region", "12Q", testprog}, `-region: "12Q" is not a size`},
		{[]string{"run", "-np", "2", "-region", "1000", testprog}, "-region 1000: not a positive multiple of the 4096-byte page"},
		{[]string{"run", "-np", "2", "-region", "2T", testprog}, "-region 2T: want at most 1T"},
		{[]string{"run", "-np", "2", "-base", "zzz", testprog}, `-base "zzz": not an address`},
		{[]string{"run", "-np", "2", "-locks", "0", testprog}, "-locks 0: want 1 to 1048576 lock ids"},
		{[]string{"run", "-np", "2", "-locks", "4294967295", testprog}, "-locks 4294967295: want 1 to 1048576 lock ids"},
		{[]string{"run", "-np", "2", "-locks", "4294967296", testprog}, `invalid value "4294967296" for flag -locks: value out of range`},
		{[]string{"run", "-np", "2", "-barriers", "0", testprog}, "-barriers 0: want 1 to 1048576 barrier ids"},
	} {
		j := svmf(t, 30*time.Second, nil, tc.args...)
		assert.Equal(t, 2, j.code, "%v", tc.args)
		assert.Contains(t, j.stderr, tc.want, "%v", tc.args)
	}
}

// TestCommandLine: every command's -h and --help print its usage on
// stdout and exit 0; every usage mistake is one line on stderr that names
// it and the way out, with status 2 and nothing on stdout.
func TestCommandLine(t *testing.T) {
	for _, cmd := range [][]string{nil, {"run"}, {"sim"}, {"sim", "sor"}, {"build"}, {"cc"}, {"fc"}, {"slurm-engine"}} {
		for _, h := range []string{"-h", "--help"} {
			args := append(slices.Clone(cmd), h)
			j := svmf(t, 30*time.Second, nil, args...)
			assert.Equal(t, 0, j.code, "svmf %v", args)
			assert.True(t, strings.HasPrefix(j.stdout, "usage: svmf"), "svmf %v: stdout %q", args, j.stdout)
			assert.Empty(t, j.stderr, "svmf %v", args)
		}
	}
	j := svmf(t, 30*time.Second, nil, "run", "-h")
	assert.Contains(t, j.stdout, "-tag-output")
	assert.Contains(t, j.stdout, "-profile")
	j = svmf(t, 30*time.Second, nil, "help")
	assert.Equal(t, 0, j.code)
	assert.Contains(t, j.stdout, "version")

	for _, args := range [][]string{{"version"}, {"--version"}} {
		j := svmf(t, 30*time.Second, nil, args...)
		assert.Equal(t, 0, j.code, "svmf %v", args)
		assert.Regexp(t, `^svmf github.com/svmcluster/svm \S+ \(revision .*\), go1\.\S+\n$`, j.stdout)
		assert.Empty(t, j.stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "svmf: no command given: svmf run -np N PROGRAM runs a job (svmf -h lists the commands)"},
		{[]string{"frobnicate"}, `svmf: unknown command "frobnicate" (svmf -h lists the commands)`},
		{[]string{"run"}, "svmf: run: no program given: svmf run -np N PROGRAM [ARGS...]"},
		{[]string{"run", "-np", "2"}, "svmf: run: no program given: svmf run -np N PROGRAM [ARGS...]"},
		{[]string{"run", testprog}, "svmf: run: -np N is required (or --hosts NODE:SLOTS,... to run through svmd)"},
		{[]string{"run", "-frob", testprog}, "svmf: run: flag provided but not defined: -frob (svmf run -h lists the flags)"},
		{[]string{"run", "-np", "x", testprog}, `svmf: run: invalid value "x" for flag -np: parse error (svmf run -h lists the flags)`},
		{[]string{"run", "-np", "2", "--daemon", "/tmp", testprog}, "svmf: run: --daemon needs --hosts or --hostfile"},
		{[]string{"run", "--hosts", "a:2", "--profile", "/tmp/p", testprog}, "svmf: run: --profile profiles the engine svmf runs"},
		{[]string{"sim"}, "svmf: sim: name a program: svmf sim sor [flags]"},
		{[]string{"sim", "lu"}, `svmf: sim: unknown program "lu": svmf sim sor is the one there is`},
		{[]string{"sim", "sor", "-frob"}, "svmf: sim sor: flag provided but not defined: -frob (svmf sim sor -h lists the flags)"},
		{[]string{"build"}, "svmf: build: no arguments: give the sources to compile (svmf build -h)"},
		{[]string{"cc"}, "svmf: cc: no arguments: give the files to compile (svmf cc -h)"},
		{[]string{"fc"}, "svmf: fc: no arguments: give the files to compile (svmf fc -h)"},
	} {
		j := svmf(t, 30*time.Second, nil, tc.args...)
		assert.Equal(t, 2, j.code, "svmf %v", tc.args)
		assert.Empty(t, j.stdout, "svmf %v", tc.args)
		assert.Equal(t, 1, strings.Count(j.stderr, "\n"), "svmf %v: one line, got %q", tc.args, j.stderr)
		assert.True(t, strings.HasPrefix(j.stderr, tc.want), "svmf %v: got %q, want %q", tc.args, j.stderr, tc.want)
	}
}

// TestProfile: --profile DIR leaves the engine's CPU profile and its lock
// waits there, in pprof's format, and says how to read them.
func TestProfile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "prof")
	j := svmf(t, time.Minute, nil, "run", "-np", "2", "--profile", dir, testprog, "counter", "-k", "50")
	okJob(t, j)
	path := filepath.Join(dir, "engine.cpu.pprof")
	assert.Contains(t, j.stderr, "svmf: the engine's CPU profile is in "+path+"; read it with: go tool pprof -top "+path)
	out, err := exec.Command("go", "tool", "pprof", "-top", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Type: cpu")
	path = filepath.Join(dir, "engine.mutex.pprof")
	assert.Contains(t, j.stderr, "svmf: the time its threads waited for its locks is in "+path)
	out, err = exec.Command("go", "tool", "pprof", "-top", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Type: delay")
}

// TestBaseAddressTaken: a region base that overlaps the program's own
// mappings gets a clear error from Join.
func TestBaseAddressTaken(t *testing.T) {
	// 0x400000 is where a non-PIE Go binary's text usually is; pick any
	// mapping of the test program instead, read from its own maps.
	j := svmf(t, 30*time.Second, nil, "run", "-np", "1", "-base", "0x10000", "-region", "1G", testprog, "counter")
	assert.NotEqual(t, 0, j.code)
	assert.Contains(t, j.stderr, "is already in use in this process")
}

// TestTooManyRanksForTheDescriptors: a job whose ranks would run the
// engine out of file descriptors is refused before any starts.
func TestTooManyRanksForTheDescriptors(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n 256 && exec "$0" run -np 100 "$1" counter`, filepath.Join(binDir, "svmf"), testprog)
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, 1, cmd.ProcessState.ExitCode())
	assert.Contains(t, string(out), "svmf: run: -np 100: 100 ranks here need about 864 open files, and this process may open")
	assert.Contains(t, string(out), "(ulimit -n)")
	assert.Empty(t, orphans())
}

// TestEngineDirectoryCleanup: svmf run removes its engine's directory on
// every exit it sees, and the next run removes one left by an svmf that
// was killed, but never one in use.
func TestEngineDirectoryCleanup(t *testing.T) {
	runtimeDir := t.TempDir()
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir)
	jobDirs := func() []string {
		dirs, err := filepath.Glob(filepath.Join(runtimeDir, "svmf-job-*"))
		require.NoError(t, err)
		return dirs
	}
	run := func() {
		cmd := exec.Command(filepath.Join(binDir, "svmf"), "run", "-np", "2", testprog, "counter", "-k", "10")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}

	run()
	assert.Empty(t, jobDirs(), "after a job that finished")

	cmd := startHang(t, 2, &bytes.Buffer{}, env)
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	require.Error(t, cmd.Wait())
	assert.Equal(t, 128+1, cmd.ProcessState.ExitCode())
	assert.Empty(t, jobDirs(), "after a hang-up")
	noOrphans(t)

	killed := startHang(t, 2, &bytes.Buffer{}, env)
	require.NoError(t, killed.Process.Kill())
	killed.Wait()
	noOrphans(t)
	stale := jobDirs()
	require.Len(t, stale, 1, "svmf was killed: its directory stays until the next run")

	live := startHang(t, 2, &bytes.Buffer{}, env)
	inUse := jobDirs()
	require.Len(t, inUse, 1, "the next run removed the stale directory")
	assert.NotEqual(t, stale, inUse)
	run()
	assert.Equal(t, inUse, jobDirs(), "a run left another's directory in use alone")
	require.NoError(t, live.Process.Signal(syscall.SIGINT))
	live.Wait()
	assert.Empty(t, jobDirs())
	noOrphans(t)
}
