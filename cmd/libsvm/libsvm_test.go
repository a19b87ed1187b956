package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/dsm/launch"
)

// These tests build the installed layout (bin/svmf, lib/libsvm.a, include/)
// into a temporary prefix with scripts/install-layout, compile the programs
// in testdata/ with svmf cc and svmf fc, and run them as jobs of real
// processes with svmf run.

var prefix string // the layout under test

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "svm-libsvm-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	prefix = dir
	out, err := exec.Command("../../scripts/install-layout", prefix).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "scripts/install-layout: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// svmf runs the layout's svmf in dir with args, for at most limit.
func svmf(t *testing.T, dir string, limit time.Duration, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(prefix, "bin", "svmf"), args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("svmf %v did not end within %v\nstdout:\n%s\nstderr:\n%s", args, limit, out.String(), errOut.String())
	}
	return result{out.String(), errOut.String(), cmd.ProcessState.ExitCode()}
}

// build compiles testdata/src with svmf cc or fc into a temporary directory
// and returns the program's path.
func build(t *testing.T, lang, src string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, strings.TrimSuffix(src, filepath.Ext(src)))
	abs, err := filepath.Abs(filepath.Join("testdata", src))
	require.NoError(t, err)
	args := append([]string{lang, "-O2", "-Wall", "-o", exe, abs}, flags...)
	r := svmf(t, dir, 2*time.Minute, args...)
	require.Equal(t, 0, r.code, "svmf %v:\n%s%s", args, r.stdout, r.stderr)
	return exe
}

func ok(t *testing.T, r result) {
	t.Helper()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
}

func TestTreadMarksSOR(t *testing.T) {
	exe := build(t, "cc", "sor.c")
	sums := map[string]bool{}
	for _, np := range []string{"1", "4"} {
		r := svmf(t, t.TempDir(), time.Minute, "run", "-np", np, exe)
		ok(t, r)
		require.Contains(t, r.stdout, "sor ok: "+np+" processes")
		sums[r.stdout[strings.Index(r.stdout, "checksum"):]] = true
	}
	assert.Len(t, sums, 1, "the checksum differs between 1 and 4 processes")
}

func TestTreadMarksLockCounter(t *testing.T) {
	exe := build(t, "cc", "counter.c")
	r := svmf(t, t.TempDir(), time.Minute, "run", "-np", "4", exe)
	ok(t, r)
	assert.Contains(t, r.stdout, "counter ok: 2000")
}

// misused runs exe on 2 ranks with each case's argument and checks that the
// job fails with status 1 and the case's message.
func misused(t *testing.T, exe string, cases map[string]string) {
	for what, want := range cases {
		t.Run(what, func(t *testing.T) {
			r := svmf(t, t.TempDir(), time.Minute, "run", "-np", "2", exe, what)
			assert.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, want)
		})
	}
}

// TestTreadMarksInterface: a K&R program using every call of Tmk.h
// (condition variables in a bounded buffer and a work queue, Tmk_sbrk and
// Tmk_distribute from the last process, the scheduler, Tmk_stat) checks
// each answer against the sequential one on 1, 2 and 4 processes.
func TestTreadMarksInterface(t *testing.T) {
	exe := build(t, "cc", "tmkall.c")
	for _, np := range []string{"1", "2", "4"} {
		r := svmf(t, t.TempDir(), time.Minute, "run", "-np", np, exe)
		ok(t, r)
		assert.Equal(t, "tmkall ok: "+np+" processes, work 190321, squares 22898104320\n", r.stdout)
		assert.Contains(t, r.stderr, "tmkall: process 0 saw ", "Tmk_err's message")
	}
}

// TestTreadMarksFortran77: a Fortran 77 program on the F77 bindings,
// built with svmf fc.
func TestTreadMarksFortran77(t *testing.T) {
	exe := build(t, "fc", "tmkf77.f")
	for _, np := range []int{1, 2, 4} {
		r := svmf(t, t.TempDir(), time.Minute, "run", "-np", fmt.Sprint(np), exe)
		ok(t, r)
		assert.Equal(t, fmt.Sprintf("tmkf77 ok:%2d processes, sum 2666866670000.0\n", np), r.stdout)
	}
}

