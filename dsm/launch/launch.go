// Package launch starts the processes of a job's ranks, stops them, and
// says how they ended. svmf run and svmd both use it, so a rank sees the
// same environment and ends the same way under either. A rank that
// computes on one thread of its own (a C or Fortran program's) lets its
// other threads leave the CPU it was bound to with ReleaseOtherThreads.
package launch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/dsm"
)

// Rank is one rank's process to start.
type Rank struct {
	Rank, NProcs int
	// Socket is the engine's socket the rank joins through.
	Socket  string
	Program string
	Args    []string
	// Env is the environment before the SVM variables are added; nil means
	// this process's.
	Env []string
	// Dir is the working directory; empty means this process's.
	Dir            string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Credential, when set, is the user and groups the rank runs as.
	Credential *syscall.Credential
	// CPU, when Bind is set, is the one CPU the rank's process and its
	// threads run on.
	Bind bool
	CPU  int
}

// Process is a started rank.
type Process struct {
	Rank int
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts the rank in its own process group, which dies with the
// caller (SIGKILL on the parent's death) and receives signals only through
// it. The kernel sends that SIGKILL when the thread that forked the rank
// ends, not the process: no goroutine of the caller may end while locked
// to its thread (the runtime would end the thread with it).
func Start(r Rank) (*Process, error) {
	cmd := exec.Command(r.Program, r.Args...)
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	// The launcher's CPUs, set by startOn for a bound rank only: a value
	// inherited from the caller's environment would bind an unbound
	// rank's threads.
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, EnvCPUs+"=") })
	cmd.Env = append(env,
		dsm.EnvSocket+"="+r.Socket,
		dsm.EnvRank+"="+strconv.Itoa(r.Rank),
		dsm.EnvNProcs+"="+strconv.Itoa(r.NProcs),
	)
	cmd.Dir = r.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r.Stdin, r.Stdout, r.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true, Credential: r.Credential}
	// Output copying must not wait forever on a descendant that keeps the
	// rank's pipes open after the rank is gone.
	cmd.WaitDelay = time.Second
	if err := startOn(cmd, r); err != nil {
		return nil, err
	}
	p := &Process{Rank: r.Rank, Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// EnvCPUs is set in the environment of a rank bound to a CPU: the CPUs the
// launcher may run on, as a comma-separated list ("0,1,3"), for
// ReleaseOtherThreads.
const EnvCPUs = "SVM_CPUS"

// startOn starts cmd bound to r.CPU if r.Bind. A child inherits the CPU
// set of the thread that forks it, so this goroutine takes a thread of its
// own and binds that for the fork: the rank is bound from its first
// instruction, every thread it starts too.
func startOn(cmd *exec.Cmd, r Rank) error {
	if !r.Bind {
		return cmd.Start()
	}
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("binding rank %d: %w", r.Rank, err)
	}
	cmd.Env = append(cmd.Env, EnvCPUs+"="+formatCPUs(&old))
	var one unix.CPUSet
	one.Set(r.CPU)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("binding rank %d to CPU %d: %w", r.Rank, r.CPU, err)
	}
	err := cmd.Start()
	// Given back even if still bound (only slower): a thread that ended
	// would take the rank with it (Pdeathsig).
	unix.SchedSetaffinity(0, &old)
	runtime.UnlockOSThread()
	return err
}

// ReleaseOtherThreads, in a rank the launcher bound to a CPU, lets every
// thread of the process but the calling one run on any of the launcher's
// CPUs (EnvCPUs); the caller, which must be locked to its thread, stays
// bound. A C or Fortran rank computes on the thread that joined, and its
// other threads are the Go runtime's: its monitor thread wakes every 20 µs
// for a millisecond after each call that follows a pause of 10 ms, and
// bound to the rank's CPU it takes that CPU from the computation at each
// wake (the C IS kernel at one rank: 0.402 s bound, 0.380 s released).
// Threads started later inherit the CPU set of the thread that starts
// them. Without EnvCPUs (the rank is not bound, or not by this package)
// it does nothing.
func ReleaseOtherThreads() error {
	list, ok := os.LookupEnv(EnvCPUs)
	if !ok {
		return nil
	}
	cpus, err := parseCPUs(list)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", EnvCPUs, list, err)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("releasing the runtime's threads: %w", err)
	}
	self := unix.Gettid()
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil || tid == self {
			continue
		}
		// A thread may end meanwhile (ESRCH): nothing to release.
		if err := unix.SchedSetaffinity(tid, &cpus); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("letting thread %d run on CPUs %s: %w", tid, list, err)
		}
	}
	return nil
}

