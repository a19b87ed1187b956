package daemon

import (
	"io"
	"log/slog"
	"testing"

	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/protocol"
	"github.com/svmcluster/svm/protocol/peer"
)

// FuzzHandle feeds arbitrary frames from a peer to a daemon: each must be
// taken or refused with an error (which closes the link), never crash it.
func FuzzHandle(f *testing.F) {
	settings := engine.DefaultSettings(2)
	settings.RegionSize = 1 << 20
	spec := JobSpec{Settings: settings, Hosts: []HostSlots{{"n1", 1}, {"n2", 1}}, Program: "/bin/true"}
	lock, _ := protocol.Encode(&protocol.LockRequest{Lock: 1, Requester: 1})
	for _, seed := range []struct {
		kind peer.Kind
		body []byte
	}{
		{kindHeartbeat, nil},
		{kindJobStart, encode(jobStart{ID: "n2.1", Head: "n2", Placement: []string{"n1", "n2"}, Spec: spec})},
		{kindJobRun, encode(jobRef{ID: "n2.1"})},
		{kindJobStop, encode(jobStop{ID: "n2.1", Reason: "x"})},
		{kindJobReady, encode(jobReady{ID: "n1.1"})},
		{kindOutput, encode(output{ID: "n1.1", Rank: 1, Stream: stdout, Data: []byte("hi\n")})},
		{kindRankExit, encode(rankExit{ID: "n1.1", Rank: 1, Code: 3})},
		{kindJobFailed, encode(jobFailed{ID: "n1.1", Reason: "x"})},
		{kindJobStopped, encode(jobRef{ID: "n1.1"})},
		{kindJobMessage, appendJobMessage(nil, "n2.1", 1, 0, lock)},
		{kindSubmit, encode(spec)},
		{200, []byte{0xff}},
	} {
		f.Add(byte(seed.kind), seed.body)
	}
	cfg := DefaultConfig()
	cfg.Node, cfg.Listen, cfg.Metrics = "n1", "127.0.0.1:0", ""
	cfg.SocketDir = f.TempDir()
	cfg.Peers = map[string]string{"n2": "127.0.0.1:1"}
	d, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.Fatal(err)
	}
	d.Start()
	f.Cleanup(func() { d.Stop("test over") })
	f.Fuzz(func(t *testing.T, kind byte, body []byte) {
		d.handle("n2", peer.Kind(kind), body)
	})
}
