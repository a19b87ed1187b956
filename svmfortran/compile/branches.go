package compile

import (
	"strconv"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// Branches. A branch may not leave or enter an SVM construct: the others
// wait for its end, or have not joined it. In exclusive mode a branch out
// of a block the others followed the master into (an EXIT, a GO TO to a
// label after the loop) first sends them to the dispatcher they wait in
// after it; a CYCLE of such a loop goes to the end of its iteration, where
// the master lets them go on with it.

// action is the statement that acts: s, or the statement a logical IF s
// guards.
func action(s *syntax.Stmt) *syntax.Stmt {
	if s.Kind == syntax.KindLogicalIf {
		return s.Inner
	}
	return s
}

// checkBranches reports branches that leave or enter an SVM construct.
func (ug *unitGen) checkBranches(n *node, cx ctx) {
	s := action(n.stmt)
	from := ug.construct(n)
	for _, l := range s.Targets {
		t := ug.labels[l]
		if t == nil {
			continue
		}
		switch to := ug.construct(t); {
		case to == from:
		case from != nil && !encloses(from, t):
			ug.errorf(n.stmt.Pos, "the branch to %d leaves %s: branch only inside it", l, describe(from.stmt))
		default:
			ug.errorf(n.stmt.Pos, "the branch to %d enters %s: a construct is entered through its first statement", l, describe(to.stmt))
		}
	}
	if s.Kind != syntax.KindExit && s.Kind != syntax.KindCycle {
		return
	}
	loop := loopOf(n, s.Construct)
	switch {
	case loop == nil:
	case s.Kind == syntax.KindExit && loop.parent != nil && loop.parent.kind == pdoNode:
		ug.errorf(n.stmt.Pos, "EXIT from the parallel loop at line %d: its iterations are shared out, and the other processors run theirs", loop.stmt.Pos.Line)
	case from != nil && !encloses(from, loop):
		ug.errorf(n.stmt.Pos, "%s of the DO loop at line %d leaves %s: branch only inside it", s.Kind, loop.stmt.Pos.Line, describe(from.stmt))
	}
}

// encloses reports whether node c is n or one of its ancestors.
func encloses(c, n *node) bool {
	for ; n != nil; n = n.parent {
		if n == c {
			return true
		}
	}
	return false
}

// loopOf is the DO loop an EXIT or CYCLE at n refers to: the innermost
// one around n, or the one called name.
func loopOf(n *node, name string) *node {
	for p := n.parent; p != nil; p = p.parent {
		if p.kind == doNode && (name == "" || p.stmt.Construct == name) {
			return p
		}
	}
	return nil
}

// waitingAt is the scope the others wait in, in exclusive mode, where
// node t stands.
func (ug *unitGen) waitingAt(t *node) *scope {
	for x := t; x.parent != nil; x = x.parent {
		if sc := ug.scopes[x.part]; x.part != nil && sc != nil {
			return sc
		}
		if sc := ug.scopes[x.parent]; sc != nil {
			return sc
		}
	}
	return ug.top
}

// leaving returns, in exclusive mode, the scope the others must wait in
// after the branch at n when it is not the one they wait in now: the
// branch leaves a block they followed the master into. A CYCLE of such a
// loop also needs code: it goes to the end of the iteration.
func (ug *unitGen) leaving(n *node, cx ctx) (*scope, bool) {
	s := action(n.stmt)
	if !cx.exclusive() {
		return nil, false
	}
	switch s.Kind {
	case syntax.KindExit:
		if loop := loopOf(n, s.Construct); loop != nil && ug.waitingAt(loop) != cx.wait {
			return ug.waitingAt(loop), true
		}
	case syntax.KindCycle:
		if loop := loopOf(n, s.Construct); loop != nil && loop.dispatching {
			return ug.scopes[loop], true
		}
	default:
		for _, l := range s.Targets {
			if t := ug.labels[l]; t != nil && ug.waitingAt(t) != cx.wait {
				return ug.waitingAt(t), true
			}
		}
	}
	return nil, false
}

// leave returns the code of a branch at n that leaves the scope the others
// wait in (nil for any other statement): the master sends them to the
// dispatcher they wait in after it, then branches.
func (ug *unitGen) leave(n *node, cx ctx) []fstmt {
	to, ok := ug.leaving(n, cx)
	if !ok {
		return nil
	}
	s := action(n.stmt)
	text := simple{text: s.Text}
	if s.Kind == syntax.KindCycle {
		text = simple{text: "goto " + strconv.Itoa(ug.cycleLabel(loopOf(n, s.Construct)))}
		if to == cx.wait {
			return []fstmt{text}
		}
	}
	if s.Kind == syntax.KindArithmeticIf || s.Kind == syntax.KindIO || s.Kind == syntax.KindCall ||
		s.Kind == syntax.KindGoto && len(s.Targets) > 1 {
		ug.errorf(n.stmt.Pos, "this %s may branch out of a block the other processors follow the master through in exclusive mode; write the branch as IF (...) GO TO label", s.Kind)
		return nil
	}
	ug.use("svm_dispatch_send")
	code := ug.to(cx.wait, ug.wait(to))
	return append(cx.masterGuard(callf("svm_dispatch_send", strconv.Itoa(code))), text)
}
