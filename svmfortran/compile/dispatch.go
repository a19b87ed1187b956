package compile

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// Exclusive mode, as the paper's section 4 and Figure 4 compile it: the
// master runs the code while the other processors of the set wait in a
// dispatcher (a loop over svm_dispatch_recv), and the master sends them a
// continuation code wherever they must join it — a parallel construct, a
// coordinated call, a template operation, a replicated region, the end of
// the exclusive code. The private values the construct reads and the
// master may have set ride on that dispatch.
//
// Every Fortran block that the others follow the master into (the unit's
// executable part, and in exclusive mode each DO loop, IF or SELECT CASE
// block that holds such a construct) is a dispatch scope with a dispatcher
// of its own at its end: labels may not be jumped to from outside their
// block, so the others enter the block with the master (the code generation
// is recursive), wait inside it, and leave it together with the master.

// Continuation codes every dispatcher knows; the others are given out by
// the unit, one per place the waiting processors may be sent.
const (
	codeEnd    = 1 // the master reached the end of the scope's exclusive code
	codeReturn = 2 // the master returns from the unit
	codeStop   = 3 // the master stops the program
	firstCode  = 4
)

// dispatch is a unit's dispatch state while its body is written.
type dispatch struct {
	nextCode int
	top      *scope
	// scopes maps what opens a scope the others wait in — a dispatching DO
	// loop, a branch of a dispatching IF or SELECT CASE (*part), an
	// exclusive region — to that scope.
	scopes map[any]*scope
	// cycles are the labels of the ends of the dispatching loops'
	// iterations.
	cycles map[*node]int
	// mentions counts the statements of the executable part that mention
	// each name.
	mentions     map[string]int
	sectionDepth int // nesting depth of the PSECTIONs being written
	// tail is generated code for the end of the unit's executable part,
	// after the top scope's dispatcher: where the others go when the master
	// returns with values or stops.
	tail []fstmt
	// stopLabel labels the others' STOP, when a master's STOP needs it.
	stopLabel int
}

// scope is a Fortran block whose processors may wait in its dispatcher.
type scope struct {
	waitLabel int // the dispatcher's label; 0 until something goes there
	endLabel  int // the label after the dispatcher
	targets   []target
	// ends, returns, stops: the master may send codeEnd, codeReturn or
	// codeStop while the others wait here.
	ends, returns, stops bool
}

// target is a continuation code of a scope and where it sends the others.
type target struct{ code, label int }

func (ug *unitGen) newScope() *scope { return &scope{} }

// wait is the label of sc's dispatcher.
func (ug *unitGen) wait(sc *scope) int {
	if sc.waitLabel == 0 {
		sc.waitLabel = ug.label()
	}
	return sc.waitLabel
}

// end is the label after sc's dispatcher.
func (ug *unitGen) end(sc *scope) int {
	if sc.endLabel == 0 {
		sc.endLabel = ug.label()
	}
	return sc.endLabel
}

// to gives out a new code that sends the processors waiting in sc to
// label.
func (ug *unitGen) to(sc *scope, label int) int {
	if ug.nextCode == 0 {
		ug.nextCode = firstCode
	}
	code := ug.nextCode
	ug.nextCode++
	sc.targets = append(sc.targets, target{code, label})
	return code
}