// formatCPUs writes set as EnvCPUs holds it.
func formatCPUs(set *unix.CPUSet) string {
	var list []string
	for _, cpu := range cpusIn(set) {
		list = append(list, strconv.Itoa(cpu))
	}
	return strings.Join(list, ",")
}

// cpusIn lists the CPUs in set, in increasing order.
func cpusIn(set *unix.CPUSet) []int {
	var cpus []int
	for cpu := 0; len(cpus) < set.Count(); cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// parseCPUs reads a set of CPUs written by formatCPUs.
func parseCPUs(list string) (unix.CPUSet, error) {
	var set unix.CPUSet
	for _, field := range strings.Split(list, ",") {
		cpu, err := strconv.Atoi(field)
		if err != nil || cpu < 0 || cpu >= 8*int(unsafe.Sizeof(set)) {
			return set, fmt.Errorf("%q is not a CPU number", field)
		}
		set.Set(cpu)
	}
	return set, nil
}

// Done is closed when the rank has ended and its output is copied.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the rank ended, as exec.Cmd.Wait says; call it after Done.
func (p *Process) Err() error { return p.err }

// Signal sends sig to the rank's process group, unless the rank has ended.
func (p *Process) Signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		syscall.Kill(-p.Cmd.Process.Pid, sig)
	}
}

// Stop sends SIGTERM to every rank's process group, and SIGKILL to those
// still running after grace. It returns at once.
func Stop(ranks []*Process, grace time.Duration) {
	for _, p := range ranks {
		p.Signal(syscall.SIGTERM)
	}
	time.AfterFunc(grace, func() {
		for _, p := range ranks {
			p.Signal(syscall.SIGKILL)
		}
	})
}

// DescribeExit says how a rank ended, from exec.Cmd.Wait's error.
func DescribeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return err.Error()
}

// ExitCode is the status a launcher reports for a rank that ended with
// err: the rank's own status, 128+signal for a signal, else 1.
func ExitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		if c := ee.ExitCode(); c > 0 {
			return c
		}
	}
	return 1
}

// Tagger writes each line written to it to an underlying writer with a
// prefix. Taggers that share a mutex keep their lines whole between them.
type Tagger struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	line   []byte // a line not yet ended
}

// NewTagger returns a Tagger writing to w; mu guards w.
func NewTagger(w io.Writer, prefix string, mu *sync.Mutex) *Tagger {
	return &Tagger{mu: mu, w: w, prefix: prefix}
}

// Write writes every complete line; a partial one waits for its end or
// for Close. It always consumes all of p.
func (t *Tagger) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.line = append(t.line, p...)
			break
		}
		t.line = append(t.line, p[:i+1]...)
		p = p[i+1:]
		t.flush()
	}
	return n, nil
}

// Close writes a last line that has no newline.
func (t *Tagger) Close() error {
	if len(t.line) > 0 {
		t.line = append(t.line, '\n')
		t.flush()
	}
	return nil
}

func (t *Tagger) flush() {
	t.mu.Lock()
	io.WriteString(t.w, t.prefix)
	t.w.Write(t.line)
	t.mu.Unlock()
	t.line = t.line[:0]
}

// Binding policies: BindAuto binds rank i to the i-th CPU this process may
// use when there are enough for every rank, as MPI launchers do, and
// binds nothing otherwise; BindNone never binds; BindCPU binds ranks to
// the CPUs in turn, sharing them when there are more ranks than CPUs.
const (
	BindAuto = "auto"
	BindNone = "none"
	BindCPU  = "cpu"
)

// CheckBinding says what is wrong with a binding policy's name, if anything;
// the empty name means BindAuto.
func CheckBinding(policy string) error {
	switch policy {
	case "", BindAuto, BindNone, BindCPU:
		return nil
	}
	return fmt.Errorf("binding %q: want %s, %s or %s", policy, BindAuto, BindNone, BindCPU)
}

// Bindings returns the CPU of each of n ranks under policy (empty means
// BindAuto), or nil when they run unbound.
func Bindings(n int, policy string) ([]int, error) {
	if err := CheckBinding(policy); err != nil {
		return nil, err
	}
	if policy == BindNone {
		return nil, nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("reading the CPUs this process may use: %w", err)
	}
	cpus := cpusIn(&set)
	if (policy == BindAuto || policy == "") && n > len(cpus) {
		return nil, nil
	}
	bind := make([]int, n)
	for r := range bind {
		bind[r] = cpus[r%len(cpus)]
	}
	return bind, nil
}
