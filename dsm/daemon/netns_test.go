package daemon_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// netnsNet is a private network for a test: one network namespace per
// node, each with an eth0 on a bridge that lives in a namespace of its own,
// so nothing is added to the host's network.
type netnsNet struct {
	bridge string   // the namespace holding the bridge
	nodes  []string // the nodes' namespaces
	hosts  []string // their addresses, by index
}

// netnsSubnet is the /24 the test network uses; it exists only inside the
// test's namespaces, so it cannot clash with the host's routes.
const netnsSubnet = "10.231.47"

// ipCmd runs ip ARGS and returns its combined output and error.
func ipCmd(args ...string) (string, error) {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// netnsList returns the names ip netns list shows.
func netnsList(t *testing.T) []string {
	out, err := ipCmd("netns", "list")
	require.NoError(t, err)
	var names []string
	for _, line := range strings.Split(out, "\n") {
		// Lines look like "NAME" or "NAME (id: N)".
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// newNetnsNet builds the network for n nodes, or skips the test when this
// process cannot create network namespaces. Its cleanup, registered before
// anything is created, deletes every namespace it made (and with them
// their veths and the bridge) however the test ends.
func newNetnsNet(t *testing.T, n int) *netnsNet {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root to create network namespaces (euid %d)", os.Geteuid())
	}
	for _, tool := range []string{"ip", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	prefix := fmt.Sprintf("svmtest-%d-", os.Getpid())
	nn := &netnsNet{bridge: prefix + "br"}
	var created []string
	t.Cleanup(func() {
		for i := len(created) - 1; i >= 0; i-- {
			if _, err := ipCmd("netns", "delete", created[i]); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		for _, name := range netnsList(t) {
			if strings.HasPrefix(name, prefix) {
				t.Errorf("cleanup: network namespace %s is left", name)
			}
		}
	})
	add := func(name string) error {
		// A namespace of that name can only be left by a crashed earlier
		// run with this pid: no live test uses it.
		ipCmd("netns", "delete", name)
		if _, err := ipCmd("netns", "add", name); err != nil {
			return err
		}
		created = append(created, name)
		return nil
	}
	// The first namespace doubles as the probe: without CAP_SYS_ADMIN (a
	// container, say) the test cannot run here.
	if err := add(nn.bridge); err != nil {
		t.Skipf("cannot create a network namespace: %v", err)
	}
	must := func(args ...string) {
		t.Helper()
		_, err := ipCmd(args...)
		require.NoError(t, err)
	}
	must("-n", nn.bridge, "link", "set", "lo", "up")
	must("-n", nn.bridge, "link", "add", "br0", "type", "bridge")
	must("-n", nn.bridge, "link", "set", "br0", "up")
	for i := range n {
		ns := fmt.Sprintf("%sn%d", prefix, i+1)
		require.NoError(t, add(ns))
		host := fmt.Sprintf("%s.%d", netnsSubnet, i+1)
		port := fmt.Sprintf("veth%d", i+1)
		// Both ends are created in their namespaces: none ever exists in
		// the host's.
		must("-n", nn.bridge, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
		must("-n", nn.bridge, "link", "set", port, "master", "br0")
		must("-n", nn.bridge, "link", "set", port, "up")
		must("-n", ns, "link", "set", "lo", "up")
		must("-n", ns, "addr", "add", host+"/24", "dev", "eth0")
		must("-n", ns, "link", "set", "eth0", "up")
		nn.nodes, nn.hosts = append(nn.nodes, ns), append(nn.hosts, host)
	}
	return nn
}

// randomSecret returns a cluster secret of 32 hex digits.
func randomSecret(t *testing.T) string {
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// metricValue returns the value of the unlabelled metric name in metrics,
// or -1 when it is not there.
func metricValue(metrics, name string) float64 {
	for _, line := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return f
			}
		}
	}
	return -1
}

// TestNodesInNetworkNamespaces runs a three-node cluster whose daemons talk
// over a real (virtual) network, each in a network namespace of its own
// with an address of its own, so the links are not loopback and must be
// authenticated; then it restarts one node with the wrong secret and
// checks the others refuse it and jobs needing it are refused.
func TestNodesInNetworkNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("starts daemons in network namespaces")
	}
	begin := time.Now()
	// The network first: a machine that cannot make one skips the test
	// before spending time on the build.
	nw := newNetnsNet(t, 3)
	netUp := time.Now()
	bin := buildBinaries(t)
	built := time.Now()
	secret := randomSecret(t)
	c := newCluster(t, []string{"n1", "n2", "n3"}, clusterOpts{
		secrets: []string{secret, secret, secret},
		hosts:   nw.hosts,
		netns:   nw.nodes,
	})
	up := time.Now()
	t.Logf("network up in %v, build %v, cluster up in %v", netUp.Sub(begin).Round(time.Millisecond),
		built.Sub(netUp).Round(time.Millisecond), up.Sub(built).Round(time.Millisecond))
	n1, n3 := c.node("n1"), c.node("n3")
	for _, n := range c.nodes {
		// Links between namespaces come from their eth0 addresses.
		require.Contains(t, n.log.String(), "peer connected", "node %s", n.name)
		require.NotContains(t, n.log.String(), "addr=127.", "node %s: a peer link over loopback", n.name)
	}

	hosts := "n1:2,n2:1,n3:1"
	jobs := []struct {
		name string
		args []string
		want string
	}{
		{"counter", []string{bin.testprog, "counter", "-k", "100"}, "counter 400"},
		{"falseshare", []string{bin.testprog, "falseshare", "-phases", "4"}, ""},
		{"sor", []string{bin.sor, "-check", "-rows", "64", "-cols", "256", "-iter", "5"}, "check ok"},
	}
	for _, j := range jobs {
		r := c.run(n1, append([]string{"--hosts", hosts}, j.args...)...)
		require.Zero(t, r.code, "%s: exit %d\nstdout:\n%s\nstderr:\n%s", j.name, r.code, r.stdout, r.stderr)
		if j.want != "" {
			require.Contains(t, r.stdout, j.want, "%s: stderr:\n%s", j.name, r.stderr)
		}
		t.Logf("%s across %s: %v", j.name, hosts, r.took.Round(time.Millisecond))
	}

	// n3 comes back holding another secret of the same length.
	n3.signal(syscall.SIGTERM)
	select {
	case <-n3.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("node n3 did not stop within 10s of SIGTERM; log:\n%s", n3.log)
	}
	wrong := randomSecret(t)
	for wrong == secret {
		wrong = randomSecret(t)
	}
	require.NoError(t, os.WriteFile(n3.secretFile, []byte(wrong), 0o600))
	require.NoError(t, os.Chmod(n3.secretFile, 0o600))
	c.start(n3)
	authFailed := func() bool {
		for _, n := range []*node{n1, n3} {
			l := n.log.String()
			if strings.Contains(l, "authentication failed") || strings.Contains(l, "does not hold the cluster secret") {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(10 * time.Second)
	for !authFailed() {
		if time.Now().After(deadline) {
			t.Fatalf("no authentication failure logged 10s after n3 restarted with the wrong secret\nn1 log:\n%s\nn3 log:\n%s", n1.log, n3.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m := n1.scrape(t, false)
	require.Contains(t, m, `svm_peer_up{peer="n3"} 0`)
	require.Contains(t, m, `svm_peer_up{peer="n2"} 1`)
	require.Greater(t, metricValue(m, "svm_peer_auth_failures_total"), 0.0, "n1 metrics:\n%s", m)

	r := c.run(n1, "--hosts", "n1,n3", bin.testprog, "counter", "-k", "10")
	require.NotZero(t, r.code, "a job on n1,n3 ran though n3 holds the wrong secret\nstdout:\n%s", r.stdout)
	require.Contains(t, r.stderr, "node n3 is not connected")
	t.Logf("job on n1,n3 refused (exit %d): %s", r.code, strings.TrimSpace(r.stderr))

	// n1 and n2 still work together.
	r = c.run(n1, "--hosts", "n1,n2", bin.testprog, "counter", "-k", "10")
	require.Zero(t, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "counter 20")
	t.Logf("total %v", time.Since(begin).Round(time.Millisecond))
}
