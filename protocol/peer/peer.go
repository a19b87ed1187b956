// Package peer is the connection between two SVM nodes: a TCP stream of
// length-prefixed frames, each a kind byte and a body, opened by a mutual
// challenge–response handshake over the cluster secret. No frame of any
// other kind passes before both sides have proved they hold the secret.
//
// The handshake, with nA and nB fresh random nonces and HMAC-SHA256 keyed
// with the secret over both nonces and both node names:
//
//	dialer → listener   hello      {name A, nA, wire version}
//	listener → dialer   challenge  {name B, nB, HMAC("svm peer listener", ...), wire version}
//	dialer → listener   response   {HMAC("svm peer dialer", ...)}
//	listener → dialer   welcome
//
// Each side checks the other's MAC before it says more. An empty secret is
// allowed (a node on loopback only); the handshake then proves nothing, and
// the daemon refuses to listen elsewhere without a secret.
//
// Both sides also check that the other speaks protocol.WireVersion: a
// listener that gets another version still sends its challenge, so that the
// dialer can say which versions met, then hangs up. The versions come last
// in their frames: a node from before versions (1) finds the frame
// malformed and hangs up, and is named as such.
package peer

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/svmcluster/svm/protocol"
)

// Kind is a frame kind. Kinds below firstKind belong to the handshake; the
// daemon defines the others.
type Kind uint8

// The handshake's kinds.
const (
	kindHello Kind = iota + 1
	kindChallenge
	kindResponse
	kindWelcome
	// FirstKind is the first kind free for the daemon's frames.
	FirstKind
)

// MaxFrame bounds a frame's body from an authenticated peer: a corrupt
// length cannot make the reader allocate more.
const MaxFrame = 64 << 20

// MaxHandshakeFrame bounds a frame's body before the other end has proved
// it holds the secret: the handshake's frames are a few hundred bytes, so
// nobody can make a node allocate more than that without the secret.
const MaxHandshakeFrame = 512

// firstBodyRead is how much of a body the reader allocates before any of
// it has arrived; past it, the buffer grows as bytes arrive, so a length
// that the sender does not back with bytes costs the reader nothing.
const firstBodyRead = 64 << 10

// HandshakeTimeout bounds the whole handshake.
const HandshakeTimeout = 5 * time.Second

// ErrAuth is wrapped by every handshake failure that says the peer does not
// hold the secret.
var ErrAuth = errors.New("peer: authentication failed")

// Conn is an authenticated connection to another node. Send may be called
// from several goroutines; Recv from one at a time.
type Conn struct {
	c    net.Conn
	r    *bufio.Reader
	wmu  sync.Mutex
	wbuf []byte
	// maxFrame bounds the bodies Recv takes.
	maxFrame int
	// Peer is the name of the node at the other end.
	Peer string
}

const nonceSize = 32

// Dial connects to the node at addr as node self and runs the handshake.
func Dial(addr, self string, secret []byte) (*Conn, error) {
	c, err := net.DialTimeout("tcp", addr, HandshakeTimeout)
	if err != nil {
		return nil, fmt.Errorf("peer: dial %s: %w", addr, err)
	}
	pc, err := Client(c, self, secret)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("peer: %s: %w", addr, err)
	}
	return pc, nil
}

// Client runs the dialer's side of the handshake on c.
func Client(c net.Conn, self string, secret []byte) (*Conn, error) {
	pc := newConn(c)
	c.SetDeadline(time.Now().Add(HandshakeTimeout))
	defer c.SetDeadline(time.Time{})
	nA, err := nonce()
	if err != nil {
		return nil, err
	}
	if err := pc.Send(kindHello, hello{Name: self, Nonce: nA, Version: protocol.WireVersion}.encode()); err != nil {
		return nil, err
	}
	body, err := pc.expect(kindChallenge)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("peer: handshake: the node hung up at this node's hello: %w (if it runs an SVM release from before wire versions, run one release on every node)", err)
	}
	if err != nil {
		return nil, err
	}
	ch, err := decodeChallenge(body)
	if err != nil {
		return nil, err
	}
	if err := sameVersion(ch.Name, ch.Version); err != nil {
		return nil, err
	}
	if !hmac.Equal(ch.MAC, mac(secret, "svm peer listener", nA, ch.Nonce, ch.Name, self)) {
		return nil, fmt.Errorf("%w: node %q does not hold the cluster secret", ErrAuth, ch.Name)
	}
	if err := pc.Send(kindResponse, mac(secret, "svm peer dialer", nA, ch.Nonce, ch.Name, self)); err != nil {
		return nil, err
	}
	if _, err := pc.expect(kindWelcome); err != nil {
		return nil, fmt.Errorf("%w: node %q refused this node's proof: %w", ErrAuth, ch.Name, err)
	}
	pc.Peer, pc.maxFrame = ch.Name, MaxFrame
	return pc, nil
}

