package daemon_test

// svmd runs as root and any local user may reach its control socket, and
// anyone its peer port: these tests attack a real svmd the ways the issue
// "no local user can crash the daemon, exhaust its memory or probe other
// users' files" lists, and check that it refuses at once, stays small and
// goes on serving.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/svmcluster/svm/dsm/daemon"
	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/protocol/peer"
)

var nobody = &syscall.Credential{Uid: 65534, Gid: 65534}

// otherUser is who plays the hostile local user: nobody when the tests run
// as root, else the tests' own user (nil).
func otherUser() *syscall.Credential {
	if os.Getuid() == 0 {
		return nobody
	}
	return nil
}

// dialAs connects to addr on network as cred's user (nil: as this
// process).
func dialAs(network, addr string, cred *syscall.Credential) (c net.Conn, err error) {
	err = daemon.AsUser(cred, func() error {
		c, err = net.Dial(network, addr)
		return err
	})
	return c, err
}

// submitRaw sends one frame on a new connection to via's control socket as
// cred's user, and reads svmd's answers until its exit frame, at most
// limit. accepted says svmd took the job.
func submitRaw(via *node, cred *syscall.Credential, kind peer.Kind, body []byte, limit time.Duration) (ex daemon.Exit, accepted bool, err error) {
	c, err := dialAs("unix", filepath.Join(via.dir, daemon.ControlSocket), cred)
	if err != nil {
		return ex, false, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(limit))
	pc := peer.Local(c, "svmd")
	if err := pc.Send(kind, body); err != nil {
		return ex, false, err
	}
	for {
		k, b, err := pc.Recv()
		if err != nil {
			return ex, accepted, fmt.Errorf("no exit frame: %w", err)
		}
		switch k {
		case daemon.KindAccepted:
			accepted = true
		case daemon.KindExit:
			return ex, accepted, msgpack.Unmarshal(b, &ex)
		}
	}
}

// specFor is a job of np ranks of prog args on hosts, from the tests'
// working directory.
func specFor(hosts string, np int, prog string, args ...string) daemon.JobSpec {
	hs, err := daemon.ParseHosts(hosts)
	if err != nil {
		panic(err)
	}
	return daemon.JobSpec{
		Settings: engine.DefaultSettings(np), Hosts: hs, Program: prog, Args: args,
		Env: []string{"PATH=/usr/bin:/bin"}, Dir: os.TempDir(), KillAfter: int64(time.Second),
	}
}

func encodeSpec(spec daemon.JobSpec) []byte {
	b, err := msgpack.Marshal(spec)
	if err != nil {
		panic(err)
	}
	return b
}

