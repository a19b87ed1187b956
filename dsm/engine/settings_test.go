package engine

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSettingsCheck(t *testing.T) {
	require.NoError(t, DefaultSettings(4).Check(MaxRanks))
	for _, tc := range []struct {
		change func(*Settings)
		says   string
	}{
		{func(s *Settings) { s.NProcs = 0 }, "-np 0: want 1 to 65536 ranks"},
		{func(s *Settings) { s.NProcs = 1 << 62 }, "-np 4611686018427387904: want 1 to 65536 ranks"},
		{func(s *Settings) { s.NProcs = -3 }, "-np -3: want 1 to 65536 ranks"},
		{func(s *Settings) { s.RegionSize = 0 }, "-region 0: not a positive multiple of the 4096-byte page"},
		{func(s *Settings) { s.RegionSize = 1000 }, "-region 1000: not a positive multiple of the 4096-byte page"},
		{func(s *Settings) { s.RegionSize = 8 << 40 }, "-region 8T: want at most 1T"},
		{func(s *Settings) { s.Base = 0 }, "-base 0x0: below 0x10000, the lowest address a process may map"},
		{func(s *Settings) { s.Base = DefaultBase + 1 }, "-base 0x400000000001: not a multiple of the 4096-byte page"},
		{func(s *Settings) { s.Base = 0x7ffffff00000 }, "-base 0x7ffffff00000, -region 256M: the region must end at or below 0x800000000000, where a process's address space ends"},
		{func(s *Settings) { s.Base = math.MaxUint64 &^ 0xfff }, "-base 0xfffffffffffff000, -region 256M: the region must end at or below 0x800000000000, where a process's address space ends"},
		{func(s *Settings) { s.Locks = 0 }, "-locks 0: want 1 to 1048576 lock ids"},
		{func(s *Settings) { s.Locks = math.MaxUint32 }, "-locks 4294967295: want 1 to 1048576 lock ids"},
		{func(s *Settings) { s.Barriers = math.MaxUint32 }, "-barriers 4294967295: want 1 to 1048576 barrier ids"},
		{func(s *Settings) { s.GCThreshold = 0 }, "-gc-threshold 0: want 1 to 1099511627776 bytes"},
		{func(s *Settings) { s.GCThreshold = math.MaxInt64 }, "-gc-threshold 9223372036854775807: want 1 to 1099511627776 bytes"},
	} {
		s := DefaultSettings(4)
		tc.change(&s)
		assert.EqualError(t, s.Check(MaxRanks), tc.says)
		// The engine refuses them the same way.
		_, err := New(Config{Settings: s, Socket: filepath.Join(t.TempDir(), "s")})
		assert.EqualError(t, err, tc.says)
	}
	// A caller's own maximum.
	assert.EqualError(t, DefaultSettings(9).Check(8), "-np 9: want 1 to 8 ranks")
}

// TestCheckResources: a job whose ranks would exhaust this process's
// descriptors or memory is refused before anything is allocated.
func TestCheckResources(t *testing.T) {
	s := DefaultSettings(4)
	require.NoError(t, s.CheckResources(4))

	s.NProcs = MaxRanks
	err := s.CheckResources(MaxRanks)
	if free, ferr := freeFiles(); ferr == nil && free > MaxRanks*filesPerRank+reservedFiles {
		t.Skipf("this process may open %d files: %d ranks fit", free, MaxRanks)
	}
	assert.ErrorContains(t, err, "-np 65536: 65536 ranks here need about 524352 open files, and this process may open")

	// The home-based protocol keeps no state per page of the region up
	// front: four ranks of the largest region fit (4.5 MiB each).
	s = DefaultSettings(4)
	s.RegionSize = MaxRegionSize
	require.NoError(t, s.CheckResources(4))
	assert.Equal(t, uint64(1<<28/4096*72), s.upFrontBytes())
	// The homeless protocol keeps a page's keeper, 4 bytes a page: 1 GiB a
	// rank of a 1T region.
	s.NProcs, s.Homeless = 64, true
	avail, err := availableMemory()
	require.NoError(t, err)
	if 64*s.upFrontBytes() <= avail {
		t.Skipf("%d MiB available: 64 homeless ranks of a 1T region fit", avail>>20)
	}
	err = s.CheckResources(64)
	assert.ErrorContains(t, err, "-region 1T: 64 ranks here need about 65824 MiB of memory for their page state, and")
	_, err = New(Config{Settings: s, Socket: filepath.Join(t.TempDir(), "s")})
	assert.ErrorContains(t, err, "-region 1T: 64 ranks here need")
}

func TestSizeString(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 1000: "1000", 4096: "4K", 256 << 20: "256M", 3 << 30: "3G", 1 << 40: "1T", 1<<30 + 4096: "1048580K", 1<<30 + 1: "1073741825"} {
		assert.Equal(t, want, sizeString(n), "%d", n)
	}
}