func TestTreadMarksMisuse(t *testing.T) {
	misused(t, build(t, "cc", "misuse.c"), map[string]string{
		"before-startup":  "Tmk_barrier: not started: call Tmk_startup first",
		"distribute-size": "Tmk_distribute: nothing to distribute",
		"lock-range":      "Tmk_lock_acquire: lock 1048576 out of range [0,1024)",
		"release-unheld":  "Tmk_lock_release: unlock of lock 3, which rank",
		"barrier-range":   "Tmk_barrier: barrier 4096 out of range [0,64)",
		"cond-range":      "Tmk_lock_cond_signal: condition 9 out of range [0,4) (TMK_NCONDS)",
		"cond-lock-range": "Tmk_lock_cond_broadcast: lock 5000 out of range [0,1024)",
		"wait-unheld":     "waits on condition 1 of lock 2 without holding the lock: acquire it first",
		"sched-range":     "Tmk_sched_start: manager 99 out of range [0,2)",
		"fork-unjoined":   "Tmk_sched_fork: process 0 is not the manager of a join: call Tmk_sched_start(0) first",
		"errexit":         "errexit: process 1 gives up after 3 tries",
	})
}

func TestNativeCalls(t *testing.T) {
	exe := build(t, "cc", "native.c")
	for _, np := range []string{"1", "3", "4"} {
		r := svmf(t, t.TempDir(), time.Minute, "run", "-np", np, exe)
		ok(t, r)
		assert.Contains(t, r.stdout, "native ok: "+np+" ranks")
	}
	// Threads writing during calls: the engine protects written pages.
	t.Setenv("SVM_THREADS", "multiple")
	r := svmf(t, t.TempDir(), time.Minute, "run", "-np", "3", exe)
	ok(t, r)
	assert.Contains(t, r.stdout, "native ok: 3 ranks")
}

// TestRuntimeThreadsLeaveTheRanksCPU: in a rank bound to a CPU, the thread
// that joined stays there and the Go runtime's threads may run on any of
// the launcher's CPUs; unbound, every thread may run anywhere.
func TestRuntimeThreadsLeaveTheRanksCPU(t *testing.T) {
	// The CPUs svmf run -bind cpu gives the ranks: it decides as this
	// process would.
	cpus, err := launch.Bindings(2, launch.BindCPU)
	require.NoError(t, err)
	if cpus[0] == cpus[1] {
		t.Skip("one CPU: bound and released are the same set")
	}
	// The kernel writes svmf's CPUs, this process's, as it writes a rank's.
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	all := regexp.MustCompile(`Cpus_allowed_list:\s*(\S+)`).FindSubmatch(status)
	require.NotNil(t, all)
	exe := build(t, "cc", "threads.c")
	line := regexp.MustCompile(`rank (\d+): (\S+) \|(.*)`)
	for _, bind := range []string{"cpu", "none"} {
		r := svmf(t, t.TempDir(), time.Minute, "run", "-np", "2", "-bind", bind, exe)
		ok(t, r)
		ranks := line.FindAllStringSubmatch(r.stdout, -1)
		require.Len(t, ranks, 2, r.stdout)
		for _, m := range ranks {
			rank, _ := strconv.Atoi(m[1])
			caller := string(all[1])
			if bind == "cpu" {
				caller = strconv.Itoa(cpus[rank])
			}
			assert.Equal(t, caller, m[2], "rank %d's own thread (-bind %s)", rank, bind)
			others := strings.Fields(m[3])
			require.NotEmpty(t, others, "rank %d has no runtime threads", rank)
			for _, other := range others {
				assert.Equal(t, string(all[1]), other, "a runtime thread of rank %d (-bind %s)", rank, bind)
			}
		}
	}
}

