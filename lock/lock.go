// Package lock is the distributed lock protocol of one rank, as a state
// machine: calls and messages in, messages and decisions out.
//
// Every lock has a static manager, lock id mod nprocs, which remembers the
// last rank that asked for the lock. A request goes to the manager, which
// forwards it to that last requester; the last requester grants the lock when
// it releases it (or at once, if it is not using it). Waiting ranks therefore
// form a queue in the order the manager saw their requests. A rank that holds
// the lock's token and asks for it again gets it with no message at all.
//
// The package decides who grants to whom; the caller attaches the consistency
// information (the intervals the acquirer lacks, judged by the vector time in
// the request). It never does I/O, keeps no clock and starts no goroutine.
package lock

import (
	"errors"
	"fmt"

	"github.com/svmcluster/svm/protocol"
)

// Config describes the rank and the job's lock id space.
type Config struct {
	Self, NProcs int
	Locks        uint32 // lock ids are 0..Locks-1
}

// Table holds this rank's part of every lock: manager state for the locks it
// manages and holder state for the locks it uses.
type Table struct {
	cfg   Config
	locks map[uint32]*state
}

type state struct {
	// tail is the last rank that asked for the lock; kept by the manager only.
	tail int
	// token: this rank owns the lock and may grant it.
	token bool
	// held: the application holds the lock.
	held bool
	// waiting: this rank asked for the lock and has no grant yet.
	waiting bool
	// next is the request forwarded here, to be granted at release.
	next *protocol.LockRequest
}

// Grant tells the caller to pass lock Lock to rank To, whose vector time was
// VT when it asked.
type Grant struct {
	Lock uint32
	To   int
	VT   protocol.VectorTime
}

// Result is what handling a message produced.
type Result struct {
	// Send are messages to deliver to other ranks.
	Send []protocol.Envelope
	// Grant, if not nil, must be sent as a protocol.LockGrant.
	Grant *Grant
	// Acquired, if not nil, is the grant this rank was waiting for: the
	// application now holds the lock and must merge the grant's intervals.
	Acquired *protocol.LockGrant
	// Wanted, if true, says a request for lock WantedLock is now queued
	// behind the application's hold: its release passes the lock on.
	Wanted     bool
	WantedLock uint32
}

// New returns the lock table of one rank. Initially every manager holds the
// tokens of the locks it manages.
func New(cfg Config) (*Table, error) {
	if cfg.NProcs <= 0 || cfg.Self < 0 || cfg.Self >= cfg.NProcs {
		return nil, fmt.Errorf("lock: rank %d of %d processes", cfg.Self, cfg.NProcs)
	}
	if cfg.Locks == 0 {
		return nil, errors.New("lock: no locks configured")
	}
	return &Table{cfg: cfg, locks: make(map[uint32]*state)}, nil
}

// Manager returns the rank that manages lock id.
func (t *Table) Manager(id uint32) int { return int(id % uint32(t.cfg.NProcs)) }

func (t *Table) lock(id uint32) (*state, error) {
	if id >= t.cfg.Locks {
		return nil, fmt.Errorf("lock %d out of range [0,%d)", id, t.cfg.Locks)
	}
	s := t.locks[id]
	if s == nil {
		mgr := t.Manager(id)
		s = &state{tail: mgr, token: mgr == t.cfg.Self}
		t.locks[id] = s
	}
	return s, nil
}

// Held reports whether this rank's application holds lock id.
func (t *Table) Held(id uint32) bool {
	s := t.locks[id]
	return s != nil && s.held
}

// Wanted reports whether another rank's request for lock id is queued here.
func (t *Table) Wanted(id uint32) bool {
	s := t.locks[id]
	return s != nil && s.next != nil
}

