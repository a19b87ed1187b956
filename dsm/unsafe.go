package dsm

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The shared region lives outside the Go heap, at an address the engine
// chose. Everything that turns such an address into a Go pointer is here.

// Slice returns a typed view of count elements of shared memory at a. The
// memory must hold T values laid out as Go lays them out, and T must not
// contain Go pointers (they would point into one rank's private heap).
func Slice[T any](a Addr, count int) []T {
	if count == 0 {
		return nil
	}
	return unsafe.Slice((*T)(pointer(uintptr(a))), count)
}

// Bytes returns shared memory [a, a+size) as bytes.
func Bytes(a Addr, size int) []byte { return Slice[byte](a, size) }

// pointer turns an address outside the Go heap into a pointer. Reading the
// uintptr's bits as a pointer avoids a conversion that vet cannot prove
// safe; the garbage collector ignores pointers outside its heap.
func pointer(a uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a))
}

// mapFixed maps memfd at base, failing if anything is mapped there already.
// A memfd of -1 maps private anonymous memory instead.
func mapFixed(base, size uintptr, memfd int) error {
	flags, fd := uintptr(unix.MAP_SHARED|unix.MAP_FIXED_NOREPLACE), uintptr(memfd)
	if memfd < 0 {
		flags = unix.MAP_PRIVATE | unix.MAP_ANONYMOUS | unix.MAP_NORESERVE | unix.MAP_FIXED_NOREPLACE
	}
	got, _, errno := unix.Syscall6(unix.SYS_MMAP, base, size, unix.PROT_READ|unix.PROT_WRITE, flags, fd, 0)
	switch {
	case errno == unix.EEXIST:
		return fmt.Errorf("mapping the shared region at %#x: the range [%#x,+%#x) is already in use in this process; start the job with another base address", base, base, size)
	case errno != 0:
		return fmt.Errorf("mapping the shared region at %#x: %w", base, errno)
	case got != base:
		// A kernel before 4.17 ignores MAP_FIXED_NOREPLACE and maps elsewhere.
		unix.Syscall(unix.SYS_MUNMAP, got, size, 0)
		return fmt.Errorf("mapping the shared region: asked for %#x, got %#x (the kernel lacks MAP_FIXED_NOREPLACE)", base, got)
	}
	return nil
}

func unmap(base, size uintptr) {
	unix.Syscall(unix.SYS_MUNMAP, base, size, 0)
}

// zap drops this process's mappings of [a, a+size): the next access faults
// and the engine brings the pages up to date first.
func zap(a, size uintptr) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, a, size, unix.MADV_DONTNEED); errno != 0 {
		return errno
	}
	return nil
}
