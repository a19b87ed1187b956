// Package uffd is the kernel's userfaultfd interface as SVM uses it: the
// constants and structures of <linux/userfaultfd.h> under their kernel names,
// and thin wrappers around the syscall and its ioctls; and the PAGEMAP_SCAN
// ioctl of <linux/fs.h>, which lists the pages written since they were
// write-protected with asynchronous write protection. golang.org/x/sys/unix
// has SYS_USERFAULTFD but none of these (nor do Debian 12's headers have the
// asynchronous ones, Linux 6.7+), so they are defined here, once.
//
// Every error wraps the errno, so errors.Is(err, unix.EEXIST) works.
package uffd

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Flags of the userfaultfd syscall, ioctl numbers, features, modes and event
// codes, as <linux/userfaultfd.h> names them.
const (
	UFFD_USER_MODE_ONLY = 1

	UFFD_API = 0xAA

	UFFDIO_API          = 0xc018aa3f // _IOWR(UFFDIO, 0x3F, struct uffdio_api)
	UFFDIO_REGISTER     = 0xc020aa00 // _IOWR(UFFDIO, 0x00, struct uffdio_register)
	UFFDIO_UNREGISTER   = 0x8010aa01 // _IOR(UFFDIO, 0x01, struct uffdio_range)
	UFFDIO_WAKE         = 0x8010aa02 // _IOR(UFFDIO, 0x02, struct uffdio_range)
	UFFDIO_WRITEPROTECT = 0xc018aa06 // _IOWR(UFFDIO, 0x06, struct uffdio_writeprotect)
	UFFDIO_ZEROPAGE     = 0xc020aa04 // _IOWR(UFFDIO, 0x04, struct uffdio_zeropage)
	UFFDIO_CONTINUE     = 0xc020aa07 // _IOWR(UFFDIO, 0x07, struct uffdio_continue)

	UFFD_FEATURE_MISSING_SHMEM      = 1 << 5
	UFFD_FEATURE_MINOR_SHMEM        = 1 << 10
	UFFD_FEATURE_WP_HUGETLBFS_SHMEM = 1 << 12
	// UFFD_FEATURE_WP_ASYNC: a write to a write-protected page is not
	// delivered as a fault; the kernel lifts the protection itself, and
	// PAGEMAP_SCAN reports the page written.
	UFFD_FEATURE_WP_ASYNC = 1 << 15

	UFFDIO_REGISTER_MODE_MISSING = 1 << 0
	UFFDIO_REGISTER_MODE_WP      = 1 << 1
	UFFDIO_REGISTER_MODE_MINOR   = 1 << 2

	UFFDIO_WRITEPROTECT_MODE_WP       = 1 << 0
	UFFDIO_WRITEPROTECT_MODE_DONTWAKE = 1 << 1
	UFFDIO_CONTINUE_MODE_DONTWAKE     = 1 << 0
	UFFDIO_CONTINUE_MODE_WP           = 1 << 1

	UFFD_EVENT_PAGEFAULT = 0x12

	UFFD_PAGEFAULT_FLAG_WRITE = 1 << 0
	UFFD_PAGEFAULT_FLAG_WP    = 1 << 1
	UFFD_PAGEFAULT_FLAG_MINOR = 1 << 2

	// MsgSize is sizeof(struct uffd_msg).
	MsgSize = 32

	PAGEMAP_SCAN          = 0xc0606610 // _IOWR('f', 16, struct pm_scan_arg)
	PAGE_IS_WRITTEN       = 1 << 1
	PM_SCAN_WP_MATCHING   = 1 << 0
	PM_SCAN_CHECK_WPASYNC = 1 << 1
)

