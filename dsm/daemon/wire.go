package daemon

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/dsm/rank"
	"github.com/svmcluster/svm/protocol"
	"github.com/svmcluster/svm/protocol/peer"
)

// The frames between nodes, and between svmf and its node. Each body but a
// job message's is one msgpack-encoded struct below.
const (
	kindHeartbeat  = peer.FirstKind + iota // empty
	kindJobStart                           // jobStart: head → node
	kindJobReady                           // jobReady: node → head
	kindJobRun                             // jobRef: head → node
	kindJobMessage                         // binary, see appendJobMessage
	kindOutput                             // output: node → head → svmf
	kindRankExit                           // rankExit: node → head
	kindJobFailed                          // jobFailed: node → head
	kindJobStop                            // jobStop: head → node
	kindJobStopped                         // jobStopped: node → head
	kindSubmit                             // JobSpec: svmf → svmd
	kindAccepted                           // accepted: svmd → svmf
	kindCancel                             // cancel: svmf → svmd
	kindExit                               // exit: svmd → svmf
	kindStepJoin                           // StepJoin: svmf slurm-engine → svmd
	kindStepPart                           // stepPart: node → the step's head
	kindStepReady                          // stepReady: svmd → svmf slurm-engine
)

func kindName(k peer.Kind) string {
	names := [...]string{"heartbeat", "job start", "job ready", "job run", "job message", "output",
		"rank exit", "job failed", "job stop", "job stopped", "submit", "accepted", "cancel", "exit",
		"step join", "step part", "step ready"}
	if i := int(k) - int(peer.FirstKind); i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("kind %d", k)
}

// JobSpec is what svmf submits: the program, where its ranks go and the
// job's engine settings.
type JobSpec struct {
	// Settings are the engine's, as svmf run's flags give them; NProcs
	// is the job's size.
	Settings engine.Settings
	Hosts    []HostSlots
	Program  string
	Args     []string
	// Env and Dir are the submitter's environment and working directory,
	// which every rank gets on whatever node.
	Env       []string
	Dir       string
	KillAfter int64 // nanoseconds; 0: the node's kill_after
	// Bind is how each node binds its ranks to its CPUs (launch.Bindings).
	Bind string
}

type jobStart struct {
	ID, Head  string
	Placement []string // each rank's node
	Spec      JobSpec
	UID, GID  uint32
	// Step: a Slurm job step, whose ranks srun starts (see StepJoin);
	// of Spec, only its Settings count.
	Step bool
}

type jobReady struct {
	ID  string
	Err string
}

type jobRef struct{ ID string }

// jobStopped says a node's part of a job is over, with the final counters
// of its ranks there.
type jobStopped struct {
	ID    string
	Ranks []RankFigures
}

// RankFigures are one rank's counters (engine.RankSnapshot) as they travel
// to the job's head and on to svmf.
type RankFigures struct {
	Rank     int
	Stats    rank.Stats
	Metadata int64
	// BarrierWait and LockWait are in nanoseconds.
	BarrierWait, LockWait int64
	Sent, Received        []FlowFigures
}

// FlowFigures are the messages of one flow: type and other rank.
type FlowFigures struct {
	Type            protocol.MsgType
	Peer            int
	Messages, Bytes int64
}

func figuresOf(snaps []engine.RankSnapshot) []RankFigures {
	flows := func(m map[engine.Flow]engine.FlowCount) []FlowFigures {
		var out []FlowFigures
		for f, c := range m {
			out = append(out, FlowFigures{Type: f.Type, Peer: f.Peer, Messages: c.Messages, Bytes: c.Bytes})
		}
		return out
	}
	out := make([]RankFigures, 0, len(snaps))
	for _, s := range snaps {
		out = append(out, RankFigures{Rank: s.Rank, Stats: s.Stats, Metadata: s.Metadata,
			BarrierWait: int64(s.BarrierWait), LockWait: int64(s.LockWait), Sent: flows(s.Sent), Received: flows(s.Received)})
	}
	return out
}

// Snapshot is the rank's counters as the engine that hosted it gave them.
func (f RankFigures) Snapshot() engine.RankSnapshot {
	flows := func(l []FlowFigures) map[engine.Flow]engine.FlowCount {
		m := map[engine.Flow]engine.FlowCount{}
		for _, x := range l {
			m[engine.Flow{Type: x.Type, Peer: x.Peer}] = engine.FlowCount{Messages: x.Messages, Bytes: x.Bytes}
		}
		return m
	}
	return engine.RankSnapshot{Rank: f.Rank, Stats: f.Stats, Metadata: f.Metadata,
		BarrierWait: time.Duration(f.BarrierWait), LockWait: time.Duration(f.LockWait),
		Sent: flows(f.Sent), Received: flows(f.Received)}
}

// Streams of output.
const (
	stdout = 1
	stderr = 2
)

type output struct {
	ID     string
	Rank   int
	Stream int
	Data   []byte
}

type rankExit struct {
	ID   string
	Rank int
	Pid  int
	Code int
	// How says how it ended, as launch.DescribeExit does.
	How string
}

type jobFailed struct {
	ID, Reason string
}

type jobStop struct {
	ID, Reason string
}

type accepted struct {
	ID        string
	Placement []string
}

type cancel struct {
	Signal int
}

type exit struct {
	Code    int
	Message string
	// Ranks are the counters of every rank whose node said it stopped.
	Ranks []RankFigures
}

func encode(v any) []byte {
	b, err := msgpack.Marshal(v)
	if err != nil {
		// Only the structs above are encoded; none can fail.
		panic(fmt.Sprintf("daemon: encoding %T: %v", v, err))
	}
	return b
}

// decode reads a frame body into v. Bodies come from authenticated peers,
// but a bug must not become a crash, so the body is checked first as
// protocol messages are.
func decode(body []byte, v any) error {
	if err := protocol.ScanMsgpack(body); err != nil {
		return err
	}
	return msgpack.Unmarshal(body, v)
}

// A job message is the job's id, the sending and receiving ranks, and the
// encoded protocol message:
//
//	len(id) u8 | id | from u32 | to u32 | message
func appendJobMessage(b []byte, id string, from, to int, msg []byte) []byte {
	b = append(b, byte(len(id)))
	b = append(b, id...)
	b = binary.LittleEndian.AppendUint32(b, uint32(from))
	b = binary.LittleEndian.AppendUint32(b, uint32(to))
	return append(b, msg...)
}

func parseJobMessage(b []byte) (id string, from, to int, msg []byte, err error) {
	if len(b) < 1 || len(b) < 1+int(b[0])+8 {
		return "", 0, 0, nil, fmt.Errorf("job message of %d bytes is too short", len(b))
	}
	n := int(b[0])
	id = string(b[1 : 1+n])
	from = int(binary.LittleEndian.Uint32(b[1+n:]))
	to = int(binary.LittleEndian.Uint32(b[5+n:]))
	return id, from, to, b[9+n:], nil
}