// Server runs the listener's side of the handshake on an accepted c.
func Server(c net.Conn, self string, secret []byte) (*Conn, error) {
	pc := newConn(c)
	c.SetDeadline(time.Now().Add(HandshakeTimeout))
	defer c.SetDeadline(time.Time{})
	body, err := pc.expect(kindHello)
	if err != nil {
		return nil, err
	}
	h, err := decodeHello(body)
	if err != nil {
		return nil, err
	}
	nB, err := nonce()
	if err != nil {
		return nil, err
	}
	ch := challenge{Name: self, Nonce: nB, MAC: mac(secret, "svm peer listener", h.Nonce, nB, self, h.Name), Version: protocol.WireVersion}
	if err := pc.Send(kindChallenge, ch.encode()); err != nil {
		return nil, err
	}
	if err := sameVersion(h.Name, h.Version); err != nil {
		return nil, err
	}
	proof, err := pc.expect(kindResponse)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// The dialer hangs up when this node's proof fails its check.
		return nil, fmt.Errorf("%w: node %q at %s hung up at the challenge: it does not hold the same cluster secret", ErrAuth, h.Name, c.RemoteAddr())
	}
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(proof, mac(secret, "svm peer dialer", h.Nonce, nB, self, h.Name)) {
		return nil, fmt.Errorf("%w: node %q at %s does not hold the cluster secret", ErrAuth, h.Name, c.RemoteAddr())
	}
	if err := pc.Send(kindWelcome, nil); err != nil {
		return nil, err
	}
	pc.Peer, pc.maxFrame = h.Name, MaxFrame
	return pc, nil
}

func newConn(c net.Conn) *Conn {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, 64<<10), maxFrame: MaxHandshakeFrame}
}

// Local wraps a connection whose other end is known by other means (a
// unix socket checked with SO_PEERCRED): frames, no handshake. Recv takes
// frames up to MaxFrame; SetMaxFrame lowers that for an end that is not
// trusted.
func Local(c net.Conn, name string) *Conn {
	pc := newConn(c)
	pc.Peer, pc.maxFrame = name, MaxFrame
	return pc
}

// SetMaxFrame bounds the bodies Recv takes from now on, at most MaxFrame.
// Call it between Recv calls.
func (c *Conn) SetMaxFrame(n int) { c.maxFrame = min(n, MaxFrame) }

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// SetReadDeadline bounds the wait of Recv, as net.Conn's does.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.c.SetReadDeadline(t) }

// RemoteAddr is the other end's address.
func (c *Conn) RemoteAddr() net.Addr { return c.c.RemoteAddr() }

// Send writes one frame.
func (c *Conn) Send(kind Kind, body []byte) error {
	if len(body) > MaxFrame {
		return fmt.Errorf("peer: frame of %d bytes exceeds %d", len(body), MaxFrame)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = AppendFrame(c.wbuf[:0], kind, body)
	return c.write(c.wbuf)
}

// AppendFrame appends one frame to b, for WriteFrames.
func AppendFrame(b []byte, kind Kind, body []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
	b = append(b, byte(kind))
	return append(b, body...)
}

// WriteFrames writes frames that AppendFrame made, in one write. Their
// bodies must each be at most MaxFrame bytes.
func (c *Conn) WriteFrames(frames []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.write(frames)
}

// TryWrite writes as much of b as the socket takes now without waiting,
// and returns how much that was. The bytes must be whole frames that
// AppendFrame made, but the write may end inside one: the caller must
// write the rest before anything else.
func (c *Conn) TryWrite(b []byte) (int, error) {
	sc, ok := c.c.(syscall.Conn)
	if !ok {
		return 0, nil // not a socket (a pipe in tests): the caller queues
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	n := 0
	var werr error
	if err := raw.Control(func(fd uintptr) {
		for n < len(b) {
			m, err := unix.Write(int(fd), b[n:])
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				if err != unix.EAGAIN {
					werr = err
				}
				return
			}
			n += m
		}
	}); err != nil {
		return n, err
	}
	if werr != nil {
		return n, fmt.Errorf("peer: send to %s: %w", c.Peer, werr)
	}
	return n, nil
}

func (c *Conn) write(b []byte) error {
	if _, err := c.c.Write(b); err != nil {
		return fmt.Errorf("peer: send to %s: %w", c.Peer, err)
	}
	return nil
}

// Recv reads the next frame. The body is the caller's. A frame longer
// than the connection takes (MaxHandshakeFrame before the handshake has
// ended) is an error wrapping ErrFrameTooLarge.
func (c *Conn) Recv() (Kind, []byte, error) {
	return readFrame(c.r, c.maxFrame)
}

// ErrFrameTooLarge is wrapped by the error for a frame whose length
// exceeds what the reader takes.
var ErrFrameTooLarge = errors.New("frame too large")

// ReadFrame reads one frame from r. Arbitrary input gives an error, never a
// panic or an allocation beyond MaxFrame, nor much beyond the bytes that
// arrived.
func ReadFrame(r io.Reader) (Kind, []byte, error) {
	return readFrame(r, MaxFrame)
}

func readFrame(r io.Reader, limit int) (Kind, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, err
	}
	n := int(binary.LittleEndian.Uint32(head[:4]))
	if n > limit {
		return 0, nil, fmt.Errorf("peer: %w: %d bytes, over the %d this connection takes", ErrFrameTooLarge, n, limit)
	}
	// The buffer doubles as it fills: a body costs at most twice the bytes
	// that actually arrived.
	body := make([]byte, min(n, firstBodyRead))
	for read := 0; ; {
		m, err := io.ReadFull(r, body[read:])
		read += m
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, nil, fmt.Errorf("peer: frame body: %w", err)
		}
		if read == n {
			return Kind(head[4]), body, nil
		}
		body = append(body, make([]byte, min(len(body), n-len(body)))...)
	}
}

