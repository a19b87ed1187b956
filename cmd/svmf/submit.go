package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/svmcluster/svm/dsm"
	"github.com/svmcluster/svm/dsm/daemon"
	"github.com/svmcluster/svm/dsm/engine"
)

// submitCommand runs a job across nodes through this node's svmd.
func submitCommand(f runFlags, program string, args []string, stdout, stderr io.Writer) (int, error) {
	if f.hosts != "" && f.hostfile != "" {
		return 2, errors.New("run: give --hosts or --hostfile, not both")
	}
	var hosts []daemon.HostSlots
	var err error
	if f.hosts != "" {
		hosts, err = daemon.ParseHosts(f.hosts)
	} else {
		var file *os.File
		if file, err = os.Open(f.hostfile); err == nil {
			hosts, err = daemon.ParseHostfile(file)
			file.Close()
		}
	}
	if err != nil {
		return 2, fmt.Errorf("run: %w", err)
	}
	if f.np == 0 {
		for _, h := range hosts {
			f.np += h.Slots
		}
	}
	settings, err := f.settings()
	if err != nil {
		return 2, fmt.Errorf("run: %w", err)
	}
	prog, err := exec.LookPath(program)
	if err == nil {
		prog, err = filepath.Abs(prog)
	}
	if err != nil {
		return 2, fmt.Errorf("run: %w", err)
	}
	dir, err := os.Getwd()
	if err != nil {
		return 2, fmt.Errorf("run: working directory: %w", err)
	}
	spec := daemon.JobSpec{
		Settings: settings, Hosts: hosts, Program: prog, Args: args, Env: jobEnv(), Dir: dir,
		KillAfter: int64(f.killAfter), Bind: f.bind,
	}
	if err := spec.Check(engine.MaxRanks); err != nil {
		return 2, fmt.Errorf("run: %w", err)
	}
	socketDir := f.daemon
	if socketDir == "" {
		socketDir = daemon.DefaultSocketDir()
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	opt := daemon.SubmitOptions{Stdout: stdout, Stderr: stderr, Tag: f.tagOutput, Signals: sigs}
	var statsErr error
	if f.stats || f.statsJSON != "" {
		started := time.Now()
		opt.Ranks = func(snaps []engine.RankSnapshot) {
			statsErr = reportStats(f, stderr, collectStats(time.Since(started), nil, snaps))
		}
	}
	code, err := daemon.Submit(socketDir, spec, opt)
	if statsErr != nil && code == 0 {
		return 1, statsErr
	}
	return code, err
}

// jobEnv is svmf's environment without the variables each rank gets its
// own value of.
func jobEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case dsm.EnvSocket, dsm.EnvRank, dsm.EnvNProcs:
			continue
		}
		env = append(env, kv)
	}
	return env
}
