package daemon_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The programs the cluster tests run, built once per test binary.
type binaries struct {
	svmd, svmf, testprog, sor string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.svmd != "" {
		os.RemoveAll(filepath.Dir(built.svmd))
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	built     binaries
	buildErr  error
)

func buildBinaries(t testing.TB) binaries {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "svm-daemon-test-")
		if err == nil {
			err = os.Chmod(dir, 0o755) // other users' jobs run them too
		}
		if err != nil {
			buildErr = err
			return
		}
		built = binaries{
			svmd: filepath.Join(dir, "svmd"), svmf: filepath.Join(dir, "svmf"),
			testprog: filepath.Join(dir, "testprog"), sor: filepath.Join(dir, "sor"),
		}
		for out, pkg := range map[string]string{
			built.svmd: "../../cmd/svmd", built.svmf: "../../cmd/svmf",
			built.testprog: "../internal/testprog", built.sor: "../../bench/sor",
		} {
			if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("building %s: %v\n%s", pkg, err, b)
				return
			}
		}
	})
	require.NoError(t, buildErr)
	return built
}

// lockedBuffer collects a daemon's log while tests read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// node is one svmd of a test cluster.
type node struct {
	name                  string
	dir                   string // its socket directory
	peerAddr, metricsAddr string
	secretFile            string
	// netns, when set, is the network namespace the daemon runs in.
	netns string
	cmd   *exec.Cmd
	log   *lockedBuffer
	// exited is closed when the daemon process has been reaped.
	exited chan struct{}
}

type cluster struct {
	t     testing.TB
	bin   binaries
	nodes []*node
	// extra are flags every daemon gets.
	extra []string
}

// clusterOpts shape a test cluster.
type clusterOpts struct {
	// secrets, when set, are each node's cluster secret (by index).
	secrets []string
	// hosts, when set, are each node's IP address (default 127.0.0.1).
	hosts []string
	// netns, when set, are each node's network namespace.
	netns []string
	extra []string
}

// freePort finds a TCP port on host nobody listens on now, below the
// kernel's range of ephemeral ports: a port from that range (what listening
// on port 0 gives) can become the source port of any connection made before
// svmd binds it ("address already in use", seen on a loaded machine).
func freePort(t testing.TB, host string) string {
	t.Helper()
	low := 32768 // Linux's default start of the ephemeral range
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				low = v
			}
		}
	}
	const first = 10000
	for range 1000 {
		port := "0"
		if low > first {
			port = strconv.Itoa(first + rand.IntN(low-first))
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			continue // taken: another
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	t.Fatalf("no free TCP port on %s below %d", host, low)
	return ""
}

// newCluster starts one svmd per name, each with all the others as peers,
// and waits until every link is up.
func newCluster(t testing.TB, names []string, opt clusterOpts) *cluster {
	t.Helper()
	c := &cluster{t: t, bin: buildBinaries(t), extra: opt.extra}
	base := t.TempDir()
	// Other users reach the control sockets too.
	require.NoError(t, os.Chmod(filepath.Dir(base), 0o755))
	require.NoError(t, os.Chmod(base, 0o755))
	for i, name := range names {
		host := "127.0.0.1"
		if opt.hosts != nil {
			host = opt.hosts[i]
		}
		n := &node{name: name, dir: filepath.Join(base, name), log: &lockedBuffer{}}
		if opt.netns != nil {
			n.netns = opt.netns[i]
			// Ports in a fresh namespace are all free.
			n.peerAddr, n.metricsAddr = host+":7470", host+":9470"
		} else {
			n.peerAddr, n.metricsAddr = freePort(t, host), freePort(t, host)
		}
		if opt.secrets != nil {
			n.secretFile = filepath.Join(base, name+".secret")
			require.NoError(t, os.WriteFile(n.secretFile, []byte(opt.secrets[i]), 0o600))
		}
		c.nodes = append(c.nodes, n)
	}
	t.Cleanup(c.stopAll)
	for _, n := range c.nodes {
		c.start(n)
	}
	for _, n := range c.nodes {
		c.waitPeers(n, len(c.nodes)-1)
	}
	return c
}

func (c *cluster) node(name string) *node {
	for _, n := range c.nodes {
		if n.name == name {
			return n
		}
	}
	c.t.Fatalf("no node %s", name)
	return nil
}

// start starts n's daemon.
func (c *cluster) start(n *node) {
	args := []string{"--node", n.name, "--listen", n.peerAddr, "--metrics", n.metricsAddr, "--socket-dir", n.dir}
	if n.secretFile != "" {
		args = append(args, "--secret-file", n.secretFile)
	}
	for _, p := range c.nodes {
		if p != n {
			args = append(args, "--peer", p.name+"="+p.peerAddr)
		}
	}
	args = append(args, c.extra...)
	cmd := exec.Command(c.bin.svmd, args...)
	if n.netns != "" {
		cmd = exec.Command("ip", append([]string{"netns", "exec", n.netns, c.bin.svmd}, args...)...)
	}
	cmd.Stdout, cmd.Stderr = n.log, n.log
	require.NoError(c.t, cmd.Start())
	n.cmd, n.exited = cmd, make(chan struct{})
	go func() {
		cmd.Wait()
		close(n.exited)
	}()
}

// waitPeers waits until n's metrics say peers links are up.
func (c *cluster) waitPeers(n *node, peers int) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if m := n.scrape(c.t, true); m != "" && countUp(m) == peers {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("node %s: %d peers not connected after 15s; log:\n%s", n.name, peers, n.log)
}

func countUp(metrics string) int {
	up := 0
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "svm_peer_up{") && strings.HasSuffix(line, " 1") {
			up++
		}
	}
	return up
}

