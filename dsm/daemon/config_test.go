package daemon

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadSecret(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), mode))
		require.NoError(t, os.Chmod(p, mode))
		return p
	}
	s, err := ReadSecret(write("ok", "  0123456789abcdef0123\n", 0o600))
	require.NoError(t, err)
	require.Equal(t, "0123456789abcdef0123", string(s))
	_, err = ReadSecret(write("open", "0123456789abcdef0123", 0o644))
	require.ErrorContains(t, err, "mode 0644 lets others read it: chmod 600 it")
	_, err = ReadSecret(write("short", "short\n", 0o600))
	require.ErrorContains(t, err, "5 bytes; want at least 16")
	_, err = ReadSecret(filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, "no such file")
}

func TestLoadConfigIsStrict(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, LoadConfig(&c, strings.NewReader("node: a\nheartbeat: 1s\nfailure_timeout: 5s\n"), "x"))
	require.Equal(t, "a", c.Node)
	require.NoError(t, c.Check())
	require.ErrorContains(t, LoadConfig(&c, strings.NewReader("nodes: a\n"), "x.yml"), "config x.yml")
	require.ErrorContains(t, LoadConfig(&c, strings.NewReader("heartbeat: soon\n"), "x.yml"), "config x.yml")
	require.NoError(t, LoadConfig(&c, strings.NewReader(""), "empty"))
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:1": true, "localhost:1": true, "[::1]:1": true, "127.3.4.5:9": true,
		"0.0.0.0:1": false, ":1": false, "10.0.0.1:1": false, "example.org:1": false, "garbage": false,
	} {
		require.Equal(t, want, loopback(addr), addr)
	}
}

// TestStopIsIdempotent: Stop from several goroutines at once, and again
// after it returned, all return once the daemon has stopped.
func TestStopIsIdempotent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Node, cfg.Listen, cfg.Metrics, cfg.SocketDir = "n1", "127.0.0.1:0", "127.0.0.1:0", t.TempDir()
	d, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	d.Start()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.Stop("test")
		}()
	}
	wg.Wait()
	d.Stop("again")
	<-d.Done()
	_, err = os.Stat(filepath.Join(cfg.SocketDir, ControlSocket))
	require.True(t, os.IsNotExist(err), "the control socket outlived Stop")
}