// expect reads the next frame of the handshake, which must be of kind want.
func (c *Conn) expect(want Kind) ([]byte, error) {
	kind, body, err := c.Recv()
	if err != nil {
		return nil, fmt.Errorf("peer: handshake: %w", err)
	}
	if kind != want {
		return nil, fmt.Errorf("peer: handshake: frame of kind %d where %d was due", kind, want)
	}
	return body, nil
}

func nonce() ([]byte, error) {
	b := make([]byte, nonceSize)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("peer: nonce: %w", err)
	}
	return b, nil
}

// mac binds a handshake step to its role, both nonces and both names.
func mac(secret []byte, role string, nA, nB []byte, listener, dialer string) []byte {
	h := hmac.New(sha256.New, secret)
	for _, part := range [][]byte{[]byte(role), nA, nB, []byte(listener), []byte(dialer)} {
		h.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(part))))
		h.Write(part)
	}
	return h.Sum(nil)
}

// hello and challenge are the handshake's bodies: a length-prefixed name
// followed by fixed-size fields.
type hello struct {
	Name    string
	Nonce   []byte
	Version uint16
}

type challenge struct {
	Name    string
	Nonce   []byte
	MAC     []byte
	Version uint16
}

// sameVersion checks the wire version node name sent (1: its frame had
// none, as before versions).
func sameVersion(name string, v uint16) error {
	if v != protocol.WireVersion {
		return fmt.Errorf("peer: handshake: node %q speaks wire version %d, this node %d: run one SVM release on every node", name, v, protocol.WireVersion)
	}
	return nil
}

const maxName = 255

func (h hello) encode() []byte {
	b := append(appendName(nil, h.Name), h.Nonce...)
	return binary.LittleEndian.AppendUint16(b, h.Version)
}

func decodeHello(b []byte) (hello, error) {
	name, rest, err := readName(b)
	switch {
	case err != nil || len(rest) != nonceSize && len(rest) != nonceSize+2:
		return hello{}, errors.New("peer: handshake: malformed hello")
	case len(rest) == nonceSize:
		return hello{Name: name, Nonce: rest, Version: 1}, nil
	}
	return hello{Name: name, Nonce: rest[:nonceSize], Version: binary.LittleEndian.Uint16(rest[nonceSize:])}, nil
}

func (ch challenge) encode() []byte {
	b := append(appendName(nil, ch.Name), ch.Nonce...)
	b = append(b, ch.MAC...)
	return binary.LittleEndian.AppendUint16(b, ch.Version)
}

func decodeChallenge(b []byte) (challenge, error) {
	name, rest, err := readName(b)
	switch {
	case err != nil || len(rest) != nonceSize+sha256.Size && len(rest) != nonceSize+sha256.Size+2:
		return challenge{}, errors.New("peer: handshake: malformed challenge")
	case len(rest) == nonceSize+sha256.Size:
		return challenge{Name: name, Nonce: rest[:nonceSize], MAC: rest[nonceSize:], Version: 1}, nil
	}
	return challenge{
		Name: name, Nonce: rest[:nonceSize], MAC: rest[nonceSize : nonceSize+sha256.Size],
		Version: binary.LittleEndian.Uint16(rest[nonceSize+sha256.Size:]),
	}, nil
}

func appendName(b []byte, name string) []byte {
	if len(name) > maxName {
		name = name[:maxName]
	}
	return append(append(b, byte(len(name))), name...)
}

func readName(b []byte) (string, []byte, error) {
	if len(b) < 1 || len(b) < 1+int(b[0]) {
		return "", nil, errors.New("truncated name")
	}
	return string(b[1 : 1+b[0]]), b[1+b[0]:], nil
}
