package dsm

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/dsm/internal/ctl"
)

// TestCachedLockLetsSchedulerRun: a rank that takes a cached lock, with no
// call to the engine, still lets the scheduler run its goroutine afresh
// every yieldEvery. A C or Fortran program that makes no other call for
// 10 ms otherwise has its processor taken by the runtime's monitor, which
// then wakes every 20 us, each wake on another rank's CPU.
func TestCachedLockLetsSchedulerRun(t *testing.T) {
	area, fd, err := ctl.Create(64, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer area.Close()
	unix.Close(fd)
	n := &Node{nprocs: 2, pageSize: unix.Getpagesize(), locks: 8, held: map[int]bool{}, pagemap: -1, ctl: area}

	// The engine granted lock 3; the application releases it into the
	// cache and takes it back from there.
	area.SetHeld(3, false)
	n.held[3] = true
	if err := n.Unlock(3); err != nil {
		t.Fatal(err)
	}
	n.yielded = time.Since(clockOrigin) - 2*yieldEvery
	before := n.yielded
	if err := n.Lock(3); err != nil {
		t.Fatal(err)
	}
	if !n.held[3] || area.CachedLocks() != 1 {
		t.Fatalf("Lock(3) did not take the cached lock: held %v, taken from the cache %d times", n.held[3], area.CachedLocks())
	}
	if n.yielded <= before {
		t.Fatalf("a cached Lock %v after the last yield did not yield", 2*yieldEvery)
	}

	// Within yieldEvery of the last one, neither yields again.
	last := n.yielded
	if err := n.Unlock(3); err != nil {
		t.Fatal(err)
	}
	if err := n.Lock(3); err != nil {
		t.Fatal(err)
	}
	if n.yielded != last {
		t.Fatal("cached lock calls yielded again within yieldEvery")
	}
}