// Acquire starts acquiring lock id, with vt the rank's vector time. If the
// rank owns the idle lock, local is true and the lock is held at once, with
// no message. Otherwise the returned messages carry the request and the lock
// arrives later as Result.Acquired.
func (t *Table) Acquire(id uint32, vt protocol.VectorTime) (local bool, send []protocol.Envelope, err error) {
	s, err := t.lock(id)
	if err != nil {
		return false, nil, err
	}
	switch {
	case s.held:
		return false, nil, fmt.Errorf("lock %d is already held by rank %d", id, t.cfg.Self)
	case s.waiting:
		return false, nil, fmt.Errorf("lock %d is already being acquired by rank %d", id, t.cfg.Self)
	case s.token:
		s.held = true
		return true, nil, nil
	}
	s.waiting = true
	req := &protocol.LockRequest{Lock: id, Requester: t.cfg.Self, VT: vt.Clone()}
	mgr := t.Manager(id)
	if mgr != t.cfg.Self {
		return false, []protocol.Envelope{{From: t.cfg.Self, To: mgr, Msg: req}}, nil
	}
	// This rank manages the lock: skip the hop to itself.
	prev := s.tail
	s.tail = t.cfg.Self
	req.Forwarded = true
	return false, []protocol.Envelope{{From: t.cfg.Self, To: prev, Msg: req}}, nil
}

// Release releases lock id. If another rank's request is queued here, the
// returned grant says to pass the lock on; otherwise the rank keeps the token.
func (t *Table) Release(id uint32) (*Grant, error) {
	s, err := t.lock(id)
	if err != nil {
		return nil, err
	}
	if !s.held {
		return nil, fmt.Errorf("unlock of lock %d, which rank %d does not hold", id, t.cfg.Self)
	}
	s.held = false
	if s.next == nil {
		return nil, nil
	}
	return t.passOn(id, s), nil
}

func (t *Table) passOn(id uint32, s *state) *Grant {
	g := &Grant{Lock: id, To: s.next.Requester, VT: s.next.VT}
	s.token = false
	s.next = nil
	return g
}

// Step handles a lock message from rank from.
func (t *Table) Step(from int, m protocol.Message) (Result, error) {
	switch m := m.(type) {
	case *protocol.LockRequest:
		if m.Forwarded {
			return t.forwarded(m)
		}
		return t.request(from, m)
	case *protocol.LockGrant:
		return t.granted(from, m)
	default:
		return Result{}, fmt.Errorf("lock: unexpected message %v", m.Type())
	}
}

// request runs at the manager: remember the new last requester and forward
// the request to the previous one.
func (t *Table) request(from int, m *protocol.LockRequest) (Result, error) {
	s, err := t.lock(m.Lock)
	if err != nil {
		return Result{}, err
	}
	if t.Manager(m.Lock) != t.cfg.Self {
		return Result{}, fmt.Errorf("lock %d: request from rank %d reached rank %d, which does not manage it", m.Lock, from, t.cfg.Self)
	}
	if m.Requester != from {
		return Result{}, fmt.Errorf("lock %d: request from rank %d names requester %d", m.Lock, from, m.Requester)
	}
	prev := s.tail
	s.tail = m.Requester
	fwd := *m
	fwd.Forwarded = true
	if prev == t.cfg.Self {
		return t.forwarded(&fwd)
	}
	return Result{Send: []protocol.Envelope{{From: t.cfg.Self, To: prev, Msg: &fwd}}}, nil
}

// forwarded runs at the previous last requester: grant now if idle, else
// queue the requester behind this rank.
func (t *Table) forwarded(m *protocol.LockRequest) (Result, error) {
	s, err := t.lock(m.Lock)
	if err != nil {
		return Result{}, err
	}
	if m.Requester == t.cfg.Self {
		return Result{}, fmt.Errorf("lock %d: rank %d's own request was forwarded back to it", m.Lock, t.cfg.Self)
	}
	if s.next != nil {
		return Result{}, fmt.Errorf("lock %d: rank %d already has rank %d queued behind it, got rank %d", m.Lock, t.cfg.Self, s.next.Requester, m.Requester)
	}
	if !s.token && !s.waiting {
		return Result{}, fmt.Errorf("lock %d: request of rank %d forwarded to rank %d, which neither has nor awaits the lock", m.Lock, m.Requester, t.cfg.Self)
	}
	s.next = m
	if s.token && !s.held {
		return Result{Grant: t.passOn(m.Lock, s)}, nil
	}
	return Result{Wanted: s.held, WantedLock: m.Lock}, nil
}

func (t *Table) granted(from int, m *protocol.LockGrant) (Result, error) {
	s, err := t.lock(m.Lock)
	if err != nil {
		return Result{}, err
	}
	if !s.waiting {
		return Result{}, fmt.Errorf("lock %d: unexpected grant from rank %d to rank %d", m.Lock, from, t.cfg.Self)
	}
	s.waiting = false
	s.token = true
	s.held = true
	return Result{Acquired: m}, nil
}