// The ioctl argument structures.
type (
	uffdioAPI struct {
		api, features, ioctls uint64
	}
	uffdioRange struct {
		start, len uint64
	}
	uffdioRegister struct {
		rng          uffdioRange
		mode, ioctls uint64
	}
	uffdioWriteprotect struct {
		rng  uffdioRange
		mode uint64
	}
	uffdioContinue struct {
		rng    uffdioRange
		mode   uint64
		mapped int64
	}
	uffdioZeropage struct {
		rng      uffdioRange
		mode     uint64
		zeropage int64
	}
	pmScanArg struct {
		size, flags, start, end, walkEnd, vec, vecLen, maxPages    uint64
		categoryInverted, categoryMask, categoryAnyofMask, retMask uint64
	}
)

// PageRegion is a run of pages [Start, End) PAGEMAP_SCAN found in the
// categories asked for (struct page_region).
type PageRegion struct {
	Start, End, Categories uint64
}

// Written appends to dst the runs of pages in [start, end) that the calling
// process has mapped and written since they were write-protected (or that
// are mapped writable), reading its own page tables through pagemap, an open
// /proc/self/pagemap. The kernel allows this only for the process's own
// tables, and only for a userfaultfd with UFFD_FEATURE_WP_ASYNC. buf is
// scratch space for one ioctl's answer.
func Written(pagemap int, start, end uintptr, buf []PageRegion, dst []PageRegion) ([]PageRegion, error) {
	return scan(pagemap, start, end, PM_SCAN_CHECK_WPASYNC, buf, dst)
}

// WrittenProtect is Written that also write-protects again, in the same
// walk of the page tables, every page it reports: a write after it is
// recorded anew, without the handler's help (and, since the caller protects
// its own tables, without interrupting another CPU).
func WrittenProtect(pagemap int, start, end uintptr, buf []PageRegion, dst []PageRegion) ([]PageRegion, error) {
	return scan(pagemap, start, end, PM_SCAN_WP_MATCHING|PM_SCAN_CHECK_WPASYNC, buf, dst)
}

func scan(pagemap int, start, end uintptr, flags uint64, buf []PageRegion, dst []PageRegion) ([]PageRegion, error) {
	for start < end {
		arg := pmScanArg{
			size: uint64(unsafe.Sizeof(pmScanArg{})), flags: flags,
			start: uint64(start), end: uint64(end),
			vec: uint64(uintptr(unsafe.Pointer(&buf[0]))), vecLen: uint64(len(buf)),
			categoryMask: PAGE_IS_WRITTEN, retMask: PAGE_IS_WRITTEN,
		}
		n, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(pagemap), PAGEMAP_SCAN, uintptr(unsafe.Pointer(&arg)))
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return dst, fmt.Errorf("pagemap scan [%#x,%#x): %w", start, end, errno)
		}
		dst = append(dst, buf[:n]...)
		if uintptr(arg.walkEnd) <= start {
			return dst, fmt.Errorf("pagemap scan [%#x,%#x) made no progress", start, end)
		}
		start = uintptr(arg.walkEnd)
	}
	return dst, nil
}

// AsyncWritesError reports why this kernel cannot track writes without
// faults — userfaultfd with UFFD_FEATURE_WP_ASYNC on shared memory, and
// PAGEMAP_SCAN — or nil when it can.
func AsyncWritesError() error {
	fd, err := Open(UFFD_FEATURE_MINOR_SHMEM | UFFD_FEATURE_WP_HUGETLBFS_SHMEM | UFFD_FEATURE_WP_ASYNC)
	if err != nil {
		return err
	}
	unix.Close(fd)
	pagemap, err := unix.Open("/proc/self/pagemap", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening /proc/self/pagemap: %w", err)
	}
	defer unix.Close(pagemap)
	page := uintptr(unsafe.Pointer(&pagemap)) &^ 4095 // a page of this goroutine's stack
	_, err = scan(pagemap, page, page+4096, 0, make([]PageRegion, 1), nil)
	return err
}

// Open creates a userfaultfd that handles faults from user mode only (what
// an unprivileged process may do with vm.unprivileged_userfaultfd=0), non
// blocking and close-on-exec, and negotiates the API with features.
func Open(features uint64) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|unix.O_NONBLOCK|UFFD_USER_MODE_ONLY, 0, 0)
	if errno != 0 {
		return -1, fmt.Errorf("userfaultfd: %w", errno)
	}
	api := uffdioAPI{api: UFFD_API, features: features}
	if err := ioctl(int(fd), UFFDIO_API, unsafe.Pointer(&api)); err != nil {
		unix.Close(int(fd))
		return -1, fmt.Errorf("userfaultfd API with features %#x: %w", features, err)
	}
	return int(fd), nil
}