func TestCompilerWrappers(t *testing.T) {
	r := svmf(t, t.TempDir(), time.Minute, "cc", "--show", "-o", "prog", "prog.c")
	ok(t, r)
	inc, lib := filepath.Join(prefix, "include"), filepath.Join(prefix, "lib")
	assert.Equal(t, "gcc -I"+inc+" -Wno-error=implicit-function-declaration -Wno-error=implicit-int -Wno-error=incompatible-pointer-types -Werror=int-conversion -o prog prog.c -no-pie -L"+lib+" -lsvm -lpthread\n", r.stdout)
	r = svmf(t, t.TempDir(), time.Minute, "fc", "--show", "-c", "prog.f90")
	ok(t, r)
	assert.Equal(t, "gfortran -I"+inc+" -fcray-pointer -c prog.f90\n", r.stdout, "compiling only: no link flags")
	r = svmf(t, t.TempDir(), time.Minute, "fc", "--show", "prog.o")
	ok(t, r)
	assert.Equal(t, "gfortran -I"+inc+" -fcray-pointer prog.o -no-pie -L"+lib+" -lsvmf -lsvm -lpthread\n", r.stdout)

	// The compiler's own errors and status come back unchanged.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.c"), []byte("int main(void) { return undeclared; }\n"), 0o644))
	r = svmf(t, dir, time.Minute, "cc", "bad.c")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "undeclared")

	// TreadMarks-era C builds as gcc 12 builds it, K&R and implicit int
	// included; a pointer from an undeclared function is refused in gcc's
	// words, never truncated.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kr.c"), []byte("#include \"Tmk.h\"\nmain(argc, argv)\n\tchar **argv;\n{\n\tstatic n = 1;\n\tTmk_startup(argc, argv);\n\tTmk_exit(n - 1);\n}\n"), 0o644))
	r = svmf(t, dir, time.Minute, "cc", "-o", "kr", "kr.c")
	ok(t, r)
	assert.Contains(t, r.stderr, "[-Wimplicit-int]")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trunc.c"), []byte("char *p;\nint main(void) { p = getbuf(10); return 0; }\n"), 0o644))
	r = svmf(t, dir, time.Minute, "cc", "-o", "trunc", "trunc.c")
	assert.Equal(t, 1, r.code)
	assert.Regexp(t, "implicit declaration of function .getbuf.", r.stderr)
	assert.Contains(t, r.stderr, "makes pointer from integer without a cast [-Werror=int-conversion]")
	assert.NoFileExists(t, filepath.Join(dir, "trunc"))

	// svmf away from its layout says what is missing.
	lone := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.MkdirAll(lone, 0o755))
	data, err := os.ReadFile(filepath.Join(prefix, "bin", "svmf"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(lone, "svmf"), data, 0o755))
	cmd := exec.Command(filepath.Join(lone, "svmf"), "cc", "x.c")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "libsvm is not installed beside")
	assert.Contains(t, string(out), filepath.Join("include", "svm.h")+" is missing")
}

// TestFortranPrograms: programs that call the SVM-Fortran runtime directly,
// built with svmf fc, give the sequential answer on 1, 2, 3 and 4 ranks.
func TestFortranPrograms(t *testing.T) {
	for prog, want := range map[string]string{
		"templates": "templates ok: %s ranks, checksum 57758169",
		"sets":      "sets ok: %s ranks",
		"dynamic":   "dynamic ok: %s ranks, total 10746800",
		"exclusive": "exclusive ok: %s ranks",
	} {
		t.Run(prog, func(t *testing.T) {
			exe := build(t, "fc", prog+".f90")
			for _, np := range []string{"1", "2", "3", "4"} {
				r := svmf(t, t.TempDir(), time.Minute, "run", "-np", np, exe)
				ok(t, r)
				assert.Contains(t, r.stdout, fmt.Sprintf(want, np))
			}
		})
	}
}

func TestFortranRuntimeMisuse(t *testing.T) {
	misused(t, build(t, "fc", "misuse.f90"), map[string]string{
		"empty":     "svm_distribute: template T is empty: create or define it before distributing",
		"map":       "svm_distribute_indirect: template T: MAP(2) = 3 names no processor, allowed 1..2",
		"undefined": "svm_loop_begin: ON_HOME loop: schedule over template T, which is declared: distribute it first",
		"ranks":     "svm_distribute: distribute template T2 onto P: mismatched ranks",
		"dispatch":  "svm_dispatch_recv: dispatch receive by the master of the processor set",
		"values":    "svm_dispatch_get: dispatch get of 8 bytes: the master sent 4 bytes here",
	})
}

// TestReadmeFortranExample: the Fortran program the README shows builds and
// runs as shown.
func TestReadmeFortranExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "```fortran\nprogram hello")
	require.GreaterOrEqual(t, start, 0, "the README has no Fortran example")
	end := strings.Index(text[start:], "end program\n")
	require.Greater(t, end, 0)
	dir := t.TempDir()
	src := filepath.Join(dir, "hello.f90")
	require.NoError(t, os.WriteFile(src, []byte(text[start+len("```fortran\n"):start+end+len("end program\n")]), 0o644))
	r := svmf(t, dir, 2*time.Minute, "fc", "-O2", "-o", "hello", "hello.f90")
	ok(t, r)
	r = svmf(t, dir, time.Minute, "run", "-np", "4", "./hello")
	ok(t, r)
	assert.Contains(t, r.stdout, "500500.0")
}
