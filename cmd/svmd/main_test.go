package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConfigure: defaults, then the file, then the flags.
func TestConfigure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "svmd.yml")
	require.NoError(t, os.WriteFile(file, []byte(`
node: fromfile
listen: 127.0.0.1:7000
heartbeat: 250ms
peers:
  b: 127.0.0.1:7001
`), 0o644))
	cfg, _, err := configure([]string{"--config", file, "--listen", "127.0.0.1:7100", "--peer", "c=127.0.0.1:7002"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "fromfile", cfg.Node)
	require.Equal(t, "127.0.0.1:7100", cfg.Listen)
	require.Equal(t, 250*time.Millisecond, cfg.Heartbeat)
	require.Equal(t, map[string]string{"b": "127.0.0.1:7001", "c": "127.0.0.1:7002"}, cfg.Peers)
}

func TestConfigureErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yml")
	require.NoError(t, os.WriteFile(bad, []byte("node: a\nlisen: 127.0.0.1:1\n"), 0o644))
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--config", bad}, "field lisen not found"},
		{[]string{"--config", "/no/such/file"}, "no such file"},
		{[]string{"--peer", "nameonly"}, `"nameonly" is not NAME=HOST:PORT`},
		{[]string{"--peer", "a=h:1", "--peer", "a=h:2"}, "peer a given twice"},
		{[]string{"--node", "x", "--peer", "x=127.0.0.1:1"}, "this node's own name"},
		{[]string{"--listen", "0.0.0.0:7470"}, "no secret_file"},
		{[]string{"--listen", "nonsense"}, `listen "nonsense"`},
		{[]string{"--heartbeat", "2s", "--failure-timeout", "3s"}, "at least two heartbeats"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		_, _, err := configure(append([]string{"--node", "n1"}, tc.args...), io.Discard)
		require.ErrorContains(t, err, tc.says, "%v", tc.args)
	}
}
