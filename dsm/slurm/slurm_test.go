package slurm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandHostlist(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{in: "vm", want: []string{"vm"}},
		{in: "n1,n2", want: []string{"n1", "n2"}},
		{in: "gpu[01-03,7],x", want: []string{"gpu01", "gpu02", "gpu03", "gpu7", "x"}},
		{in: "a[1-2]-ib,b", want: []string{"a1-ib", "a2-ib", "b"}},
		{in: "", err: true},
		{in: "a[1-", err: true},
		{in: "a[3-1]", err: true},
		{in: ",a", err: true},
	} {
		got, err := ExpandHostlist(tc.in)
		if tc.err {
			assert.Error(t, err, "ExpandHostlist(%q)", tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	good := map[string]string{
		"SLURM_JOB_ID": "12", "SLURM_STEP_ID": "0", "SLURM_PROCID": "3", "SLURM_NTASKS": "4",
		"SLURM_LOCALID": "1", "SLURMD_NODENAME": "n2", "SLURM_STEP_NODELIST": "n[1-2]", "SLURM_GTIDS": "2,3",
	}
	require.True(t, InStep(env(good)))
	s, err := FromEnv(env(good))
	require.NoError(t, err)
	assert.Equal(t, Step{JobID: "12", StepID: "0", Rank: 3, NProcs: 4, LocalID: 1, Node: "n2",
		Nodes: []string{"n1", "n2"}, NodeIndex: 1, LocalRanks: []int{2, 3}, JoinTimeout: DefaultJoinTimeout}, s)
	assert.Equal(t, "12.0", s.ID())
	p0, err := s.PortOf(0, env(good))
	require.NoError(t, err)
	p1, err := s.Port(env(good))
	require.NoError(t, err)
	assert.Equal(t, p0+1, p1, "node i listens on the base port plus i")

	for key, bad := range map[string]string{
		"SLURM_JOB_ID": "x", "SLURM_NTASKS": "0", "SLURM_PROCID": "4", "SLURMD_NODENAME": "n3",
		"SLURM_GTIDS": "2,2", "SLURM_STEP_NODELIST": "n[1-", "SLURM_LOCALID": "-1",
		EnvJoinTimeout: "2h",
	} {
		m := map[string]string{}
		for k, v := range good {
			m[k] = v
		}
		m[key] = bad
		_, err := FromEnv(env(m))
		assert.Error(t, err, "%s=%q", key, bad)
	}
	good[EnvJoinTimeout] = "5s"
	s, err = FromEnv(env(good))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, s.JoinTimeout)
	assert.Equal(t, "ranks 2,3 on node n2 did not join the job within 5s (SVM_SLURM_JOIN_TIMEOUT)", LateRanks("n2", []int{2, 3}, s.JoinTimeout))

	_, err = s.Port(env(map[string]string{EnvPort: "65535"}))
	assert.Error(t, err)
}