// closeScope writes sc's dispatcher, if anything goes there, and for the
// unit's scope the tail: the master jumps over them to the scope's end.
func (ug *unitGen) closeScope(e *emitter, sc *scope, pos syntax.Pos) {
	var tail []fstmt
	if sc == ug.top {
		tail = ug.tail
	}
	if sc.waitLabel == 0 && len(tail) == 0 {
		if sc.endLabel != 0 {
			e.gen(pos, continueAt(sc.endLabel))
		}
		return
	}
	end := ug.end(sc)
	out := []fstmt{gotoLabel(end)}
	if sc.waitLabel != 0 {
		ug.use("svm_dispatch_recv")
		var cases []caseArm
		arm := func(code, label int) caseArm { return caseArm{strconv.Itoa(code), []fstmt{gotoLabel(label)}} }
		if sc.ends {
			cases = append(cases, arm(codeEnd, end))
		}
		if sc.returns {
			cases = append(cases, arm(codeReturn, ug.end(ug.top)))
		}
		if sc.stops {
			cases = append(cases, arm(codeStop, ug.stop()))
		}
		for _, t := range sc.targets {
			cases = append(cases, arm(t.code, t.label))
		}
		out = append(out, selectBlock{label: sc.waitLabel, selector: "svm_dispatch_recv()", cases: cases,
			def: []fstmt{stmtf("error stop 'svm: unknown continuation code in exclusive mode'")}})
	}
	if sc == ug.top {
		out = append(out, ug.tail...) // the dispatcher may have added to it
	}
	e.gen(pos, append(out, continueAt(end))...)
}

// stop is the label of the others' STOP, written after the unit's
// dispatcher.
func (ug *unitGen) stop() int {
	if ug.stopLabel == 0 {
		ug.stopLabel = ug.label()
		ug.tail = append(ug.tail, simple{label: ug.stopLabel, text: "stop"})
	}
	return ug.stopLabel
}

// send is the master's dispatch of one of the codes every dispatcher may
// know (codeEnd, codeReturn, codeStop) to the others waiting in cx's scope,
// after its values.
func (ug *unitGen) send(cx ctx, code int, values []*sendVar) []fstmt {
	switch code {
	case codeEnd:
		cx.wait.ends = true
	case codeReturn:
		cx.wait.returns = true
	case codeStop:
		cx.wait.stops = true
	}
	ug.use("svm_dispatch_send")
	return cx.masterGuard(append(ug.puts(values), callf("svm_dispatch_send", strconv.Itoa(code)))...)
}

// ctx is where code is being generated: its mode, the scope whose
// dispatcher the other processors wait in while the master runs it (in
// exclusive and dynamic mode), and the scope of the Fortran block it is in,
// whose dispatcher an exclusive region in it uses.
type ctx struct {
	mode  mode
	wait  *scope
	block *scope
}

// waiting is the condition that holds on the processors that wait in the
// scope's dispatcher while the master runs this code.
func (cx ctx) waiting() string {
	switch cx.mode {
	case exclusive:
		return "myprocset() .ne. 0"
	case dynamic:
		return "svm_xmode .and. myprocset() .ne. 0"
	}
	return ""
}

// masterGuard wraps what the master sends in dynamic mode, where there are
// others to send to only when the unit runs in exclusive mode.
func (cx ctx) masterGuard(stmts ...fstmt) []fstmt {
	if cx.mode == dynamic && len(stmts) > 0 {
		return []fstmt{ifBlock{cond: "svm_xmode", then: stmts}}
	}
	return stmts
}

// exclusive reports whether the others may be waiting while this code runs.
func (cx ctx) exclusive() bool { return cx.mode == exclusive || cx.mode == dynamic }

// sendVar is a private variable whose master's value the others receive.
type sendVar struct {
	name        string
	allocatable bool
}

func (ug *unitGen) transfer(call string, v *sendVar) fstmt {
	ug.use(call, "svm_pointer", "c_size_t")
	s := callf(call, "svm_pointer(loc("+v.name+"))", ug.byteSize(v.name))
	if v.allocatable {
		return ifThen("allocated("+v.name+")", s)
	}
	return s
}

// puts are the master's svm_dispatch_put of values, gets the others'
// svm_dispatch_get.
func (ug *unitGen) puts(values []*sendVar) []fstmt {
	var out []fstmt
	for _, v := range values {
		out = append(out, ug.transfer("svm_dispatch_put", v))
	}
	return out
}

func (ug *unitGen) gets(values []*sendVar) []fstmt {
	var out []fstmt
	for _, v := range values {
		out = append(out, ug.transfer("svm_dispatch_get", v))
	}
	return out
}

