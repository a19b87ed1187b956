package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/dsm/rank"
	"github.com/svmcluster/svm/lrc"
)

// Settings are a job's settings: the same in every engine of the job.
type Settings struct {
	NProcs int
	// RegionSize is the shared region's size in bytes (a multiple of the
	// page size); each rank's memory is sparse, so unused parts cost nothing.
	RegionSize uint64
	// Base is the address of the region in every application process.
	Base uint64
	// Locks and Barriers are the lock and barrier ids applications may use.
	Locks    uint32
	Barriers uint32
	// GCThreshold, Prefetch: see rank.Config.
	GCThreshold int64
	Prefetch    bool
	// Homeless runs TreadMarks' homeless protocol instead of the home-based
	// one (package lrc): the one whose message and byte counts compare with
	// the TreadMarks study's.
	Homeless bool
	// WriteFaults finds writes by write-protection faults even where the
	// kernel can report them without (asynchronous write protection).
	WriteFaults bool
}

// Defaults for a job. The base, 64 TiB, is clear of the Go heap, of the Go
// race detector's shadow (32–34 TiB) and metadata (48–64 TiB), of
// AddressSanitizer's shadow (below 16 TiB), and of where the kernel puts
// executables, libraries and stacks.
const (
	DefaultRegionSize = 256 << 20
	DefaultBase       = 0x400000000000
)

// DefaultSettings returns the defaults for a job of nprocs ranks.
func DefaultSettings(nprocs int) Settings {
	return Settings{
		NProcs: nprocs, RegionSize: DefaultRegionSize, Base: DefaultBase,
		Locks: rank.DefaultLocks, Barriers: rank.DefaultBarriers,
		GCThreshold: rank.DefaultGCThreshold, Prefetch: true,
	}
}

// Bounds on a job's settings, whoever runs it. Every engine holds state
// for every rank of its job, and a daemon serves any local user, so no
// number a user gives may make it allocate without limit.
const (
	// MaxRanks is the most ranks a job may have; svmd's max_ranks may
	// allow fewer.
	MaxRanks = 1 << 16
	// MaxLocks and MaxBarriers bound the lock and barrier ids.
	MaxLocks    = 1 << 20
	MaxBarriers = 1 << 20
	// MaxRegionSize bounds the shared region: 1 TiB, 2^28 pages of 4 KiB.
	MaxRegionSize = 1 << 40
	// MaxGCThreshold bounds the garbage-collection threshold.
	MaxGCThreshold = 1 << 40
	// minBase is the lowest address a process may map by default
	// (vm.mmap_min_addr).
	minBase = 1 << 16
	// addressLimit is where user address space ends on x86-64 and arm64
	// with 4-level page tables; the region must end below it.
	addressLimit = 1 << 47
)

// Check reports the first setting out of bounds, naming it as svmf run's
// flag does, so that svmf, the job submission and every svmd say the same
// thing. maxRanks is the most ranks the caller allows, at most MaxRanks.
func (s Settings) Check(maxRanks int) error {
	ps := uint64(os.Getpagesize())
	switch {
	case s.NProcs < 1 || s.NProcs > maxRanks:
		return fmt.Errorf("-np %d: want 1 to %d ranks", s.NProcs, maxRanks)
	case s.RegionSize == 0 || s.RegionSize%ps != 0:
		return fmt.Errorf("-region %s: not a positive multiple of the %d-byte page", sizeString(s.RegionSize), ps)
	case s.RegionSize > MaxRegionSize:
		return fmt.Errorf("-region %s: want at most %s", sizeString(s.RegionSize), sizeString(MaxRegionSize))
	case s.Base%ps != 0:
		return fmt.Errorf("-base %#x: not a multiple of the %d-byte page", s.Base, ps)
	case s.Base < minBase:
		return fmt.Errorf("-base %#x: below %#x, the lowest address a process may map", s.Base, minBase)
	case s.Base >= addressLimit || s.RegionSize > addressLimit-s.Base:
		return fmt.Errorf("-base %#x, -region %s: the region must end at or below %#x, where a process's address space ends",
			s.Base, sizeString(s.RegionSize), uint64(addressLimit))
	case s.Locks < 1 || s.Locks > MaxLocks:
		return fmt.Errorf("-locks %d: want 1 to %d lock ids", s.Locks, MaxLocks)
	case s.Barriers < 1 || s.Barriers > MaxBarriers:
		return fmt.Errorf("-barriers %d: want 1 to %d barrier ids", s.Barriers, MaxBarriers)
	case s.GCThreshold < 1 || s.GCThreshold > MaxGCThreshold:
		return fmt.Errorf("-gc-threshold %d: want 1 to %d bytes", s.GCThreshold, int64(MaxGCThreshold))
	}
	return nil
}

// What an engine needs for each rank it hosts when the job starts: file
// descriptors (its memory, its userfaultfd, its connection; and where svmd
// starts it, its process and two output pipes, plus the descriptors exec
// holds for a moment), measured; and bytes of protocol state for the
// region. The state of a page is allocated as the ranks first use it, in
// chunks of lrc.ChunkPages pages (lrc's page states and homes, the
// engine's pageBits): up front, only the three tables' lists of chunks (a
// slice each), and with the homeless protocol the keeper of every page (4
// bytes). reservedFiles are left for everything else the process does.
const (
	filesPerRank         = 8
	reservedFiles        = 64
	bytesPerChunk        = 3 * 24
	homelessBytesPerPage = 4
)

// CheckResources reports whether this process can host ranks ranks of a
// job with these settings: enough free file descriptors under its limit,
// and enough available memory for the page state the engine allocates up
// front (upFrontBytes). Refusing here is the difference between a clear
// error and a daemon killed by the kernel or out of descriptors halfway.
func (s Settings) CheckResources(ranks int) error {
	free, err := freeFiles()
	if err != nil {
		return err
	}
	if need := ranks*filesPerRank + reservedFiles; need > free {
		return fmt.Errorf("-np %d: %d ranks here need about %d open files, and this process may open %d more (ulimit -n)",
			s.NProcs, ranks, need, free)
	}
	avail, err := availableMemory()
	if err != nil {
		return err
	}
	if need := uint64(ranks) * s.upFrontBytes(); need > avail {
		return fmt.Errorf("-region %s: %d ranks here need about %d MiB of memory for their page state, and %d MiB is available",
			sizeString(s.RegionSize), ranks, need>>20, avail>>20)
	}
	return nil
}

// upFrontBytes is the page state an engine allocates for one rank when the
// job starts.
func (s Settings) upFrontBytes() uint64 {
	pages := s.RegionSize / uint64(os.Getpagesize())
	n := (pages + lrc.ChunkPages - 1) / lrc.ChunkPages * bytesPerChunk
	if s.Homeless {
		n += pages * homelessBytesPerPage
	}
	return n
}

// freeFiles is how many more descriptors this process may open.
func freeFiles() (int, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("reading the limit of open files: %w", err)
	}
	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, fmt.Errorf("counting open files: %w", err)
	}
	return max(int(min(lim.Cur, 1<<31))-len(open), 0), nil
}

// availableMemory is the kernel's estimate of the memory available for
// new allocations without swapping (MemAvailable).
func availableMemory() (uint64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("reading the available memory: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("MemAvailable:")); ok {
			kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: MemAvailable %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/meminfo: no MemAvailable line")
}

// sizeString writes a byte count as svmf's flags take it: with the largest
// of the K, M, G and T suffixes that divides it.
func sizeString(n uint64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.suffix)
		}
	}
	return strconv.FormatUint(n, 10)
}