// rssMiB is the resident memory of n's svmd.
func rssMiB(t testing.TB, n *node) float64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`).FindSubmatch(status)
	require.NotNil(t, m)
	kb, _ := strconv.Atoi(string(m[1]))
	return float64(kb) / 1024
}

// alive fails t if n's svmd has exited or logged a panic.
func alive(t testing.TB, n *node) {
	t.Helper()
	select {
	case <-n.exited:
		t.Fatalf("svmd %s exited:\n%s", n.name, n.log)
	default:
	}
	require.NotContains(t, n.log.String(), "panic", "svmd %s recovered from a panic", n.name)
}

// TestRefusedAtOnce: settings out of bounds, hand-built or through svmf,
// are refused by the first svmd that reads them, with svmf's message, and
// the daemon goes on.
func TestRefusedAtOnce(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{})
	n1 := c.node("n1")
	for _, tc := range []struct {
		change func(*daemon.JobSpec)
		says   string
	}{
		{func(s *daemon.JobSpec) { s.Settings.NProcs = 1 << 62 }, "svmd on node n1: -np 4611686018427387904: want 1 to 1024 ranks"},
		{func(s *daemon.JobSpec) { s.Settings.NProcs = 100000 }, "svmd on node n1: -np 100000: want 1 to 1024 ranks"},
		{func(s *daemon.JobSpec) { s.Settings.Locks = math.MaxUint32 }, "svmd on node n1: -locks 4294967295: want 1 to 1048576 lock ids"},
		{func(s *daemon.JobSpec) { s.Settings.Locks = 0 }, "svmd on node n1: -locks 0: want 1 to 1048576 lock ids"},
		{func(s *daemon.JobSpec) { s.Settings.RegionSize = 0 }, "svmd on node n1: -region 0: not a positive multiple of the 4096-byte page"},
		{func(s *daemon.JobSpec) { s.Settings.RegionSize = 8 << 40 }, "svmd on node n1: -region 8T: want at most 1T"},
		{func(s *daemon.JobSpec) { s.KillAfter = int64(time.Hour) }, "svmd on node n1: -kill-after 1h0m0s: want 0 to 1m0s"},
	} {
		spec := specFor("n1:2,n2:2", 4, "/bin/true")
		tc.change(&spec)
		start := time.Now()
		ex, accepted, err := submitRaw(n1, otherUser(), daemon.KindSubmit, encodeSpec(spec), 10*time.Second)
		require.NoError(t, err, tc.says)
		assert.False(t, accepted)
		assert.Equal(t, 2, ex.Code)
		assert.Equal(t, tc.says, ex.Message)
		assert.Less(t, time.Since(start), time.Second, tc.says)
	}
	// svmf says the same before it submits, but it cannot know svmd's
	// max_ranks.
	r := c.run(n1, "--hosts", "n1", "-np", "4611686018427387904", "/bin/true")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "svmf: run: -np 4611686018427387904: want 1 to 65536 ranks")
	r = c.run(n1, "--hosts", "n1", "-np", "2000", "/bin/true")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "svmf: svmd on node n1: -np 2000: want 1 to 1024 ranks")
	assert.Less(t, r.took, 3*time.Second)
	alive(t, n1)
	r = c.run(n1, "--hosts", "n1,n2", c.bin.testprog, "counter", "-k", "20")
	require.Equal(t, 0, r.code, r.stderr)
}

// TestJobsThatCannotStartFailAtOnce: a program or directory that the
// ranks cannot use ends the job as soon as the ranks' exec or chdir says
// so, with that reason, on one node or several.
func TestJobsThatCannotStartFailAtOnce(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{})
	n1 := c.node("n1")
	dataFile := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.WriteFile(dataFile, []byte("not a program"), 0o644))
	uid := os.Getuid()
	for _, tc := range []struct {
		hosts, prog, dir string
		says             string
	}{
		{"n1", "/no/such/program", os.TempDir(), "node n1: uid %d cannot run /no/such/program in " + os.TempDir()},
		{"n1,n2", "/no/such/program", os.TempDir(), "node n2: uid %d cannot run /no/such/program in " + os.TempDir()},
		{"n1,n2", dataFile, os.TempDir(), "node n1: uid %d cannot run " + dataFile},
		{"n1,n2", "/bin/true", "/no/such/dir", "node n2: uid %d cannot run /bin/true in /no/such/dir"},
	} {
		spec := specFor(tc.hosts, 2, tc.prog)
		spec.Dir = tc.dir
		start := time.Now()
		ex, accepted, err := submitRaw(n1, nil, daemon.KindSubmit, encodeSpec(spec), 10*time.Second)
		took := time.Since(start)
		require.NoError(t, err)
		assert.True(t, accepted)
		assert.Equal(t, 1, ex.Code)
		assert.Contains(t, ex.Message, fmt.Sprintf(tc.says, uid))
		assert.NotContains(t, ex.Message, "did not confirm")
		// It used to take the failure timeout and the kill grace: 5 s.
		assert.Less(t, took, 3*time.Second, ex.Message)
		t.Logf("%s on %s failed in %v: %s", tc.prog, tc.hosts, took.Round(time.Millisecond), ex.Message)
	}
	r := c.run(n1, "--hosts", "n1,n2", c.bin.testprog, "counter", "-k", "20")
	require.Equal(t, 0, r.code, r.stderr)
}

// TestPathProbesAnswerAlike: svmd starts ranks as the submitting user,
// so what it answers about a path in a directory that user may not enter
// tells nothing: a missing file, a file that is not a program, a program
// the user may not run, a directory, all read the same.
func TestPathProbesAnswerAlike(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: svmd must run the probes as another user")
	}
	c := newCluster(t, []string{"n1"}, clusterOpts{})
	n1 := c.node("n1")
	base := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(base), 0o755))
	require.NoError(t, os.Chmod(base, 0o755))
	private := filepath.Join(base, "private") // root's, closed to others
	open := filepath.Join(base, "open")       // anyone may look in
	require.NoError(t, os.Mkdir(private, 0o700))
	require.NoError(t, os.Mkdir(open, 0o755))
	for _, dir := range []string{private, open} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "prog"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "rootonly"), []byte("#!/bin/sh\nexit 0\n"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "data"), []byte("data"), 0o644))
		require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	}
	answer := func(prog, dir, probed string) string {
		spec := specFor("n1", 1, prog)
		spec.Dir = dir
		ex, _, err := submitRaw(n1, nobody, daemon.KindSubmit, encodeSpec(spec), 10*time.Second)
		require.NoError(t, err)
		msg := strings.ReplaceAll(ex.Message, probed, "PATH")
		return fmt.Sprintf("%d %s", ex.Code, regexp.MustCompile(`job n1\.\w+\.\d+`).ReplaceAllString(msg, "job ID"))
	}
	var programs, dirs []string
	for _, name := range []string{"prog", "rootonly", "data", "sub", "missing", "sub/missing"} {
		programs = append(programs, filepath.Join(private, name))
		dirs = append(dirs, filepath.Join(private, name))
	}
	// Files nobody may see for itself fail as alike as those it may not.
	programs = append(programs, filepath.Join(open, "rootonly"), filepath.Join(open, "data"), filepath.Join(open, "missing"))
	dirs = append(dirs, filepath.Join(open, "missing"), filepath.Join(open, "data"))

	want := answer(programs[0], os.TempDir(), programs[0])
	t.Logf("every program probe: %s", want)
	assert.Regexp(t, `^1 job ID failed: node n1: uid 65534 cannot run PATH in /tmp: the program must be an executable file, and the working directory a directory, that uid 65534 may use on node n1$`, want)
	for _, p := range programs[1:] {
		assert.Equal(t, want, answer(p, os.TempDir(), p), "program %s", p)
	}
	want = answer("/bin/true", dirs[0], dirs[0])
	t.Logf("every directory probe: %s", want)
	for _, d := range dirs[1:] {
		assert.Equal(t, want, answer("/bin/true", d, d), "directory %s", d)
	}
	// What nobody may run, it runs.
	spec := specFor("n1", 1, filepath.Join(open, "prog"))
	ex, _, err := submitRaw(n1, nobody, daemon.KindSubmit, encodeSpec(spec), 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 0, ex.Code, ex.Message)
}

// TestControlSocketFloods: oversized submissions are refused on their
// length, and the submissions one user may have under way are few, so
// that svmd's memory stays bounded while it goes on serving others.
func TestControlSocketFloods(t *testing.T) {
	c := newCluster(t, []string{"n1"}, clusterOpts{})
	n1 := c.node("n1")
	sock := filepath.Join(n1.dir, daemon.ControlSocket)
	before := rssMiB(t, n1)

	// Eight connections each declaring 64 MiB and sending 60 MiB: each is
	// refused before any body is read, on the length, or, while four of
	// them are still being refused (a loaded machine), on the user's
	// number of submissions under way.
	var wg sync.WaitGroup
	refusals := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			conn, err := dialAs("unix", sock, otherUser())
			if !assert.NoError(t, err) {
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			conn.Write(binary.LittleEndian.AppendUint32(nil, 64<<20))
			conn.Write([]byte{byte(daemon.KindSubmit)})
			chunk := make([]byte, 1<<20)
			for range 60 {
				if _, err := conn.Write(chunk); err != nil {
					break
				}
			}
			_, b, err := peer.Local(conn, "svmd").Recv()
			if assert.NoError(t, err) {
				var ex daemon.Exit
				msgpack.Unmarshal(b, &ex)
				refusals <- ex.Message
			}
		})
	}
	wg.Wait()
	close(refusals)
	onLength := 0
	for msg := range refusals {
		switch msg {
		case "job submission: peer: frame too large: 67108864 bytes, over the 1048576 this connection takes":
			onLength++
		case "uid 65534 has 4 submissions to svmd on node n1 under way, the most one user may have at once":
		default:
			t.Errorf("a 64 MiB submission was refused with %q", msg)
		}
	}
	assert.Positive(t, onLength, "no 64 MiB submission was refused on its length")
	afterBig := rssMiB(t, n1)

	// Forty connections each declaring the most svmd takes and sending all
	// of it but a byte: a few are read (and held), the rest refused.
	const conns = 40
	type outcome struct {
		conn    net.Conn
		refusal string
	}
	outcomes := make(chan outcome, conns)
	for range conns {
		conn, err := dialAs("unix", sock, otherUser())
		require.NoError(t, err)
		go func() {
			conn.Write(peer.AppendFrame(nil, daemon.KindSubmit, make([]byte, daemon.MaxRequest))[:5+daemon.MaxRequest-1])
		}()
		go func() {
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, b, err := peer.Local(conn, "svmd").Recv()
			var ex daemon.Exit
			if err == nil {
				msgpack.Unmarshal(b, &ex)
			}
			outcomes <- outcome{conn, ex.Message}
		}()
	}
	var held []net.Conn
	for range conns {
		o := <-outcomes
		if o.refusal == "" {
			held = append(held, o.conn)
			continue
		}
		assert.Regexp(t, `uid \d+ has 4 submissions to svmd on node n1 under way, the most one user may have at once`, o.refusal)
		o.conn.Close()
	}
	assert.Len(t, held, 4, "submissions under way")
	during := rssMiB(t, n1)
	t.Logf("svmd's resident memory: %.1f MiB at start, %.1f MiB after 8 connections sent 64 MiB frames, %.1f MiB with %d of %d connections holding 1 MiB frames",
		before, afterBig, during, len(held), conns)
	assert.Less(t, during-before, 64.0, "svmd grew by more than 64 MiB")
	assert.Less(t, afterBig-before, 64.0, "svmd grew by more than 64 MiB")

	// Another user's job goes through meanwhile.
	if os.Getuid() == 0 {
		r := c.run(n1, "--hosts", "n1", "-np", "2", c.bin.testprog, "counter", "-k", "20")
		require.Equal(t, 0, r.code, r.stderr)
	}
	for _, conn := range held {
		conn.Close()
	}
	alive(t, n1)
	r := c.runAs(n1, otherUser(), "--hosts", "n1", "-np", "2", c.bin.testprog, "counter", "-k", "20")
	require.Equal(t, 0, r.code, r.stderr)
}

// TestPeerPortFloods: before a connection has proved it holds the
// secret, its frames may be a few hundred bytes and few such connections
// are served at once, so svmd's memory stays bounded and its jobs run on.
func TestPeerPortFloods(t *testing.T) {
	secret := "0123456789abcdef-secret"
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{secrets: []string{secret, secret}})
	n1 := c.node("n1")
	before := rssMiB(t, n1)

	// Eight connections each declaring a 64 MiB hello and sending 60 MiB:
	// each is closed on the length.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			conn, err := net.Dial("tcp", n1.peerAddr)
			if !assert.NoError(t, err) {
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			start := time.Now()
			conn.Write(append(binary.LittleEndian.AppendUint32(nil, 64<<20), 1))
			chunk := make([]byte, 1<<20)
			sent := 0
			for ; sent < 60; sent++ {
				if _, err := conn.Write(chunk); err != nil {
					break
				}
			}
			assert.Less(t, sent, 60, "svmd read a 64 MiB hello")
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
	wg.Wait()
	afterBig := rssMiB(t, n1)
	// svmd counts a handshake as over once it has closed the connection,
	// just after the other end sees it closed.
	time.Sleep(500 * time.Millisecond)

	// A hundred connections each sending all but a byte of the largest
	// hello svmd takes: a few wait for their handshake, the rest are
	// closed at once.
	const conns = 100
	type outcome struct {
		conn   net.Conn
		closed bool
	}
	outcomes := make(chan outcome, conns)
	for range conns {
		conn, err := net.Dial("tcp", n1.peerAddr)
		require.NoError(t, err)
		conn.Write(peer.AppendFrame(nil, 1, make([]byte, peer.MaxHandshakeFrame))[:5+peer.MaxHandshakeFrame-1])
		go func() {
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err := conn.Read(make([]byte, 1))
			var ne net.Error
			outcomes <- outcome{conn, !(errors.As(err, &ne) && ne.Timeout())}
		}()
	}
	var held []net.Conn
	for range conns {
		o := <-outcomes
		if o.closed {
			o.conn.Close()
		} else {
			held = append(held, o.conn)
		}
	}
	assert.Len(t, held, 8, "handshakes under way from one host")
	during := rssMiB(t, n1)
	t.Logf("svmd's resident memory: %.1f MiB at start, %.1f MiB after 8 connections sent 64 MiB hellos, %.1f MiB with %d of %d connections in their handshake",
		before, afterBig, during, len(held), conns)
	assert.Less(t, during-before, 64.0, "svmd grew by more than 64 MiB")
	assert.Less(t, afterBig-before, 64.0, "svmd grew by more than 64 MiB")

	r := c.run(n1, "--hosts", "n1,n2", c.bin.testprog, "counter", "-k", "20")
	require.Equal(t, 0, r.code, r.stderr)
	for _, conn := range held {
		conn.Close()
	}
	alive(t, n1)
}

// TestRestartAfterKill: svmd killed with a job running leaves the job's
// directory; the next svmd removes it, numbers its jobs apart from the
// dead one's, and runs them.
func TestRestartAfterKill(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{extra: fastFailure})
	n1 := c.node("n1")
	jobDirs := func() []string {
		dirs, err := filepath.Glob(filepath.Join(n1.dir, "job-*"))
		require.NoError(t, err)
		return dirs
	}
	cmd, stderr := startHanging(t, c, n1, "n1,n2", 2)
	killed := jobDirs()
	require.Len(t, killed, 1)
	n1.signal(syscall.SIGKILL)
	<-n1.exited
	code, _ := waitJob(t, cmd)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "lost the job: svmd closed the connection")
	assert.Equal(t, killed, jobDirs(), "the dead svmd's job directory")

	n1.log = &lockedBuffer{}
	c.start(n1)
	c.waitPeers(n1, 1)
	assert.Empty(t, jobDirs())
	assert.Contains(t, n1.log.String(), "removed the directory of a job of an earlier svmd")
	for range 3 {
		r := c.run(n1, "--hosts", "n1,n2", c.bin.testprog, "counter", "-k", "20")
		require.Equal(t, 0, r.code, r.stderr)
	}
	require.Eventually(t, func() bool { return len(ranksLeft(t, c.bin.testprog)) == 0 }, failureBound, 20*time.Millisecond)
}

// FuzzSubmit feeds arbitrary submissions through the control socket of a
// running svmd, as another user when the tests run as root: svmd must
// answer each or close it, never die, and go on running a normal job.
func FuzzSubmit(f *testing.F) {
	c := newCluster(f, []string{"n1"}, clusterOpts{extra: []string{"--kill-after", "500ms"}})
	n1 := c.node("n1")
	normal := specFor("n1:2", 2, c.bin.testprog, "counter", "-k", "5")
	seeds := map[string]func(*daemon.JobSpec){
		"normal":       func(*daemon.JobSpec) {},
		"np 2^62":      func(s *daemon.JobSpec) { s.Settings.NProcs = 1 << 62 },
		"np 100000":    func(s *daemon.JobSpec) { s.Settings.NProcs = 100000 },
		"np -1":        func(s *daemon.JobSpec) { s.Settings.NProcs = -1 },
		"locks 2^32-1": func(s *daemon.JobSpec) { s.Settings.Locks = math.MaxUint32 },
		"barriers 0":   func(s *daemon.JobSpec) { s.Settings.Barriers = 0 },
		"region 0":     func(s *daemon.JobSpec) { s.Settings.RegionSize = 0 },
		"region 8T":    func(s *daemon.JobSpec) { s.Settings.RegionSize = 8 << 40 },
		"region 1T":    func(s *daemon.JobSpec) { s.Settings.RegionSize = 1 << 40 },
		"base top":     func(s *daemon.JobSpec) { s.Settings.Base = math.MaxUint64 &^ 0xfff },
		"gc 0":         func(s *daemon.JobSpec) { s.Settings.GCThreshold = 0 },
		"no hosts":     func(s *daemon.JobSpec) { s.Hosts = nil },
		"slots huge":   func(s *daemon.JobSpec) { s.Hosts[0].Slots = math.MaxInt },
		"bad node":     func(s *daemon.JobSpec) { s.Hosts[0].Node = "../n1" },
		"other node":   func(s *daemon.JobSpec) { s.Hosts[0].Node = "n9" },
		"relative":     func(s *daemon.JobSpec) { s.Program = "testprog" },
		"missing":      func(s *daemon.JobSpec) { s.Program = "/no/such/program" },
		"nul":          func(s *daemon.JobSpec) { s.Args = []string{"\x00"} },
		"no dir":       func(s *daemon.JobSpec) { s.Dir = "" },
		"kill after":   func(s *daemon.JobSpec) { s.KillAfter = math.MaxInt64 },
	}
	for _, change := range seeds {
		s := normal
		s.Hosts = append([]daemon.HostSlots(nil), normal.Hosts...)
		change(&s)
		f.Add(byte(daemon.KindSubmit), encodeSpec(s))
	}
	f.Add(byte(daemon.KindSubmit), []byte{})
	f.Add(byte(daemon.KindSubmit), []byte{0xdc, 0xff, 0xff})
	f.Add(byte(daemon.KindExit), encodeSpec(normal))
	f.Add(byte(0), []byte("GET / HTTP/1.0\r\n\r\n"))

	// Without root, a fuzzed job would run as the tests' own user: only
	// the seeds' programs may run then.
	allowed := func(body []byte) bool {
		var s daemon.JobSpec
		if os.Getuid() == 0 || msgpack.Unmarshal(body, &s) != nil {
			return true
		}
		return s.Program == c.bin.testprog || s.Program == "" || strings.HasPrefix(s.Program, "/no/") || !filepath.IsAbs(s.Program)
	}
	served := 0
	normalJob := func(t testing.TB) {
		ex, accepted, err := submitRaw(n1, nil, daemon.KindSubmit, encodeSpec(normal), time.Minute)
		require.NoError(t, err)
		require.True(t, accepted)
		require.Equal(t, 0, ex.Code, ex.Message)
	}
	f.Cleanup(func() {
		alive(f, n1)
		normalJob(f)
		f.Logf("svmd served %d fuzzed submissions and then a normal job", served)
	})
	f.Fuzz(func(t *testing.T, kind byte, body []byte) {
		if !allowed(body) {
			t.Skip("a program the tests' user would run")
		}
		submitRaw(n1, otherUser(), peer.Kind(kind), body, 30*time.Second)
		alive(t, n1)
		if served%50 == 0 {
			normalJob(t)
		}
		served++
	})
}

// TestSecretlessPeersOfOtherUsers: without a cluster secret any local
// user can reach a node's peer port on loopback; one who is not svmd's
// user is refused before the handshake, so cannot pose as a node and start
// job parts as whatever uid it names.
func TestSecretlessPeersOfOtherUsers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: the intruder must be another user")
	}
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{})
	n1 := c.node("n1")
	conn, err := dialAs("tcp", n1.peerAddr, nobody)
	require.NoError(t, err)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = peer.Client(conn, "n2", nil)
	require.Error(t, err, "a handshake as node n2 from uid 65534")
	assert.Eventually(t, func() bool {
		return strings.Contains(n1.log.String(), "another user's process (uid 65534, svmd runs as uid 0)")
	}, 5*time.Second, 20*time.Millisecond, "n1's log:\n%s", n1.log)

	// The nodes, both root's, still run jobs across each other.
	r := c.run(n1, "--hosts", "n1,n2", c.bin.testprog, "counter", "-k", "20")
	require.Equal(t, 0, r.code, r.stderr)
}
