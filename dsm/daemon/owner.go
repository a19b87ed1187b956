package daemon

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Without a cluster secret, svmd listens on loopback only, and a peer is
// any process of this machine that connects to its port. A peer's job
// parts run as the uid it names, so a peer must be another svmd of the
// same user: the kernel says who owns the other end of a loopback TCP
// connection (its socket table, /proc/self/net/tcp and tcp6, lists the
// owner of each socket), and svmd refuses a peer that is not its own user.

// errNotOwnUser says the other end of a secret-less peer connection is
// another user's process.
var errNotOwnUser = errors.New("the other end is another user's process")

// checkLoopbackOwner returns nil if the other end of c, a loopback TCP
// connection, is a socket of this process's effective user.
func checkLoopbackOwner(c net.Conn) error {
	local, okL := c.LocalAddr().(*net.TCPAddr)
	remote, okR := c.RemoteAddr().(*net.TCPAddr)
	if !okL || !okR {
		return fmt.Errorf("peer connection %v: not TCP", c.RemoteAddr())
	}
	if !remote.IP.IsLoopback() {
		return fmt.Errorf("peer connection from %v: without a secret_file only loopback peers are taken", remote)
	}
	uid, err := socketOwner(remote, local)
	if err != nil {
		return fmt.Errorf("peer connection from %v: %w", remote, err)
	}
	if self := uint32(os.Geteuid()); uid != self {
		return fmt.Errorf("peer connection from %v: %w (uid %d, svmd runs as uid %d): "+
			"without a secret_file svmd only takes peers of its own user", remote, errNotOwnUser, uid, self)
	}
	return nil
}

// socketOwner finds the uid owning the TCP socket bound at local and
// connected to remote, in this network namespace.
func socketOwner(local, remote *net.TCPAddr) (uint32, error) {
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		uid, found, err := findSocket(table, local, remote)
		if err != nil {
			return 0, err
		}
		if found {
			return uid, nil
		}
	}
	return 0, fmt.Errorf("socket %v→%v not in the kernel's socket table", local, remote)
}

func findSocket(table string, local, remote *net.TCPAddr) (uint32, bool, error) {
	f, err := os.Open(table)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil // no IPv6 in this kernel
	}
	if err != nil {
		return 0, false, fmt.Errorf("reading the socket table: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the heading
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		l, errL := parseTableAddr(fields[1])
		r, errR := parseTableAddr(fields[2])
		if errL != nil || errR != nil || !sameAddr(l, local) || !sameAddr(r, remote) {
			continue
		}
		uid, err := strconv.ParseUint(fields[7], 10, 32)
		if err != nil {
			return 0, false, fmt.Errorf("%s: uid %q: %w", table, fields[7], err)
		}
		return uint32(uid), true, nil
	}
	if err := sc.Err(); err != nil {
		return 0, false, fmt.Errorf("reading %s: %w", table, err)
	}
	return 0, false, nil
}

func sameAddr(a, b *net.TCPAddr) bool { return a.Port == b.Port && a.IP.Equal(b.IP) }

// parseTableAddr decodes an address of the kernel's socket table: the IP as
// 32-bit words in hexadecimal, each in this machine's byte order, a colon
// and the port in hexadecimal.
func parseTableAddr(s string) (*net.TCPAddr, error) {
	ipHex, portHex, ok := strings.Cut(s, ":")
	if !ok || (len(ipHex) != 8 && len(ipHex) != 32) {
		return nil, fmt.Errorf("socket table address %q", s)
	}
	raw, err := hex.DecodeString(ipHex)
	if err != nil {
		return nil, fmt.Errorf("socket table address %q: %w", s, err)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		return nil, fmt.Errorf("socket table address %q: %w", s, err)
	}
	return &net.TCPAddr{IP: ip, Port: int(port)}, nil
}
