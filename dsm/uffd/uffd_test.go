package uffd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel facts SVM stands on, checked with the faulting process apart
// from the handling one, as in a job: a first read of a never-touched shmem
// page raises a missing fault, CONTINUE with MODE_WP maps it write-protected,
// a write then raises a write-protect fault, clearing WP lets it through,
// MADV_DONTNEED makes the next access raise a minor fault, and re-protecting
// makes writes fault again.

const (
	testBase  = 0x6a0000000000
	testPages = 4
)

var pageSize = os.Getpagesize()

func TestMain(m *testing.M) {
	if os.Getenv("UFFD_TEST_CHILD") == "async" {
		if err := asyncChild(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("UFFD_TEST_CHILD") == "1" {
		if err := child(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child maps the memfd (fd 3) at testBase, registers it with a userfaultfd,
// passes the userfaultfd over the socket (fd 4) and performs the accesses,
// reporting each value it read.
func child() error {
	memfd, sock := 3, 4
	size := uintptr(testPages * pageSize)
	addr, _, errno := unix.Syscall6(unix.SYS_MMAP, testBase, size, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_SHARED|unix.MAP_FIXED_NOREPLACE, uintptr(memfd), 0)
	if errno != 0 || addr != testBase {
		return fmt.Errorf("mmap at %#x: %v", testBase, errno)
	}
	fd, err := Open(UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM | UFFD_FEATURE_WP_HUGETLBFS_SHMEM)
	if err != nil {
		return err
	}
	if err := Register(fd, testBase, size, UFFDIO_REGISTER_MODE_MISSING|UFFDIO_REGISTER_MODE_MINOR|UFFDIO_REGISTER_MODE_WP); err != nil {
		return err
	}
	if err := unix.Sendmsg(sock, []byte("uffd"), unix.UnixRights(fd), nil, 0); err != nil {
		return err
	}
	unix.Close(fd)
	// The mapping is outside the Go heap; reinterpreting the address avoids
	// a uintptr-to-pointer conversion that vet cannot prove safe.
	mem := unsafe.Slice(*(**byte)(unsafe.Pointer(&addr)), size)
	say := func(format string, args ...any) {
		unix.Write(sock, fmt.Appendf(nil, format, args...))
	}
	say("read %d", mem[0]) // missing fault: the handler fills the page
	mem[1] = 7             // write-protect fault
	say("read %d", mem[1]) // no fault
	var wait [1]byte
	unix.Read(sock, wait[:]) // the handler zaps nothing itself; we do:
	if err := unix.Madvise(mem[:pageSize], unix.MADV_DONTNEED); err != nil {
		return err
	}
	say("read %d", mem[1])   // minor fault: the page cache kept the write
	mem[2] = 9               // write-protect fault again (mapped with MODE_WP)
	unix.Read(sock, wait[:]) // the handler re-protected the page
	mem[3] = 11              // write-protect fault once more
	say("done %d %d %d", mem[1], mem[2], mem[3])
	return nil
}

// asyncChild is child with asynchronous write protection: it write-protects
// its whole mapping up front, then reads which pages it wrote from its own
// page tables, and reports them.
func asyncChild() error {
	memfd, sock := 3, 4
	size := uintptr(testPages * pageSize)
	addr, _, errno := unix.Syscall6(unix.SYS_MMAP, testBase, size, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_SHARED|unix.MAP_FIXED_NOREPLACE, uintptr(memfd), 0)
	if errno != 0 || addr != testBase {
		return fmt.Errorf("mmap at %#x: %v", testBase, errno)
	}
	fd, err := Open(UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM | UFFD_FEATURE_WP_HUGETLBFS_SHMEM | UFFD_FEATURE_WP_ASYNC)
	if err != nil {
		return err
	}
	if err := Register(fd, testBase, size, UFFDIO_REGISTER_MODE_MISSING|UFFDIO_REGISTER_MODE_MINOR|UFFDIO_REGISTER_MODE_WP); err != nil {
		return err
	}
	pagemap, err := unix.Open("/proc/self/pagemap", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	written := func() string {
		rs, err := Written(pagemap, testBase, testBase+size, make([]PageRegion, 8), nil)
		if err != nil {
			return err.Error()
		}
		out := "written"
		for _, r := range rs {
			out += fmt.Sprintf(" %d-%d", (r.Start-testBase)/uint64(pageSize), (r.End-testBase)/uint64(pageSize))
		}
		return out
	}
	say := func(s string) { unix.Write(sock, []byte(s)) }
	wait := func() { var b [1]byte; unix.Read(sock, b[:]) }
	say(written()) // never mapped: reported written until protected
	if err := WriteProtect(fd, testBase, size, UFFDIO_WRITEPROTECT_MODE_WP); err != nil {
		return err
	}
	if err := unix.Sendmsg(sock, []byte("uffd"), unix.UnixRights(fd), nil, 0); err != nil {
		return err
	}
	unix.Close(fd)
	mem := unsafe.Slice(*(**byte)(unsafe.Pointer(&addr)), size)
	say(written())          // nothing
	say(fmt.Sprint(mem[0])) // missing fault; mapped write-protected
	mem[0] = 5              // no fault
	say(written())          // page 0
	wait()                  // the handler protects page 0 again
	say(written())          // nothing
	mem[pageSize] = 6       // missing write fault; mapped writable
	say(written())          // page 1
	if err := unix.Madvise(mem[:pageSize], unix.MADV_DONTNEED); err != nil {
		return err
	}
	say(fmt.Sprint(written(), " ", mem[0])) // page 0 stays unwritten; minor fault
	if err := unix.Madvise(mem[pageSize:2*pageSize], unix.MADV_DONTNEED); err != nil {
		return err
	}
	say(written()) // dropped unprotected: looks written
	mem[0] = 7     // no fault
	scanPage0 := func(f func(int, uintptr, uintptr, []PageRegion, []PageRegion) ([]PageRegion, error)) string {
		rs, err := f(pagemap, testBase, testBase+uintptr(pageSize), make([]PageRegion, 8), nil)
		return fmt.Sprint(len(rs), err)
	}
	say(scanPage0(WrittenProtect)) // page 0 written, and protected again
	say(scanPage0(Written))        // not written since
	mem[0] = 8                     // no fault
	say(scanPage0(Written))        // written again
	mem[2*pageSize] = 9            // missing write fault under the protection set up front
	say(fmt.Sprint(written(), " ", mem[2*pageSize+1]))
	return nil
}

// startChild starts the test binary as the child of the given mode (as user
// nobody when the tests run as root) with a memfd of testPages pages and one
// end of a socket, and returns it, the memfd mapped here, and this end.
func startChild(t *testing.T, mode string) (*exec.Cmd, []byte, int) {
	t.Helper()
	memfd, err := unix.MemfdCreate("svm-uffd-test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	// Owned by os.File values kept to the end of the test: their
	// finalizers must not close descriptors the test still uses.
	mem := os.NewFile(uintptr(memfd), "memfd")
	t.Cleanup(func() { mem.Close() })
	size := testPages * pageSize
	if err := unix.Ftruncate(memfd, int64(size)); err != nil {
		t.Fatal(err)
	}
	view, err := unix.Mmap(memfd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(view) })
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	here, there := os.NewFile(uintptr(pair[0]), "sock"), os.NewFile(uintptr(pair[1]), "sock")
	t.Cleanup(func() { here.Close() })
	cmd := exec.Command(childBinary(t), "-test.run=^$")
	cmd.Env = append(os.Environ(), "UFFD_TEST_CHILD="+mode)
	cmd.ExtraFiles = []*os.File{mem, there}
	cmd.Stderr = os.Stderr
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	there.Close()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, view, pair[0]
}

// receiveFD receives the userfaultfd the child sends on sock.
func receiveFD(t *testing.T, sock int) int {
	t.Helper()
	buf := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, 0)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("no userfaultfd from the child: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]) })
	return fds[0]
}

// childBinary returns the test binary, copied where user nobody can run it
// when the tests run as root, so that the child is unprivileged.
func childBinary(t *testing.T) string {
	if os.Getuid() != 0 {
		return os.Args[0]
	}
	dir, err := os.MkdirTemp("", "svm-uffd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	path := dir + "/child"
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// nextFault waits up to 5 s for the next fault on userfaultfd fd and
// returns it, failing the test unless it is a page fault on page page.
func nextFault(t *testing.T, fd, page int) Fault {
	t.Helper()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if _, err := unix.Poll(pfd, 5000); err != nil || pfd[0].Revents&unix.POLLIN == 0 {
		t.Fatalf("no fault within 5 s: %v", err)
	}
	msg := make([]byte, MsgSize)
	if _, err := unix.Read(fd, msg); err != nil {
		t.Fatal(err)
	}
	f, ok := ParseFault(msg)
	if !ok || f.Address&^uint64(pageSize-1) != testBase+uint64(page*pageSize) {
		t.Fatalf("fault %+v, want one on page %d", f, page)
	}
	return f
}

func TestKernelFacts(t *testing.T) {
	cmd, view, sock := startChild(t, "1")
	buf := make([]byte, 64)
	fd := receiveFD(t, sock)

	// next waits for the child's next fault and returns its flags.
	next := func() Fault {
		t.Helper()
		return nextFault(t, fd, 0)
	}
	report := func(want string) {
		t.Helper()
		n, err := unix.Read(sock, buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("child said %q (%v), want %q", buf[:n], err, want)
		}
	}

	f := next()
	if f.Flags&(UFFD_PAGEFAULT_FLAG_MINOR|UFFD_PAGEFAULT_FLAG_WP) != 0 || f.Write() {
		t.Fatalf("first read: flags %#x, want a missing read fault", f.Flags)
	}
	view[0] = 42 // fills the page cache through the handler's own view
	if err := Continue(fd, testBase, uintptr(pageSize), UFFDIO_CONTINUE_MODE_WP); err != nil {
		t.Fatal(err)
	}
	report("read 42")
	if f = next(); f.Flags&UFFD_PAGEFAULT_FLAG_WP == 0 || !f.Write() {
		t.Fatalf("write to a protected page: flags %#x, want a write-protect fault", f.Flags)
	}
	if err := WriteProtect(fd, testBase, uintptr(pageSize), 0); err != nil {
		t.Fatal(err)
	}
	report("read 7")
	unix.Write(sock, []byte{1})
	if f = next(); f.Flags&UFFD_PAGEFAULT_FLAG_MINOR == 0 || f.Write() {
		t.Fatalf("read after MADV_DONTNEED: flags %#x, want a minor read fault", f.Flags)
	}
	if err := Continue(fd, testBase, uintptr(pageSize), UFFDIO_CONTINUE_MODE_WP); err != nil {
		t.Fatal(err)
	}
	report("read 7")
	if f = next(); f.Flags&UFFD_PAGEFAULT_FLAG_WP == 0 {
		t.Fatalf("write after CONTINUE with MODE_WP: flags %#x, want a write-protect fault", f.Flags)
	}
	// A duplicate CONTINUE of a mapped page fails with EEXIST: the handler
	// treats it as done and wakes the waiter.
	if err := Continue(fd, testBase, uintptr(pageSize), 0); !errors.Is(err, unix.EEXIST) {
		t.Fatalf("CONTINUE of a mapped page: %v, want EEXIST", err)
	}
	if err := WriteProtect(fd, testBase, uintptr(pageSize), 0); err != nil {
		t.Fatal(err)
	}
	if err := WriteProtect(fd, testBase, uintptr(pageSize), UFFDIO_WRITEPROTECT_MODE_WP); err != nil {
		t.Fatal(err)
	}
	unix.Write(sock, []byte{1})
	if f = next(); f.Flags&UFFD_PAGEFAULT_FLAG_WP == 0 {
		t.Fatalf("write after re-protecting: flags %#x, want a write-protect fault", f.Flags)
	}
	if err := WriteProtect(fd, testBase, uintptr(pageSize), 0); err != nil {
		t.Fatal(err)
	}
	report("done 7 9 11")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if view[1] != 7 || view[2] != 9 || view[3] != 11 {
		t.Fatalf("the handler's view holds %v, want [42 7 9 11]", view[:4])
	}
}

// TestKernelFactsAsync: what asynchronous write protection does, as SVM uses
// it, with the faulting process apart from the handling one: a never-mapped
// page looks written until it is protected; after protecting the whole
// mapping, faults on unmapped pages still come (missing or minor), a write
// to a mapped protected page comes as none and shows in the process's scan
// of its own page tables, another process (the handler) can protect it
// again, and a page dropped while protected stays unwritten while one
// dropped unprotected looks written (so SVM protects before it drops).
func TestKernelFactsAsync(t *testing.T) {
	if err := AsyncWritesError(); err != nil {
		t.Skipf("this kernel has no asynchronous write protection: %v", err)
	}
	cmd, view, sock := startChild(t, "async")
	buf := make([]byte, 64)
	report := func(want string) {
		t.Helper()
		n, err := unix.Read(sock, buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("child said %q (%v), want %q", buf[:n], err, want)
		}
	}
	report(fmt.Sprintf("written 0-%d", testPages))
	fd := receiveFD(t, sock)
	next := func(page int) Fault {
		t.Helper()
		return nextFault(t, fd, page)
	}
	page := func(p int) uintptr { return testBase + uintptr(p*pageSize) }

	report("written")
	if f := next(0); f.Flags&UFFD_PAGEFAULT_FLAG_WP != 0 || f.Write() {
		t.Fatalf("first read: flags %#x, want a missing read fault", f.Flags)
	}
	view[0] = 3
	if err := Continue(fd, page(0), uintptr(pageSize), UFFDIO_CONTINUE_MODE_WP); err != nil {
		t.Fatal(err)
	}
	report("3")
	report("written 0-1") // the write did not fault
	if err := WriteProtect(fd, page(0), uintptr(pageSize), UFFDIO_WRITEPROTECT_MODE_WP); err != nil {
		t.Fatal(err)
	}
	unix.Write(sock, []byte{1})
	report("written")
	if f := next(1); !f.Write() {
		t.Fatalf("first write: flags %#x, want a write fault", f.Flags)
	}
	view[pageSize] = 0 // into the page cache, as the engine's populate does
	if err := Continue(fd, page(1), uintptr(pageSize), 0); err != nil {
		t.Fatal(err)
	}
	report("written 1-2")
	if f := next(0); f.Flags&UFFD_PAGEFAULT_FLAG_MINOR == 0 {
		t.Fatalf("read after MADV_DONTNEED: flags %#x, want a minor fault", f.Flags)
	}
	if err := Continue(fd, page(0), uintptr(pageSize), UFFDIO_CONTINUE_MODE_WP); err != nil {
		t.Fatal(err)
	}
	report("written 1-2 5")
	report("written 1-2")
	report("1 <nil>") // WrittenProtect found page 0 written...
	report("0 <nil>") // ...and protected it again
	report("1 <nil>") // so the next write shows
	// A page never mapped nor in the page cache, protected with the rest
	// (a marker in its page table): zero-filled and mapped writable in one
	// call, its write is seen written like a page continued writable.
	if f := next(2); !f.Write() || f.Flags&UFFD_PAGEFAULT_FLAG_MINOR != 0 {
		t.Fatalf("write to a hole: flags %#x, want a missing write fault", f.Flags)
	}
	if err := ZeroPage(fd, page(1), uintptr(pageSize)); !errors.Is(err, unix.EEXIST) {
		t.Fatalf("zeropage of a page in the page cache, dropped from the page table: %v, want EEXIST", err)
	}
	if err := ZeroPage(fd, page(2), uintptr(pageSize)); err != nil {
		t.Fatal(err)
	}
	report("written 0-3 0")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if view[0] != 8 || view[pageSize] != 6 || view[2*pageSize] != 9 {
		t.Fatalf("the handler's view holds %d, %d and %d, want 8, 6 and 9", view[0], view[pageSize], view[2*pageSize])
	}
}
