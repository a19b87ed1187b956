// Command svmd is the SVM node daemon: run one on every node of a cluster.
// It takes jobs from svmf run --hosts, runs the coherence engine for the
// ranks placed on its node, carries protocol messages to the other nodes'
// svmd over authenticated TCP, and serves Prometheus metrics.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/svmcluster/svm/dsm/daemon"
	"github.com/svmcluster/svm/internal/cli"
)

const usage = `usage: svmd [flags]

svmd runs the SVM engine for the ranks of multi-node jobs on this node.
Run one on every node, each with the same cluster secret and the others as
its peers; then, on any node, svmf run --hosts NODE[:SLOTS],... PROGRAM runs
a job across them.

Settings come from the defaults, then the --config file (YAML; keys as in
deploy/svmd.yml), then the flags. svmd refuses to listen on a non-loopback
address without a secret file. SIGTERM or SIGINT ends running jobs, telling
their users why, and stops svmd. svmd --version prints its module version
and VCS revision.

flags:
`

// peerFlags gathers repeated --peer NAME=HOST:PORT.
type peerFlags map[string]string

func (p peerFlags) String() string { return "" }

func (p peerFlags) Set(v string) error {
	name, addr, ok := strings.Cut(v, "=")
	if !ok || name == "" || addr == "" {
		return fmt.Errorf("%q is not NAME=HOST:PORT", v)
	}
	if _, dup := p[name]; dup {
		return fmt.Errorf("peer %s given twice", name)
	}
	p[name] = addr
	return nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "svmd:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		fmt.Fprintln(stdout, cli.Version("svmd"))
		return cli.ErrHelp
	}
	cfg, level, err := configure(args, stdout)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	d, err := daemon.New(cfg, log)
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	d.Start()
	s := <-sigs
	signal.Stop(sigs)
	d.Stop(fmt.Sprintf("received %v", s))
	return nil
}

// configure reads the defaults, the config file and the flags, in that
// order of precedence from low to high; -h prints the usage on stdout.
func configure(args []string, stdout io.Writer) (daemon.Config, slog.Level, error) {
	def := daemon.DefaultConfig()
	fs := flag.NewFlagSet("svmd", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	var flags daemon.Config
	peers := peerFlags{}
	configFile := fs.String("config", "", "YAML configuration `file`")
	fs.StringVar(&flags.Node, "node", def.Node, "this node's `name`, as --hosts and the peers name it")
	fs.StringVar(&flags.Listen, "listen", def.Listen, "`HOST:PORT` the other nodes connect to")
	fs.StringVar(&flags.Metrics, "metrics", def.Metrics, "`HOST:PORT` serving Prometheus /metrics (empty: none)")
	fs.StringVar(&flags.SocketDir, "socket-dir", def.SocketDir, "`dir`ectory of the socket svmf submits through, and of the jobs' sockets")
	fs.StringVar(&flags.SecretFile, "secret-file", "", "`file` holding the cluster secret (mode 600, at least 16 bytes)")
	fs.Var(peers, "peer", "another node, as `NAME=HOST:PORT` (repeatable)")
	fs.DurationVar(&flags.Heartbeat, "heartbeat", def.Heartbeat, "how often to tell each peer this node is alive")
	fs.DurationVar(&flags.FailureTimeout, "failure-timeout", def.FailureTimeout, "silence after which a peer, and every job spanning it, is given up")
	fs.DurationVar(&flags.KillAfter, "kill-after", def.KillAfter, "how long stopped ranks get between SIGTERM and SIGKILL")
	fs.IntVar(&flags.MaxRanks, "max-ranks", def.MaxRanks, "the most ranks a job may have")
	verbose := fs.Bool("v", false, "log debug messages")
	version := fs.Bool("version", false, "print svmd's module version and VCS revision, and exit (given alone)")
	if err := cli.Parse(fs, args, stdout); err != nil {
		return daemon.Config{}, 0, err
	}
	if fs.NArg() > 0 {
		return daemon.Config{}, 0, fmt.Errorf("unexpected argument %q: svmd takes only flags (svmd -h lists them)", fs.Arg(0))
	}
	if *version {
		return daemon.Config{}, 0, errors.New("--version is given alone: svmd --version")
	}
	cfg := def
	if *configFile != "" {
		f, err := os.Open(*configFile)
		if err != nil {
			return daemon.Config{}, 0, err
		}
		err = daemon.LoadConfig(&cfg, f, *configFile)
		f.Close()
		if err != nil {
			return daemon.Config{}, 0, err
		}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "node":
			cfg.Node = flags.Node
		case "listen":
			cfg.Listen = flags.Listen
		case "metrics":
			cfg.Metrics = flags.Metrics
		case "socket-dir":
			cfg.SocketDir = flags.SocketDir
		case "secret-file":
			cfg.SecretFile = flags.SecretFile
		case "heartbeat":
			cfg.Heartbeat = flags.Heartbeat
		case "failure-timeout":
			cfg.FailureTimeout = flags.FailureTimeout
		case "kill-after":
			cfg.KillAfter = flags.KillAfter
		case "max-ranks":
			cfg.MaxRanks = flags.MaxRanks
		case "peer":
			if cfg.Peers == nil {
				cfg.Peers = map[string]string{}
			}
			for n, a := range peers {
				cfg.Peers[n] = a
			}
		}
	})
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	return cfg, level, cfg.Check()
}
