package engine

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// spinFor is how long a rank with a CPU of its own polls for a reply
// before it sleeps.
const spinFor = 200 * time.Microsecond

// pinThread binds the calling goroutine, and its thread, to cpu until the
// returned unpin is called. The threads that serve a bound rank run on the
// rank's CPU: a rank that calls or faults leaves that CPU free, and a
// thread woken there starts at once, where waking one whose CPU went idle
// costs tens of microseconds on a virtual machine.
//
// unpin gives the thread back to the runtime with its former CPU set
// rather than let it end with the goroutine: a thread that ends sends
// SIGKILL to every process it forked with Pdeathsig, as ranks are (package
// launch), and any runtime thread may have forked one.
func pinThread(cpu int) (unpin func()) {
	runtime.LockOSThread()
	var old, one unix.CPUSet
	if unix.SchedGetaffinity(0, &old) != nil {
		return runtime.UnlockOSThread // unbound is only slower
	}
	one.Set(cpu)
	unix.SchedSetaffinity(0, &one) // best effort, as above
	return func() {
		unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}
}

// usableCPUs is the number of CPUs this process may run on.
func usableCPUs() int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return runtime.NumCPU()
	}
	return set.Count()
}

// The runtime's monitor thread (sysmon) wakes every 20 us, costing about
// 18 us of a CPU each time on a virtual machine, whenever it has lately
// taken a processor (P) from a thread in a system call; otherwise it backs
// off to 10 ms. It takes one when no other P is idle, and when one
// goroutine has kept its P for 10 ms. The engine's threads spend their
// lives in poll(2) holding a P each, so the engine runs with a P for each
// hosted rank beyond the CPUs (reserveProcs), and each serving goroutine
// lets the scheduler run it afresh every few milliseconds (yieldEvery).
var procs struct {
	sync.Mutex
	base, reserved int
}

// reserveProcs adds n to the processors the runtime may use; releaseProcs
// gives them back.
func reserveProcs(n int) {
	procs.Lock()
	defer procs.Unlock()
	if procs.reserved == 0 {
		procs.base = runtime.GOMAXPROCS(0)
	}
	procs.reserved += n
	runtime.GOMAXPROCS(procs.base + procs.reserved)
}

func releaseProcs(n int) {
	procs.Lock()
	defer procs.Unlock()
	procs.reserved -= n
	runtime.GOMAXPROCS(procs.base + procs.reserved)
}

// yieldEvery is how often a goroutine that loops on system calls lets the
// scheduler run it again, so that the runtime does not count it as one
// that has held its P too long.
const yieldEvery = 5 * time.Millisecond
