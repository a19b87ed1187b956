package launch

import (
	"bytes"
	"fmt"
	"os"
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
	var cpus []int
	for cpu := 0; len(cpus) < set.Count(); cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
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
