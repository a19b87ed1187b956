package daemon

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// asUser runs f on a thread whose effective ids are cred's (nil: this
// process's), for the sockets f makes to be cred's user's: the kernel
// records the effective ids of the thread that creates a socket. The
// thread is never given back to the runtime: it ends with its goroutine.
func asUser(cred *syscall.Credential, f func() error) error {
	if cred == nil {
		return f()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		keep := ^uintptr(0) // setres[ug]id: -1 leaves an id as it is
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, keep, uintptr(cred.Gid), keep); e != 0 {
			done <- fmt.Errorf("setresgid: %w", e)
			return
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, keep, uintptr(cred.Uid), keep); e != 0 {
			done <- fmt.Errorf("setresuid: %w", e)
			return
		}
		done <- f()
	}()
	return <-done
}

func TestParseTableAddr(t *testing.T) {
	a, err := parseTableAddr("0100007F:1D2E")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:7470", a.String())
	a, err = parseTableAddr("00000000000000000000000001000000:0050")
	require.NoError(t, err)
	assert.Equal(t, "[::1]:80", a.String())
	for _, bad := range []string{"", "0100007F", "0100007:1D2E", "0100007G:1D2E", "0100007F:123456"} {
		_, err := parseTableAddr(bad)
		assert.Error(t, err, bad)
	}
}

// pair connects a client made by dialer's user to a listener made by
// listener's user, on network's loopback, and returns both ends.
func pair(t *testing.T, network, addr string, listener, dialer *syscall.Credential) (server, client net.Conn) {
	var ln net.Listener
	require.NoError(t, asUser(listener, func() (err error) { ln, err = net.Listen(network, addr); return err }))
	defer ln.Close()
	require.NoError(t, asUser(dialer, func() (err error) { client, err = net.Dial(network, ln.Addr().String()); return err }))
	t.Cleanup(func() { client.Close() })
	// The accepted socket is the accepting thread's user's.
	require.NoError(t, asUser(listener, func() (err error) { server, err = ln.Accept(); return err }))
	t.Cleanup(func() { server.Close() })
	return server, client
}

func TestLoopbackOwner(t *testing.T) {
	server, client := pair(t, "tcp4", "127.0.0.1:0", nil, nil)
	assert.NoError(t, checkLoopbackOwner(server))
	assert.NoError(t, checkLoopbackOwner(client))
	if _, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		server, client = pair(t, "tcp6", "[::1]:0", nil, nil)
		assert.NoError(t, checkLoopbackOwner(server))
		assert.NoError(t, checkLoopbackOwner(client))
	}

	if os.Geteuid() != 0 {
		t.Skip("needs root to make another user's sockets")
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	// Another user dials svmd's port: the accepted end sees it.
	server, client = pair(t, "tcp4", "127.0.0.1:0", nil, nobody)
	assert.ErrorIs(t, checkLoopbackOwner(server), errNotOwnUser)
	assert.NoError(t, checkLoopbackOwner(client))
	// Another user listens where svmd dials a peer: the dialer sees it.
	server, client = pair(t, "tcp4", "127.0.0.1:0", nobody, nil)
	assert.NoError(t, checkLoopbackOwner(server))
	err := checkLoopbackOwner(client)
	assert.ErrorIs(t, err, errNotOwnUser)
	assert.ErrorContains(t, err, "uid 65534, svmd runs as uid 0")
}
