package daemon

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseHosts(t *testing.T) {
	hosts, err := ParseHosts("n1:2, n2,n3:4")
	require.NoError(t, err)
	require.Equal(t, []HostSlots{{"n1", 2}, {"n2", 1}, {"n3", 4}}, hosts)
	for _, bad := range []struct{ in, says string }{
		{"", "an empty entry"},
		{"n1,,n2", "an empty entry"},
		{"n1:0", `slots "0"`},
		{"n1:x", `slots "x"`},
		{"n 1", `' ' is not a letter`},
		{":3", `node name ""`},
	} {
		_, err := ParseHosts(bad.in)
		require.ErrorContains(t, err, bad.says, "input %q", bad.in)
	}
}

func TestParseHostfile(t *testing.T) {
	hosts, err := ParseHostfile(strings.NewReader(`
# the cluster
node1 slots=4 max_slots=8
node2:2   # MPICH style
node3
node1 slots=2
`))
	require.NoError(t, err)
	require.Equal(t, []HostSlots{{"node1", 6}, {"node2", 2}, {"node3", 1}}, hosts)
	for _, bad := range []struct{ in, says string }{
		{"", "no nodes"},
		{"# nothing\n", "no nodes"},
		{"a\nb slots\n", `line 2: "slots" is not key=value`},
		{"a cpus=2\n", `line 1: unknown field "cpus"`},
		{"a:2 slots=3\n", "slots given twice"},
		{"a slots=-1\n", `slots "-1"`},
	} {
		_, err := ParseHostfile(strings.NewReader(bad.in))
		require.ErrorContains(t, err, bad.says, "input %q", bad.in)
	}
}

func TestPlace(t *testing.T) {
	for _, tc := range []struct {
		np    int
		hosts []HostSlots
		want  string
	}{
		{4, []HostSlots{{"a", 2}, {"b", 2}}, "a a b b"},
		{3, []HostSlots{{"a", 2}, {"b", 2}}, "a a b"},
		{4, []HostSlots{{"a", 1}, {"b", 1}}, "a b a b"},
		{7, []HostSlots{{"a", 2}, {"b", 1}}, "a a b a a b a"},
		{1, []HostSlots{{"a", 3}}, "a"},
	} {
		got, err := Place(tc.np, tc.hosts)
		require.NoError(t, err)
		require.Equal(t, strings.Fields(tc.want), got, "%d ranks on %v", tc.np, tc.hosts)
	}
	_, err := Place(0, []HostSlots{{"a", 1}})
	require.ErrorContains(t, err, "0 ranks")
	_, err = Place(2, nil)
	require.ErrorContains(t, err, "no hosts")
	_, err = Place(2, []HostSlots{{"a", 1}, {"a", 1}})
	require.ErrorContains(t, err, `node "a" is listed twice`)
}