// Register registers [start, start+length) with the given modes.
func Register(fd int, start, length uintptr, mode uint64) error {
	reg := uffdioRegister{rng: uffdioRange{uint64(start), uint64(length)}, mode: mode}
	if err := ioctl(fd, UFFDIO_REGISTER, unsafe.Pointer(&reg)); err != nil {
		return fmt.Errorf("userfaultfd register [%#x,+%#x) mode %#x: %w", start, length, mode, err)
	}
	return nil
}

// Continue maps the page-cache pages of [start, start+length) into the
// registering process, write-protected if mode has UFFDIO_CONTINUE_MODE_WP,
// and wakes the threads waiting on them.
func Continue(fd int, start, length uintptr, mode uint64) error {
	c := uffdioContinue{rng: uffdioRange{uint64(start), uint64(length)}, mode: mode}
	if err := ioctl(fd, UFFDIO_CONTINUE, unsafe.Pointer(&c)); err != nil {
		return fmt.Errorf("userfaultfd continue [%#x,+%#x): %w", start, length, err)
	}
	return nil
}

// ZeroPage fills the holes [start, start+length) of the registering
// process's shared memory with zeroed pages, maps them writable and wakes
// the threads waiting on them; a page already in the page cache fails it
// with EEXIST. One call in place of fallocate and Continue (mode 0), and
// cheaper.
func ZeroPage(fd int, start, length uintptr) error {
	z := uffdioZeropage{rng: uffdioRange{uint64(start), uint64(length)}}
	if err := ioctl(fd, UFFDIO_ZEROPAGE, unsafe.Pointer(&z)); err != nil {
		return fmt.Errorf("userfaultfd zeropage [%#x,+%#x): %w", start, length, err)
	}
	return nil
}

// WriteProtect sets (mode UFFDIO_WRITEPROTECT_MODE_WP) or clears (mode 0)
// write protection on [start, start+length); clearing wakes the waiters.
func WriteProtect(fd int, start, length uintptr, mode uint64) error {
	wp := uffdioWriteprotect{rng: uffdioRange{uint64(start), uint64(length)}, mode: mode}
	if err := ioctl(fd, UFFDIO_WRITEPROTECT, unsafe.Pointer(&wp)); err != nil {
		return fmt.Errorf("userfaultfd write-protect [%#x,+%#x) mode %#x: %w", start, length, mode, err)
	}
	return nil
}

// Wake wakes the threads waiting on faults in [start, start+length).
func Wake(fd int, start, length uintptr) error {
	r := uffdioRange{uint64(start), uint64(length)}
	if err := ioctl(fd, UFFDIO_WAKE, unsafe.Pointer(&r)); err != nil {
		return fmt.Errorf("userfaultfd wake [%#x,+%#x): %w", start, length, err)
	}
	return nil
}

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	for {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		switch errno {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return errno
	}
}

// Fault is a page-fault event read from a userfaultfd.
type Fault struct {
	Address uint64
	Flags   uint64 // UFFD_PAGEFAULT_FLAG_*
}

// Write reports whether the access was a write.
func (f Fault) Write() bool { return f.Flags&UFFD_PAGEFAULT_FLAG_WRITE != 0 }

// ParseFault decodes one struct uffd_msg. ok is false for events other than
// page faults.
func ParseFault(msg []byte) (f Fault, ok bool) {
	if len(msg) < MsgSize || msg[0] != UFFD_EVENT_PAGEFAULT {
		return Fault{}, false
	}
	return Fault{
		Flags:   binary.NativeEndian.Uint64(msg[8:]),
		Address: binary.NativeEndian.Uint64(msg[16:]),
	}, true
}
