package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/svmcluster/svm/dsm/engine"
)

// Config is how one svmd runs. The YAML file's keys are the yaml names;
// the flags of svmd override them.
type Config struct {
	// Node is this node's name, as --hosts and the peers' configurations
	// name it. Default: the host name.
	Node string `yaml:"node"`
	// Listen is the TCP address the other nodes connect to.
	Listen string `yaml:"listen"`
	// Metrics is the HTTP address serving /metrics; empty: none.
	Metrics string `yaml:"metrics"`
	// SocketDir holds the socket svmf submits jobs through (svmd.sock) and
	// each job's engine socket. Default: DefaultSocketDir().
	SocketDir string `yaml:"socket_dir"`
	// SecretFile holds the cluster secret every node shares. Without one,
	// svmd listens on loopback only.
	SecretFile string `yaml:"secret_file"`
	// Peers are the other nodes: name → HOST:PORT of their Listen.
	Peers map[string]string `yaml:"peers"`
	// Heartbeat is how often a node tells each peer it is alive.
	Heartbeat time.Duration `yaml:"heartbeat"`
	// FailureTimeout is how long a peer may stay silent before its link,
	// and every job that spans it, is given up.
	FailureTimeout time.Duration `yaml:"failure_timeout"`
	// KillAfter is how long a stopped job's ranks get between SIGTERM and
	// SIGKILL.
	KillAfter time.Duration `yaml:"kill_after"`
	// MaxRanks is the most ranks a job submitted here, or with ranks
	// here, may have.
	MaxRanks int `yaml:"max_ranks"`
}

// Defaults.
const (
	DefaultListen         = "127.0.0.1:7470"
	DefaultMetrics        = "127.0.0.1:9470"
	DefaultHeartbeat      = 500 * time.Millisecond
	DefaultFailureTimeout = 3 * time.Second
	DefaultKillAfter      = 2 * time.Second
	DefaultMaxRanks       = 1024
	// ControlSocket is the name of the socket svmf submits through.
	ControlSocket = "svmd.sock"
	minSecret     = 16
)

// DefaultConfig returns the defaults, with the node named after the host.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	return Config{
		Node: host, Listen: DefaultListen, Metrics: DefaultMetrics, SocketDir: DefaultSocketDir(),
		Heartbeat: DefaultHeartbeat, FailureTimeout: DefaultFailureTimeout, KillAfter: DefaultKillAfter,
		MaxRanks: DefaultMaxRanks,
	}
}

// DefaultSocketDir is where svmd listens for jobs, and where svmf looks
// for it, when neither is told: $SVM_DAEMON, else /run/svm for root, else
// $XDG_RUNTIME_DIR/svm, else /tmp/svm-UID.
func DefaultSocketDir() string {
	if d := os.Getenv("SVM_DAEMON"); d != "" {
		return d
	}
	if os.Getuid() == 0 {
		return "/run/svm"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "svm")
	}
	return fmt.Sprintf("/tmp/svm-%d", os.Getuid())
}

// LoadConfig reads a YAML configuration over the defaults in c. Unknown
// keys are errors: a misspelt key must not silently do nothing.
func LoadConfig(c *Config, r io.Reader, name string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("config %s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %w", name, err)
	}
	return nil
}

// Check reports the first thing wrong with the configuration.
func (c *Config) Check() error {
	if err := checkNodeName(c.Node); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen %q: %w", c.Listen, err)
	}
	if c.Metrics != "" {
		if _, _, err := net.SplitHostPort(c.Metrics); err != nil {
			return fmt.Errorf("metrics %q: %w", c.Metrics, err)
		}
	}
	if c.SocketDir == "" {
		return errors.New("socket_dir: empty")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Peers)) {
		if err := checkNodeName(name); err != nil {
			return fmt.Errorf("peer: %w", err)
		}
		if name == c.Node {
			return fmt.Errorf("peer %q: that is this node's own name", name)
		}
		if _, _, err := net.SplitHostPort(c.Peers[name]); err != nil {
			return fmt.Errorf("peer %s=%q: %w", name, c.Peers[name], err)
		}
	}
	if c.Heartbeat <= 0 || c.FailureTimeout < 2*c.Heartbeat {
		return fmt.Errorf("heartbeat %v, failure_timeout %v: want a positive heartbeat and a timeout of at least two heartbeats", c.Heartbeat, c.FailureTimeout)
	}
	if c.KillAfter <= 0 {
		return fmt.Errorf("kill_after %v: want a positive duration", c.KillAfter)
	}
	if c.MaxRanks < 1 || c.MaxRanks > engine.MaxRanks {
		return fmt.Errorf("max_ranks %d: want 1 to %d", c.MaxRanks, engine.MaxRanks)
	}
	if c.SecretFile == "" && !loopback(c.Listen) {
		return fmt.Errorf("listen %s: not a loopback address, and no secret_file: "+
			"svmd does not accept unauthenticated peers from the network", c.Listen)
	}
	return nil
}

// loopback reports whether addr's host is only reachable from this machine.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ReadSecret reads the cluster secret: the file's contents without
// surrounding white space, at least 16 bytes, in a file only its owner may
// read (as ssh demands of private keys).
func ReadSecret(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("secret file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secret file %s: mode %04o lets others read it: chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secret file: %w", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < minSecret {
		return nil, fmt.Errorf("secret file %s: %d bytes; want at least %d (e.g. head -c 32 /dev/urandom | base64 > %s)", path, len(b), minSecret, path)
	}
	return b, nil
}