// scrape returns n's /metrics; quiet makes a failed scrape return "".
func (n *node) scrape(t testing.TB, quiet bool) string {
	var out []byte
	var err error
	if n.netns != "" {
		out, err = exec.Command("ip", "netns", "exec", n.netns, "curl", "-sf", "http://"+n.metricsAddr+"/metrics").Output()
	} else {
		var resp *http.Response
		if resp, err = http.Get("http://" + n.metricsAddr + "/metrics"); err == nil {
			out, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	}
	if err != nil {
		if !quiet {
			t.Fatalf("scraping node %s: %v", n.name, err)
		}
		return ""
	}
	return string(out)
}

// signal sends sig to n's daemon (ip netns exec execs it: same pid).
func (n *node) signal(sig syscall.Signal) {
	n.cmd.Process.Signal(sig)
}

func (c *cluster) stopAll() {
	for _, n := range c.nodes {
		if n.cmd != nil {
			n.signal(syscall.SIGTERM)
		}
	}
	for _, n := range c.nodes {
		if n.cmd == nil {
			continue
		}
		select {
		case <-n.exited:
		case <-time.After(10 * time.Second):
			n.signal(syscall.SIGKILL)
			<-n.exited
		}
		if c.t.Failed() {
			c.t.Logf("node %s log:\n%s", n.name, n.log)
		}
	}
}

// result is how a job submitted with svmf run ended.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// run submits a job through node via's svmf run and waits for it.
func (c *cluster) run(via *node, args ...string) result {
	return c.runAs(via, nil, args...)
}

// runAs is run as another user when cred is set.
func (c *cluster) runAs(via *node, cred *syscall.Credential, args ...string) result {
	c.t.Helper()
	cmd := c.svmf(via, cred, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(c.t, ok, "svmf: %v", err)
		r.code = ee.ExitCode()
	}
	return r
}

// svmf is the command svmf run ARGS through node via.
func (c *cluster) svmf(via *node, cred *syscall.Credential, args ...string) *exec.Cmd {
	full := append([]string{"run", "--daemon", via.dir}, args...)
	cmd := exec.Command(c.bin.svmf, full...)
	if via.netns != "" {
		if cred != nil {
			// ip netns exec needs root: it cannot run as the other user.
			c.t.Fatal("svmf as another user in a network namespace is not supported by this harness")
		}
		cmd = exec.Command("ip", append([]string{"netns", "exec", via.netns, c.bin.svmf}, full...)...)
	}
	cmd.Dir = os.TempDir()
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	return cmd
}

// ranksLeft lists the live (not zombie) processes running prog.
func ranksLeft(t testing.TB, prog string) []string {
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var left []string
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || exe != prog {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The state follows the parenthesised command name.
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		left = append(left, e.Name())
	}
	return left
}
