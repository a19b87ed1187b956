package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

// TestCommandLine: svmd -h and --help print the usage on stdout and exit
// 0, --version prints the version, and a mistake is one line on stderr
// with status 2 (the real binary, as a user runs it).
func TestCommandLine(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "svmd")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	run := func(args ...string) (code int, stdout, stderr string) {
		cmd := exec.Command(bin, args...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return code, o.String(), e.String()
	}
	for _, h := range []string{"-h", "--help"} {
		code, stdout, stderr := run(h)
		assert.Equal(t, 0, code, h)
		assert.True(t, strings.HasPrefix(stdout, "usage: svmd"), "%s: stdout %q", h, stdout)
		assert.Contains(t, stdout, "-socket-dir")
		assert.Empty(t, stderr, h)
	}
	code, stdout, stderr := run("--version")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `^svmd github.com/svmcluster/svm \S+ \(revision .*\), go1\.\S+\n$`, stdout)
	assert.Empty(t, stderr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--frob"}, "svmd: flag provided but not defined: -frob (svmd -h lists the flags)\n"},
		{[]string{"extra"}, `svmd: unexpected argument "extra": svmd takes only flags (svmd -h lists them)` + "\n"},
		{[]string{"--heartbeat", "x"}, `svmd: invalid value "x" for flag -heartbeat: parse error (svmd -h lists the flags)` + "\n"},
		{[]string{"--version", "--node", "a"}, "svmd: --version is given alone: svmd --version\n"},
	} {
		code, stdout, stderr := run(tc.args...)
		assert.Equal(t, 2, code, "%v", tc.args)
		assert.Empty(t, stdout, "%v", tc.args)
		assert.Equal(t, tc.want, stderr, "%v", tc.args)
	}
}
