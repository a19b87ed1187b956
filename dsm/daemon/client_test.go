package daemon_test

import (
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/dsm/daemon"
)

// TestDaemonStarting: svmf run --daemon waits for an svmd that is starting,
// and when none comes says which it is: no svmd in the directory, or a
// socket that nothing answers on (a killed svmd's).
func TestDaemonStarting(t *testing.T) {
	c := &cluster{t: t, bin: buildBinaries(t)}
	var wg sync.WaitGroup
	wg.Go(func() {
		r := c.run(&node{dir: t.TempDir()}, "--hosts", "n1", "/bin/true")
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "svmf: no svmd at ")
		assert.Contains(t, r.stderr, "after waiting 5s")
		assert.GreaterOrEqual(t, r.took, daemon.DaemonStartWait)
	})
	wg.Go(func() {
		dir := t.TempDir()
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, daemon.ControlSocket), Net: "unix"})
		if !assert.NoError(t, err) {
			return
		}
		ln.SetUnlinkOnClose(false)
		ln.Close()
		r := c.run(&node{dir: dir}, "--hosts", "n1", "/bin/true")
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "svmf: svmd not answering at "+filepath.Join(dir, daemon.ControlSocket))
	})
	wg.Go(func() {
		// svmf first, then the daemon, as a script that starts both does.
		n := &node{name: "n1", dir: filepath.Join(t.TempDir(), "n1"), log: &lockedBuffer{}}
		cmd := c.svmf(n, nil, "--hosts", "n1:2", "/bin/sh", "-c", `echo "rank $SVM_RANK"`)
		var out lockedBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if !assert.NoError(t, cmd.Start()) {
			return
		}
		time.Sleep(time.Second)
		svmd := exec.Command(c.bin.svmd, "--node", "n1", "--listen", freePort(t, "127.0.0.1"), "--metrics", "", "--socket-dir", n.dir)
		svmd.Stdout, svmd.Stderr = n.log, n.log
		require.NoError(t, svmd.Start())
		n.cmd, n.exited = svmd, make(chan struct{})
		go func() {
			svmd.Wait()
			close(n.exited)
		}()
		c.nodes = []*node{n}
		t.Cleanup(c.stopAll)
		assert.NoError(t, cmd.Wait(), "svmf run started before svmd: %s", out.String())
		assert.Contains(t, out.String(), "rank 1")
	})
	wg.Wait()
}

// TestDaemonNotAnswering: an svmd that takes a submission and never
// answers it does not leave svmf waiting for ever.
func TestDaemonNotAnswering(t *testing.T) {
	defer daemon.SetAnswerWait(300 * time.Millisecond)()
	dir := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(dir, daemon.ControlSocket))
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c) // reads the submission, answers nothing
		}
	}()
	start := time.Now()
	code, err := daemon.Submit(dir, specFor("n1", 1, "/bin/true"), daemon.SubmitOptions{Stdout: io.Discard, Stderr: io.Discard})
	assert.Equal(t, 1, code)
	assert.ErrorContains(t, err, "took the submission and has not answered it in 300ms: it is stuck")
	assert.Less(t, time.Since(start), 5*time.Second)
}
