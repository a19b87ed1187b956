package daemon

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/dsm/engine"
)

func TestSpecCheck(t *testing.T) {
	good := func() JobSpec {
		return JobSpec{
			Settings: engine.DefaultSettings(4), Hosts: []HostSlots{{"n1", 2}, {"n2", 2}},
			Program: "/bin/true", Args: []string{"x"}, Env: []string{"A=b"}, Dir: "/tmp", KillAfter: int64(time.Second),
		}
	}
	require.NoError(t, good().Check(DefaultMaxRanks))
	for _, tc := range []struct {
		change func(*JobSpec)
		says   string
	}{
		{func(s *JobSpec) { s.Settings.NProcs = 1 << 62 }, "-np 4611686018427387904: want 1 to 1024 ranks"},
		{func(s *JobSpec) { s.Settings.NProcs = DefaultMaxRanks + 1 }, "-np 1025: want 1 to 1024 ranks"},
		{func(s *JobSpec) { s.Settings.Locks = math.MaxUint32 }, "-locks 4294967295: want 1 to 1048576 lock ids"},
		{func(s *JobSpec) { s.Settings.RegionSize = 0 }, "-region 0: not a positive multiple of the 4096-byte page"},
		{func(s *JobSpec) { s.Hosts = nil }, "--hosts: 0 nodes; want 1 to 65536"},
		{func(s *JobSpec) { s.Hosts[1].Node = "n/2" }, `--hosts: node name "n/2": '/' is not a letter, digit, '-', '.' or '_'`},
		{func(s *JobSpec) { s.Hosts[1].Slots = 0 }, `--hosts: node "n2": 0 slots; want 1 to 4096`},
		{func(s *JobSpec) { s.Hosts[1].Slots = math.MaxInt }, `--hosts: node "n2": 9223372036854775807 slots; want 1 to 4096`},
		{func(s *JobSpec) { s.Hosts[1].Node = "n1" }, `--hosts: node "n1" is listed twice`},
		{func(s *JobSpec) { s.Program = "true" }, `program "true": want an absolute path (svmf resolves it)`},
		{func(s *JobSpec) { s.Dir = "" }, `working directory "": want an absolute path`},
		{func(s *JobSpec) { s.Args = []string{"a\x00b"} }, `argument "a\x00b" holds a NUL byte, which no program can be given`},
		{func(s *JobSpec) { s.Env = append(s.Env, "B=\x00") }, `environment variable "B=\x00" holds a NUL byte`},
		{func(s *JobSpec) { s.Program = "/bin/\x00" }, `program "/bin/\x00" holds a NUL byte`},
		{func(s *JobSpec) { s.KillAfter = -1 }, "-kill-after -1ns: want 0 to 1m0s"},
		{func(s *JobSpec) { s.KillAfter = int64(time.Hour) }, "-kill-after 1h0m0s: want 0 to 1m0s"},
	} {
		s := good()
		tc.change(&s)
		err := s.Check(DefaultMaxRanks)
		assert.ErrorContains(t, err, tc.says)
		// The submission decoder says the same.
		_, derr := decodeSubmission(encode(s), DefaultMaxRanks)
		assert.Equal(t, err, derr)
	}
	_, err := decodeSubmission([]byte{0xdc, 0xff, 0xff}, DefaultMaxRanks)
	assert.ErrorContains(t, err, "job spec: msgpack length 65535 exceeds the input")
}
