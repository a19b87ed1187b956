package engine

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The main goroutine keeps the main thread, which the runtime never ends:
// the goroutines of the tests run on threads that can end.
func init() { runtime.LockOSThread() }

// TestPinnedThreadOutlivesItsForks: a child forked, with Pdeathsig as
// ranks are, by a thread that served a bound rank lives on after the
// serving goroutine has ended: the thread is given back, not ended.
func TestPinnedThreadOutlivesItsForks(t *testing.T) {
	started := make(chan *exec.Cmd, 1)
	go func() {
		unpin := pinThread(0)
		defer unpin()
		cmd := exec.Command("sleep", "5")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if cmd.Start() != nil {
			cmd = nil
		}
		started <- cmd
	}()
	cmd := <-started
	require.NotNil(t, cmd, "starting sleep")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		assert.Fail(t, "the child ended with the goroutine that forked it", "%v", err)
	case <-time.After(300 * time.Millisecond):
		cmd.Process.Kill()
		<-exited
	}
}