// resume writes, in exclusive and dynamic mode, the master's dispatch that
// brings the waiting processors to the code that follows, with the values
// they need, and the label where they resume and take them; after returns
// what sends them back to their dispatcher when that code is done. label
// is the label of the user's statement the dispatch stands for; what is
// left of it goes on the first statement of the code that follows. In
// replicated and parallel mode resume writes nothing.
func (ug *unitGen) resume(e *emitter, pos syntax.Pos, cx ctx, label int, values []*sendVar) (int, []fstmt) {
	if !cx.exclusive() {
		return label, nil
	}
	ug.use("svm_dispatch_send", "myprocset")
	resume := ug.label()
	code := ug.to(cx.wait, resume)
	master := append(ug.puts(values), callf("svm_dispatch_send", strconv.Itoa(code)))
	out := cx.masterGuard(master...)
	out[0] = labelled(label, out[0])
	out = append(out, continueAt(resume))
	if len(values) > 0 {
		out = append(out, ifBlock{cond: cx.waiting(), then: ug.gets(values)})
	}
	e.gen(pos, out...)
	return 0, []fstmt{ifThen(cx.waiting(), gotoLabel(ug.wait(cx.wait)))}
}

// values returns the private variables among names whose master's values
// the others need at node at, each once, in order; what names the
// construct that reads them, for the error on a variable that cannot be
// sent. The variables of the DO loops around at that the others follow
// the master through are theirs already.
func (ug *unitGen) values(at *node, pos syntax.Pos, what string, names []string) []*sendVar {
	var out []*sendVar
	seen := map[string]bool{}
	for p := at.parent; p != nil; p = p.parent {
		if p.kind == doNode && p.dispatching {
			seen[p.stmt.Do.Var] = true
		}
	}
	for _, name := range names {
		if seen[name] || ug.sharedByName[name] != nil || !ug.mustSend(name) {
			continue
		}
		seen[name] = true
		if ok, why := ug.sendable(name); !ok {
			ug.errorf(pos, "%s reads %s, which the master may have set in exclusive mode, but the compiler cannot send its value to the other processors: %s", what, name, why)
			continue
		}
		out = append(out, &sendVar{name: name, allocatable: ug.allocatable[name]})
	}
	return out
}

// reads lists the variables the statements of nodes read (and may read
// before they assign), with the variables the statement functions they
// call read and the COMMON and module variables the subprograms they call
// read; the DO variables of their own loops are not among them.
func (ug *unitGen) reads(nodes []*node) []string {
	var out []string
	own := map[string]bool{}
	statements(nodes, func(s *syntax.Stmt) {
		if s.Kind == syntax.KindDo && s.Do != nil {
			own[s.Do.Var] = true
		}
	})
	statements(nodes, func(s *syntax.Stmt) {
		out = append(out, ug.readNames(readNames(s))...)
		// What the subprograms it calls read of the COMMON blocks it
		// declares; those it does not declare the master did not set.
		out = append(out, ug.calleeCommons(s, false, func(string, *unitGen) {})...)
		out = append(out, ug.calleeModuleReads(s)...)
	})
	return slices.DeleteFunc(out, func(n string) bool { return own[n] })
}

// readNames keeps the variables among names, and adds for each statement
// function called the variables its definition reads.
func (ug *unitGen) readNames(names []syntax.Name) []string {
	var out []string
	for _, n := range names {
		switch ug.kind(n) {
		case variableName:
			out = append(out, n.Name)
		case stmtFuncName:
			def := ug.stmtFuncs[n.Name]
			args := map[string]bool{}
			for _, a := range def.Target.Names[1:] {
				args[a.Name] = true
			}
			for _, m := range def.Value.Names {
				if !args[m.Name] && ug.kind(m) == variableName {
					out = append(out, m.Name)
				}
			}
		}
	}
	return out
}

// describe names a statement for messages: "the PDO at line 12".
func describe(s *syntax.Stmt) string {
	return fmt.Sprintf("the %s at line %d", stmtName(s), s.Pos.Line)
}
