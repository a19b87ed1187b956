package launch

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestTaggerKeepsLinesWhole(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	a, b := NewTagger(&out, "[0] ", &mu), NewTagger(&out, "[1] ", &mu)
	a.Write([]byte("hel"))
	b.Write([]byte("one\ntw"))
	a.Write([]byte("lo\nworld\nlast"))
	b.Write([]byte("o\n"))
	require.Equal(t, "[1] one\n[0] hello\n[0] world\n[1] two\n", out.String())
	a.Close()
	b.Close()
	require.Equal(t, "[1] one\n[0] hello\n[0] world\n[1] two\n[0] last\n", out.String())
}

func TestExitDescriptions(t *testing.T) {
	for _, tc := range []struct {
		script string
		code   int
		says   string
	}{
		{"exit 3", 3, "exited with status 3"},
		{"kill -KILL $$", 128 + 9, "was killed by signal 9 (killed)"},
	} {
		p, err := Start(Rank{Program: "/bin/sh", Args: []string{"-c", tc.script}, NProcs: 1})
		require.NoError(t, err)
		<-p.Done()
		require.Equal(t, tc.code, ExitCode(p.Err()))
		require.Equal(t, tc.says, DescribeExit(p.Err()))
	}
}

// TestStopLeavesNothingBehind: a rank's children go with it, and one that
// ignores SIGTERM is killed after the grace period.
func TestStopLeavesNothingBehind(t *testing.T) {
	pidFile := t.TempDir() + "/child"
	p, err := Start(Rank{Program: "/bin/sh", NProcs: 1, Args: []string{"-c",
		"trap '' TERM; sleep 100 & echo $! > " + pidFile + "; wait"}})
	require.NoError(t, err)
	var child int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && child > 0
	}, 5*time.Second, 10*time.Millisecond)
	Stop([]*Process{p}, 200*time.Millisecond)
	select {
	case <-p.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the rank outlived Stop")
	}
	require.Eventually(t, func() bool {
		return syscall.Kill(child, 0) == syscall.ESRCH
	}, 5*time.Second, 10*time.Millisecond, "the rank's child %d outlived Stop", child)
}

func usable(t *testing.T) []int {
	var set unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &set))
	return cpusIn(&set)
}

func TestBindings(t *testing.T) {
	cpus := usable(t)
	n := len(cpus)
	for _, policy := range []string{BindAuto, ""} {
		got, err := Bindings(n, policy)
		require.NoError(t, err)
		require.Equal(t, cpus, got, "auto binds one rank to each CPU when there are enough")
		got, err = Bindings(n+1, policy)
		require.NoError(t, err)
		require.Nil(t, got, "auto binds nothing when ranks outnumber CPUs")
	}
	got, err := Bindings(n+1, BindCPU)
	require.NoError(t, err)
	require.Equal(t, append(slices.Clone(cpus), cpus[0]), got, "cpu binds in turn")
	got, err = Bindings(1, BindNone)
	require.NoError(t, err)
	require.Nil(t, got)
	_, err = Bindings(1, "core")
	require.ErrorContains(t, err, `binding "core": want auto, none or cpu`)
}

// TestStartBinds: a bound rank runs on its CPU alone, and the launcher's
// threads keep the CPUs they had.
func TestStartBinds(t *testing.T) {
	cpus := usable(t)
	cpu := cpus[len(cpus)-1]
	var out bytes.Buffer
	p, err := Start(Rank{Program: "/bin/sh", NProcs: 1, Bind: true, CPU: cpu, Stdout: &out,
		Args: []string{"-c", "grep Cpus_allowed_list /proc/self/status"}})
	require.NoError(t, err)
	<-p.Done()
	require.NoError(t, p.Err())
	require.Equal(t, fmt.Sprintf("Cpus_allowed_list:\t%d\n", cpu), out.String())
	require.Equal(t, cpus, usable(t))
}

// releaseHelper, set in a rank's environment, makes the test binary the
// rank of TestReleaseOtherThreads: it starts threads, releases them and
// prints its thread's CPU list, then each other thread's.
const releaseHelper = "SVM_TEST_RELEASE_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(releaseHelper) != "" {
		os.Exit(releaseOtherThreadsRank())
	}
	os.Exit(m.Run())
}

func releaseOtherThreadsRank() int {
	runtime.LockOSThread()
	var started sync.WaitGroup
	stop := make(chan struct{})
	for range 3 { // threads of their own besides the runtime's
		started.Add(1)
		go func() {
			runtime.LockOSThread()
			started.Done()
			<-stop
		}()
	}
	started.Wait()
	if err := ReleaseOtherThreads(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	self := unix.Gettid()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lines := []string{cpusOf(self)}
	for _, task := range tasks {
		if tid, _ := strconv.Atoi(task.Name()); tid != self {
			lines = append(lines, cpusOf(tid))
		}
	}
	fmt.Println(strings.Join(lines, "\n"))
	close(stop)
	return 0
}

// cpusOf is the CPU list of thread tid of this process, as the kernel
// writes it, or the error reading it.
func cpusOf(tid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
	if err != nil {
		return err.Error()
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if list, ok := strings.CutPrefix(line, "Cpus_allowed_list:\t"); ok {
			return list
		}
	}
	return "no Cpus_allowed_list"
}

// TestReleaseOtherThreads: in a bound rank, the thread that releases the
// others stays on the rank's CPU and every other thread may run on the
// launcher's CPUs; a rank started unbound has nothing to release.
func TestReleaseOtherThreads(t *testing.T) {
	cpus := usable(t)
	if len(cpus) < 2 {
		t.Skip("one CPU: bound and released are the same set")
	}
	// The kernel writes this process's CPUs as it writes the rank's.
	all := cpusOf(os.Getpid())
	for _, bind := range []bool{true, false} {
		cpu := cpus[len(cpus)-1]
		var out, errOut bytes.Buffer
		// A value left in the environment by an outer job is not the
		// launcher's: it must not reach the rank.
		env := append(os.Environ(), releaseHelper+"=1", EnvCPUs+"="+strconv.Itoa(cpu))
		p, err := Start(Rank{Program: os.Args[0], Args: []string{"-test.run=^$"}, NProcs: 1, Bind: bind, CPU: cpu,
			Env: env, Stdout: &out, Stderr: &errOut})
		require.NoError(t, err)
		<-p.Done()
		require.NoError(t, p.Err(), errOut.String())
		threads := strings.Split(strings.TrimSpace(out.String()), "\n")
		require.Greater(t, len(threads), 4, "the caller, three locked threads and the runtime's")
		self, others := threads[0], threads[1:]
		if bind {
			require.Equal(t, strconv.Itoa(cpu), self, "the releasing thread stays bound")
		} else {
			require.Equal(t, all, self, "an unbound rank stays unbound")
		}
		for _, other := range others {
			require.Equal(t, all, other, "a thread other than the caller")
		}
	}
}

func TestCPUListsRoundTrip(t *testing.T) {
	var set unix.CPUSet
	for _, cpu := range []int{0, 3, 64, 1023} {
		set.Set(cpu)
	}
	got, err := parseCPUs(formatCPUs(&set))
	require.NoError(t, err)
	require.Equal(t, set, got)
	require.Equal(t, "0,3,64,1023", formatCPUs(&set))
	for _, bad := range []string{"", "1,,2", "x", "-1", "1024", "0-3"} {
		_, err := parseCPUs(bad)
		require.Error(t, err, "%q", bad)
	}
}
