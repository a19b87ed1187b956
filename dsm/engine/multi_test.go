package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/dsm"
	"github.com/svmcluster/svm/protocol"
)

// relay is a Remote between the engines of one process: every message is
// encoded, queued, decoded and delivered by a goroutine, as a network link
// between daemons would.
type relay struct {
	ch      chan []byte
	engines []*Engine // by rank
	errs    chan error
}

func (r *relay) Send(env protocol.Envelope, encoded []byte) error {
	r.ch <- append([]byte{byte(env.From), byte(env.To)}, encoded...)
	return nil
}

func (r *relay) run() {
	for frame := range r.ch {
		m, err := protocol.Decode(frame[2:])
		if err == nil {
			err = r.engines[frame[1]].Deliver(protocol.Envelope{From: int(frame[0]), To: int(frame[1]), Msg: m}, len(frame)-2)
		}
		if err != nil {
			r.errs <- err
			return
		}
	}
}

var (
	testprogOnce sync.Once
	testprogPath string
	testprogErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if testprogPath != "" {
		os.RemoveAll(filepath.Dir(testprogPath))
	}
	os.Exit(code)
}

// buildTestprog builds the test programs once per test binary.
func buildTestprog(t *testing.T) string {
	testprogOnce.Do(func() {
		dir, err := os.MkdirTemp("", "svm-engine-test-")
		if err != nil {
			testprogErr = err
			return
		}
		testprogPath = filepath.Join(dir, "testprog")
		out, err := exec.Command("go", "build", "-o", testprogPath, "../internal/testprog").CombinedOutput()
		if err != nil {
			testprogErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	require.NoError(t, testprogErr)
	return testprogPath
}

// TestJobAcrossEngines runs jobs whose ranks are split between two engines
// that reach each other only through encoded messages: locks, barriers,
// diffs, shared pointers and allocation (which rank 0's engine serves for
// the others) all cross between them.
func TestJobAcrossEngines(t *testing.T) {
	prog := buildTestprog(t)
	for _, tc := range []struct {
		split [][]int
		args  string
	}{
		{[][]int{{0, 1}, {2, 3}}, "counter -k 200"},
		{[][]int{{0, 2}, {1, 3}}, "falseshare -phases 8"},
		{[][]int{{1}, {0, 2}}, "list -n 300"},
		{[][]int{{0}, {1, 2}}, "gc -rounds 5"},
	} {
		t.Run(fmt.Sprintf("%v %s", tc.split, tc.args), func(t *testing.T) {
			runSplit(t, prog, tc.split, strings.Fields(tc.args))
		})
	}
}

func runSplit(t *testing.T, prog string, split [][]int, args []string) {
	np := 0
	for _, s := range split {
		np += len(s)
	}
	r := &relay{ch: make(chan []byte, 1024), engines: make([]*Engine, np), errs: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type running struct {
		eng  *Engine
		done chan error
	}
	var engines []running
	for i, ranks := range split {
		dir, err := SocketDir()
		require.NoError(t, err)
		defer os.RemoveAll(dir)
		cfg := DefaultConfig(np, SocketPath(dir))
		cfg.Ranks, cfg.Remote = ranks, r
		eng, err := New(cfg)
		require.NoError(t, err, "engine %d", i)
		defer eng.Close()
		for _, rk := range ranks {
			r.engines[rk] = eng
		}
		done := make(chan error, 1)
		go func() { done <- eng.Run(ctx) }()
		engines = append(engines, running{eng, done})
	}
	go r.run()
	var cmds []*exec.Cmd
	for i, ranks := range split {
		for _, rk := range ranks {
			cmd := exec.Command(prog, args...)
			cmd.Env = append(os.Environ(), dsm.EnvSocket+"="+engines[i].eng.cfg.Socket, dsm.EnvRank+"="+strconv.Itoa(rk))
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			require.NoError(t, cmd.Start())
			cmds = append(cmds, cmd)
		}
	}
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait())
	}
	for i, e := range engines {
		select {
		case err := <-e.done:
			require.NoError(t, err, "engine %d", i)
		case err := <-r.errs:
			t.Fatalf("relay: %v", err)
		}
	}
	// Every flow's count agrees at both ends, whichever engines they are
	// in, once the relay has delivered the last messages.
	flows := func() (sent, received map[[2]int]FlowCount) {
		sent, received = map[[2]int]FlowCount{}, map[[2]int]FlowCount{}
		add := func(m map[[2]int]FlowCount, from, to int, c FlowCount) {
			s := m[[2]int{from, to}]
			s.Messages += c.Messages
			s.Bytes += c.Bytes
			m[[2]int{from, to}] = s
		}
		for _, e := range engines {
			for _, snap := range e.eng.Snapshot() {
				for f, c := range snap.Sent {
					add(sent, snap.Rank, f.Peer, c)
				}
				for f, c := range snap.Received {
					add(received, f.Peer, snap.Rank, c)
				}
			}
		}
		return sent, received
	}
	assert.Eventually(t, func() bool {
		sent, received := flows()
		return reflect.DeepEqual(sent, received)
	}, 5*time.Second, 10*time.Millisecond)
	sent, received := flows()
	select {
	case err := <-r.errs:
		t.Fatalf("relay: %v", err)
	default:
	}
	require.Equal(t, sent, received)
	require.NotEmpty(t, sent)
}

func TestEngineRejectsBadPlacement(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig(3, SocketPath(dir))
	cfg.Ranks = []int{0, 1}
	_, err := New(cfg)
	require.ErrorContains(t, err, "no way to reach the others")
	cfg.Ranks, cfg.Remote = []int{0, 0}, &relay{}
	_, err = New(cfg)
	require.ErrorContains(t, err, "rank 0 out of range or twice")
	cfg.Ranks = []int{5}
	_, err = New(cfg)
	require.ErrorContains(t, err, "rank 5 out of range")
}
