package compile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// The executable part: statements pass through; directives become runtime
// calls; the DO nest after a PDO gets the schedule's bounds; exclusive code
// gets the dispatch code of the paper's Figure 4 (dispatch.go).

// body writes the executable part, then the exit code and the unit's END.
func (ug *unitGen) body(e *emitter) {
	ug.top, ug.scopes, ug.cycles = ug.newScope(), map[any]*scope{}, map[*node]int{}
	cx := ctx{mode: ug.topMode(), wait: ug.top, block: ug.top}
	ug.mentions = ug.countMentions(ug.tree)
	pos := ug.stmts[ug.exit].Pos
	if ug.firstExec < len(ug.stmts) {
		pos = ug.stmts[ug.firstExec].Pos
	}
	if cx.mode == dynamic {
		// Called in exclusive mode: the others wait for the master.
		ug.use("myprocset")
		e.gen(pos, ifThen(cx.waiting(), gotoLabel(ug.wait(ug.top))))
	}
	ug.nodes(e, ug.tree, cx)
	end := ug.stmts[ug.exit]
	ug.skip(e, end)
	// A branch to the END's label comes to the end of the unit's code.
	label := end.Label
	if cx.mode == dynamic {
		code := ug.send(cx, codeEnd, nil)
		code[0] = labelled(label, code[0])
		e.gen(end.Pos, code...)
		label = 0
	}
	if label != 0 {
		e.gen(end.Pos, continueAt(label))
	}
	ug.closeScope(e, ug.top, end.Pos)
	ug.unitEnd(e, end)
}

// unitEnd writes the exit code and the unit's END (or CONTAINS and what
// follows it, as written).
func (ug *unitGen) unitEnd(e *emitter, s *syntax.Stmt) {
	if ug.outline {
		// The end of svm_body; the unit's exit code follows its call.
		e.gen(s.Pos, simple{text: "end subroutine svm_body"})
	} else {
		e.gen(s.Pos, ug.exitCode()...)
	}
	e.gen(s.Pos, simple{text: strings.TrimSpace(s.Text)})
	for _, rest := range ug.stmts[ug.exit+1:] {
		ug.pass(e, rest)
	}
}

// nodes writes nodes in the context cx.
func (ug *unitGen) nodes(e *emitter, nodes []*node, cx ctx) {
	for _, n := range nodes {
		ug.node(e, n, cx)
	}
}

func (ug *unitGen) node(e *emitter, n *node, cx ctx) {
	switch n.kind {
	case doNode, ifNode, selectNode:
		ug.checkCalls(n.stmt, cx)
		for _, p := range n.parts[min(1, len(n.parts)):] {
			ug.checkCalls(p.stmt, cx)
		}
		ug.block(e, n, cx)
	case exclusiveNode:
		ug.exclusiveRegion(e, n, cx)
	case replicatedNode:
		ug.replicatedRegion(e, n, cx)
	case criticalNode:
		ug.critical(e, n, cx)
	case psectionNode:
		ug.psection(e, n, cx)
	case pdoNode:
		ug.pdo(e, n, cx)
	default:
		if n.stmt.Kind == syntax.KindDirective {
			ug.directive(e, n, cx)
		} else {
			ug.statement(e, n, cx)
		}
	}
}

// joins reports whether the waiting processors join a construct inside the
// nodes, so that in exclusive mode they follow the master into the blocks
// around it. In dynamic mode an exclusive region counts: where the unit
// runs in replicated mode, the others wait for its master in the block's
// dispatcher, and they must wait in the same one where it runs in
// exclusive mode.
func (ug *unitGen) joins(nodes []*node, m mode) bool {
	found := false
	walk(nodes, func(n *node) bool {
		switch {
		case found:
		case n.kind == pdoNode, n.kind == psectionNode, n.kind == replicatedNode, n.kind == exclusiveNode && m == dynamic:
			found = true
		case n.kind == leafNode && n.stmt.Kind == syntax.KindDirective:
			switch n.stmt.Dir.Kind {
			case syntax.DirBarrier, syntax.DirCreate, syntax.DirDestroy, syntax.DirUndef, syntax.DirDistribute, syntax.DirRedistribute:
				found = true
			}
		case n.kind == leafNode:
			found = ug.coordinated(n.stmt) != nil
		}
		return !found
	})
	return found
}

// coordinated returns the subprogram a CALL statement (or a logical IF's)
// calls, if it runs SVM code.
func (ug *unitGen) coordinated(s *syntax.Stmt) *unitGen {
	s = action(s)
	if s.Kind != syntax.KindCall || s.Call == nil {
		return nil
	}
	return ug.prog.svmUnit(s.Call.Name)
}

// block writes a DO loop, IF or SELECT CASE block. In exclusive mode, the
// others follow the master into a block that holds a construct they join.
func (ug *unitGen) block(e *emitter, n *node, cx ctx) {
	if cx.exclusive() && ug.joins(n.children(), cx.mode) {
		ug.dispatchingBlock(e, n, cx)
		return
	}
	inner := cx
	if cx.mode == replicated {
		// Everyone runs the block: an exclusive region inside it waits in
		// a dispatcher of its own.
		inner.block = ug.newScope()
	}
	if n.kind == doNode {
		// A DO loop ended by a labelled statement has no END DO to put the
		// dispatcher of an exclusive region in its body before: it becomes
		// a block DO.
		block := n.end == nil && cx.mode == replicated && hasRegion(n.body)
		if block {
			ug.skip(e, n.stmt)
			e.gen(n.stmt.Pos, doStatement(n.stmt, n.stmt.Label))
		} else {
			ug.pass(e, n.stmt)
		}
		ug.nodes(e, n.body, inner)
		if inner.block != cx.block {
			ug.closeScope(e, inner.block, n.stmt.Pos)
		}
		switch {
		case n.end != nil:
			ug.pass(e, n.end)
		case block:
			e.gen(n.stmt.Pos, endDo(n.stmt))
		}
		return
	}
	if n.kind == selectNode {
		ug.pass(e, n.stmt)
	}
	for _, p := range n.parts {
		if p.stmt.Kind == syntax.KindLogicalIf {
			// IF (c) stmt, written as a block.
			ug.skip(e, p.stmt)
			e.gen(p.stmt.Pos, simple{label: p.stmt.Label, text: "if (" + p.stmt.Cond.Text + ") then"})
		} else {
			ug.pass(e, p.stmt)
		}
		if cx.mode == replicated {
			inner.block = ug.newScope()
		}
		ug.nodes(e, p.body, inner)
		if inner.block != cx.block {
			ug.closeScope(e, inner.block, p.stmt.Pos)
		}
	}
	switch {
	case n.end != nil:
		ug.pass(e, n.end)
	case n.stmt.Kind == syntax.KindLogicalIf:
		e.gen(n.stmt.Pos, simple{text: "end if"})
	}
}

// dispatchingBlock writes a DO loop, IF or SELECT CASE block of exclusive
// code that holds a construct the others join: the master dispatches them
// to the block's statement with the values it reads, every processor runs
// it, and inside the others wait in the block's own dispatcher; at the end
// of the loop's body or the branch, the master lets them go to its end.
func (ug *unitGen) dispatchingBlock(e *emitter, n *node, cx ctx) {
	n.dispatching = true
	s := n.stmt
	ug.skip(e, s)
	var heads []syntax.Expr // the expressions every processor evaluates
	switch n.kind {
	case doNode:
		heads = []syntax.Expr{s.Do.Lo, s.Do.Hi, s.Do.Step, s.Do.Cond}
	case selectNode:
		heads = []syntax.Expr{s.Cond}
	default:
		for _, p := range n.parts {
			heads = append(heads, p.stmt.Cond)
		}
	}
	ug.checkHeads(n, heads)
	var names []syntax.Name
	for _, x := range heads {
		names = append(names, x.Names...)
	}
	label, after := ug.resume(e, s.Pos, cx, s.Label, ug.values(n, s.Pos, describe(s), ug.readNames(names)))
	if n.kind == doNode {
		ug.dispatchingDo(e, n, cx, label)
	} else {
		ug.dispatchingBranches(e, n, cx, label)
	}
	e.gen(s.Pos, after...)
}

// checkHeads reports function references in the expressions every
// processor evaluates for a dispatching block: only the master has what
// they read.
func (ug *unitGen) checkHeads(n *node, heads []syntax.Expr) {
	for _, x := range heads {
		for _, name := range x.Names {
			// (An array of a module the build does not compile looks like
			// a function.)
			if name.Call && ug.kind(name) == functionName && !ug.fromModule(name.Name) {
				ug.errorf(x.Pos, "the other processors follow the master into %s (it holds a construct they join) and evaluate its %s with the master's values, but it calls %s, which may read what they lack: assign the value to a variable before it", describe(n.stmt), headName(n), name.Name)
			}
		}
	}
}

func headName(n *node) string {
	switch n.kind {
	case doNode:
		return "bounds"
	case selectNode:
		return "selector"
	}
	return "conditions"
}

// dispatchingDo writes the loop of a dispatching block: a block DO whose
// body ends with the master's end of the iteration.
func (ug *unitGen) dispatchingDo(e *emitter, n *node, cx ctx, label int) {
	s := n.stmt
	inner := ctx{mode: cx.mode, wait: ug.newScope()}
	inner.block = inner.wait
	ug.scopes[n] = inner.wait
	d := s.Do
	e.gen(s.Pos, doStatement(s, label))
	e.gen(s.Pos, ifThen(inner.waiting(), gotoLabel(ug.wait(inner.wait))))
	ug.nodes(e, n.body, inner)
	// The end of an iteration: a CYCLE or a GO TO to the END DO comes here.
	cycle := ug.cycles[n]
	if n.end != nil {
		ug.skip(e, n.end)
		if n.end.Label != 0 {
			e.gen(n.end.Pos, continueAt(n.end.Label))
		}
	}
	var cond []*sendVar
	if d.While {
		cond = ug.values(n, s.Pos, describe(s), ug.readNames(d.Cond.Names))
	}
	master := ug.send(inner, codeEnd, cond)
	master[0] = labelled(cycle, master[0])
	e.gen(s.Pos, master...)
	ug.closeScope(e, inner.wait, s.Pos)
	if len(cond) > 0 {
		e.gen(s.Pos, ifBlock{cond: inner.waiting(), then: ug.gets(cond)})
	}
	e.gen(s.Pos, endDo(s))
}

// doStatement is DO statement s as a block DO, with label.
func doStatement(s *syntax.Stmt, label int) fstmt {
	d := s.Do
	control := ""
	switch {
	case d.While:
		control = " while (" + d.Cond.Text + ")"
	case d.Var != "":
		control = " " + d.Var + " = " + d.Lo.Text + ", " + d.Hi.Text
		if d.Step.Text != "" {
			control += ", " + d.Step.Text
		}
	}
	if s.Construct != "" {
		return simple{label: label, text: s.Construct + ": do" + control}
	}
	return simple{label: label, text: "do" + control}
}

// endDo ends the block DO of doStatement.
func endDo(s *syntax.Stmt) fstmt {
	return simple{text: strings.TrimSpace("end do " + s.Construct)}
}

// hasRegion reports whether an exclusive region stands directly in the
// block of nodes (not inside a block within it).
func hasRegion(nodes []*node) bool {
	found := false
	walk(nodes, func(n *node) bool {
		found = found || n.kind == exclusiveNode
		return !found && (n.kind == replicatedNode || n.kind == criticalNode)
	})
	return found
}

// cycleLabel is the label of the end of an iteration of the dispatching
// loop n.
func (ug *unitGen) cycleLabel(n *node) int {
	if ug.cycles[n] == 0 {
		ug.cycles[n] = ug.label()
	}
	return ug.cycles[n]
}

// dispatchingBranches writes the branches of a dispatching IF or SELECT
// CASE block: the others wait in the dispatcher of a branch that holds a
// construct they join, and outside the block otherwise.
func (ug *unitGen) dispatchingBranches(e *emitter, n *node, cx ctx, label int) {
	// The block's statement, without the label the dispatch took.
	switch {
	case n.stmt.Kind == syntax.KindLogicalIf:
		e.gen(n.stmt.Pos, simple{label: label, text: "if (" + n.stmt.Cond.Text + ") then"})
	default:
		e.gen(n.stmt.Pos, simple{label: label, text: strings.TrimSpace(n.stmt.Text)})
	}
	for _, p := range n.parts {
		s := p.stmt
		if s != n.stmt {
			ug.skip(e, s)
			e.gen(s.Pos, simple{label: s.Label, text: strings.TrimSpace(s.Text)})
		}
		if !ug.joins(p.body, cx.mode) {
			e.gen(s.Pos, ifThen(cx.waiting(), gotoLabel(ug.wait(cx.wait))))
			ug.nodes(e, p.body, cx)
			continue
		}
		inner := ctx{mode: cx.mode, wait: ug.newScope()}
		inner.block = inner.wait
		ug.scopes[p] = inner.wait
		e.gen(s.Pos, ifThen(inner.waiting(), gotoLabel(ug.wait(inner.wait))))
		ug.nodes(e, p.body, inner)
		e.gen(s.Pos, ug.send(inner, codeEnd, nil)...)
		ug.closeScope(e, inner.wait, s.Pos)
	}
	switch {
	case n.end != nil:
		ug.skip(e, n.end)
		e.gen(n.end.Pos, simple{label: n.end.Label, text: strings.TrimSpace(n.end.Text)})
	case n.stmt.Kind == syntax.KindLogicalIf:
		e.gen(n.stmt.Pos, simple{text: "end if"})
	}
}

// exclusiveRegion writes an exclusive region: the others wait in the
// dispatcher of the block around it while the master runs it, and resume
// at its end with the values the master set that code outside it reads.
func (ug *unitGen) exclusiveRegion(e *emitter, n *node, cx ctx) {
	s := n.stmt
	ug.skip(e, s)
	switch cx.mode {
	case exclusive:
		ug.errorf(s.Pos, "EXCLUSIVE_REGION inside an exclusive region: the master runs this code alone already; leave the directive out")
	case parallel:
		ug.errorf(s.Pos, "EXCLUSIVE_REGION inside a parallel loop: the processors run different iterations; use a CRITICAL section, or end the loop first")
	}
	if cx.mode == exclusive || cx.mode == parallel {
		ug.nodes(e, n.body, cx)
		if n.end != nil {
			ug.skip(e, n.end)
		}
		return
	}
	ug.use("myprocset")
	// In dynamic mode the unit may run in exclusive mode already: then the
	// region changes nothing.
	starts := "myprocset() .ne. 0"
	if cx.mode == dynamic {
		starts = ".not. svm_xmode .and. " + starts
	}
	e.gen(s.Pos, ifThen(starts, gotoLabel(ug.wait(cx.block))))
	inner := ctx{mode: exclusive, wait: cx.block, block: cx.block}
	ug.scopes[n] = cx.block
	ug.nodes(e, n.body, inner)
	end := s
	if n.end != nil {
		end = n.end
		ug.skip(e, end)
	}
	values := ug.values(n, end.Pos, "code after the EXCLUSIVE_REGION at line "+strconv.Itoa(s.Pos.Line), ug.liveOut(n))
	resume := ug.label()
	code := ug.to(cx.block, resume)
	ug.use("svm_dispatch_send")
	master := append(ug.puts(values), callf("svm_dispatch_send", strconv.Itoa(code)))
	if cx.mode == dynamic {
		master = []fstmt{ifBlock{cond: ".not. svm_xmode", then: master}}
	}
	e.gen(end.Pos, master...)
	e.gen(end.Pos, continueAt(resume))
	if len(values) > 0 {
		e.gen(end.Pos, ifBlock{cond: starts, then: ug.gets(values)})
	}
}

// liveOut lists the variables the master may set in the exclusive region n
// (outside the constructs in it that every processor runs) that code
// outside it reads: used elsewhere in the unit, or seen by the caller or
// later calls (dummy arguments, COMMON and module variables, SAVEd
// variables, the function's result).
func (ug *unitGen) liveOut(n *node) []string {
	inside := ug.countMentions(n.body)
	var out []string
	ug.walkModes(n.body, exclusive, func(s *syntax.Stmt, m mode) {
		if m != exclusive {
			return // everyone runs it
		}
		for _, name := range append(assignedBy(s), ug.calleeCommons(s, true, func(string, *unitGen) {})...) {
			_, dummy := ug.dummies[name]
			if ug.mentions[name] > inside[name] || dummy || ug.commonOf[name] != "" || ug.fromModule(name) ||
				ug.saved[name] || ug.initialised[name] || ug.u.Kind == syntax.Function && name == ug.u.Name {
				out = append(out, name)
			}
		}
	})
	return slices.DeleteFunc(out, func(name string) bool {
		return ug.kind(syntax.Name{Name: name}) != variableName
	})
}

// checkCommons reports, in exclusive code, a call of a subprogram that
// assigns a private COMMON block this unit does not declare: the master's
// values of it could not reach the other processors.
func (ug *unitGen) checkCommons(s *syntax.Stmt, cx ctx) {
	if cx.mode != exclusive && (cx.mode != dynamic || ug.modes&calledExclusive == 0) {
		return
	}
	ug.calleeCommons(s, true, func(block string, callee *unitGen) {
		ug.errorf(s.Pos, "%s assigns COMMON /%s/, and here only the master runs it; this unit does not declare /%s/, so the master's values cannot reach the other processors: declare COMMON /%s/ here", callee.u.Name, block, block, block)
	})
}

// countMentions counts, for each name, the statements of nodes that
// mention it.
func (ug *unitGen) countMentions(nodes []*node) map[string]int {
	count := map[string]int{}
	statements(nodes, func(s *syntax.Stmt) {
		seen := map[string]bool{}
		for _, n := range stmtNames(s) {
			seen[n.Name] = true
		}
		for _, name := range assignedBy(s) {
			seen[name] = true
		}
		for name := range seen {
			count[name]++
		}
	})
	return count
}

// replicatedRegion writes a replicated region: in exclusive mode the
// master dispatches the others to it, with the values it reads.
func (ug *unitGen) replicatedRegion(e *emitter, n *node, cx ctx) {
	s := n.stmt
	ug.skip(e, s)
	if cx.mode == parallel {
		ug.errorf(s.Pos, "REPLICATED_REGION inside a parallel loop: every processor runs the loop's body already; leave the directive out")
	}
	_, after := ug.resume(e, s.Pos, cx, 0, ug.values(n, s.Pos, describe(s), ug.reads(n.body)))
	inner := ctx{mode: replicated, block: cx.block}
	if cx.exclusive() {
		inner.block = cx.wait
	}
	if cx.mode == parallel {
		inner.mode = parallel
	}
	ug.nodes(e, n.body, inner)
	if n.end != nil {
		ug.skip(e, n.end)
	}
	e.gen(s.Pos, after...)
}

// critical writes a critical section around its statements.
func (ug *unitGen) critical(e *emitter, n *node, cx ctx) {
	s := n.stmt
	ug.skip(e, s)
	ug.use("svm_critical_begin", "svm_critical_end")
	e.gen(s.Pos, callf("svm_critical_begin", "'"+criticalName(s.Dir.Name)+"'"))
	ug.nodes(e, n.body, cx)
	if n.end != nil {
		ug.skip(e, n.end)
		e.gen(n.end.Pos, callf("svm_critical_end", "'"+criticalName(s.Dir.Name)+"'"))
	}
}

func criticalName(name string) string {
	if name == "" {
		return "SVM$UNNAMED"
	}
	return name
}

// directive writes a directive that stands alone.
func (ug *unitGen) directive(e *emitter, n *node, cx ctx) {
	s := n.stmt
	d := s.Dir
	ug.skip(e, s)
	switch d.Kind {
	case syntax.DirProcessors, syntax.DirTemplate, syntax.DirShared:
		// Reported by collect.
	case syntax.DirBarrier:
		if cx.mode == parallel {
			ug.errorf(s.Pos, "BARRIER inside a parallel loop: the processors run different iterations and would not meet")
			return
		}
		label, after := ug.resume(e, s.Pos, cx, 0, nil)
		ug.use("svm_pset_barrier")
		e.gen(s.Pos, labelled(label, callf("svm_pset_barrier")))
		e.gen(s.Pos, after...)
	case syntax.DirPageLock, syntax.DirPageUnlock:
		call := "svm_page_lock"
		if d.Kind == syntax.DirPageUnlock {
			call = "svm_page_unlock"
		}
		for _, x := range d.Vars {
			var v *sharedVar
			if len(x.Names) == 1 && x.Names[0].Off == 0 && len(x.Names[0].Name) == len(x.Text) {
				v = ug.sharedByName[x.Names[0].Name]
			}
			if v == nil {
				ug.errorf(x.Pos, "%s(%s): page locks take whole shared variables, and %s is not one (SHARED:: %s)", d.Kind, x.Text, x.Text, x.Text)
				continue
			}
			ug.use(call, "svm_pointer")
			e.gen(s.Pos, callf(call, "svm_pointer("+v.ptr+")", ug.byteSize(v.name)))
		}
	case syntax.DirCreate, syntax.DirDestroy, syntax.DirUndef, syntax.DirDistribute, syntax.DirRedistribute:
		if cx.mode == parallel {
			ug.errorf(s.Pos, "%s inside a parallel loop: every processor of the set must carry it out", d.Kind)
			return
		}
		label, after := ug.resume(e, s.Pos, cx, 0, ug.values(n, s.Pos, describe(s), ug.readNames(directiveNames(d))))
		code := ug.templateOp(s)
		if len(code) > 0 {
			code[0] = labelled(label, code[0])
		}
		e.gen(s.Pos, code...)
		e.gen(s.Pos, after...)
	default:
		ug.errorf(s.Pos, "directive %s is not supported here", d.Kind)
	}
}

// statement writes an ordinary executable statement.
func (ug *unitGen) statement(e *emitter, n *node, cx ctx) {
	s := n.stmt
	inner := action(s)
	if s.Kind == syntax.KindLogicalIf && ug.rewrites(n, cx) {
		// IF (c) stmt becomes IF (c) THEN, stmt, END IF: its statement is
		// checked as a statement of its own.
		ug.checkCalls(&syntax.Stmt{Kind: syntax.KindIf, Pos: s.Pos, Cond: s.Cond}, cx)
		ug.block(e, &node{kind: ifNode, stmt: s, parent: n.parent, part: n.part,
			parts: []*part{{stmt: s, body: []*node{{kind: leafNode, stmt: inner, parent: n.parent, part: n.part}}}}}, cx)
		return
	}
	ug.checkCalls(s, cx)
	ug.checkBranches(n, cx)
	switch inner.Kind {
	case syntax.KindIO:
		ug.checkIO(s, cx)
	case syntax.KindReturn:
		e.gen(s.Pos, ug.returnStmt(n, cx)...)
		ug.skip(e, s)
		return
	case syntax.KindStop:
		if cx.exclusive() {
			ug.skip(e, s)
			stop := ug.send(cx, codeStop, nil)
			stop[0] = labelled(s.Label, stop[0])
			e.gen(s.Pos, stop...)
			e.gen(s.Pos, simple{text: strings.TrimSpace(s.Text)})
			return
		}
	case syntax.KindCall:
		if callee := ug.coordinated(s); callee != nil && cx.mode != replicated {
			ug.call(e, n, callee, cx)
			return
		}
	}
	if leave := ug.leave(n, cx); leave != nil {
		ug.skip(e, s)
		leave[0] = labelled(s.Label, leave[0])
		e.gen(s.Pos, leave...)
		return
	}
	ug.pass(e, s)
}

// rewrites reports whether a logical IF's statement needs generated code
// around it, so that the IF becomes a block.
func (ug *unitGen) rewrites(n *node, cx ctx) bool {
	inner := n.stmt.Inner
	switch inner.Kind {
	case syntax.KindReturn:
		return cx.exclusive() || ug.hasExitCode() && !ug.outline
	case syntax.KindStop:
		return cx.exclusive()
	case syntax.KindCall:
		return cx.mode != replicated && ug.coordinated(inner) != nil
	}
	_, leaves := ug.leaving(n, cx)
	return leaves
}

// checkIO warns about I/O that every processor of the set executes.
func (ug *unitGen) checkIO(s *syntax.Stmt, cx ctx) {
	if ug.internalIO(action(s)) {
		return
	}
	switch {
	case cx.mode == replicated:
		ug.warnf(s.Pos, "I/O in replicated mode: every processor of the active set executes it (put it in an EXCLUSIVE_REGION)")
	case cx.mode == dynamic && ug.modes&calledReplicated != 0:
		how := "it has no caller in this build, so it may be called in replicated mode"
		if ug.replicatedAt != (syntax.Pos{}) {
			how = fmt.Sprintf("it is called in replicated mode at %s:%d", ug.replicatedAt.File, ug.replicatedAt.Line)
		}
		ug.warnf(s.Pos, "I/O in replicated mode: %s, where every processor of the active set executes it (put it in an EXCLUSIVE_REGION)", how)
	}
}

// internalIO reports whether an I/O statement reads or writes a character
// variable (an internal file), which is not I/O at all.
func (ug *unitGen) internalIO(s *syntax.Stmt) bool {
	unit, ok := s.IO.Spec("UNIT")
	return ok && len(unit.Names) > 0 && ug.characters[unit.Names[0].Name]
}

// checkCalls checks the calls of a statement: functions that run SVM code
// where the others cannot join them, subprograms that assign COMMON
// blocks in exclusive mode.
func (ug *unitGen) checkCalls(s *syntax.Stmt, cx ctx) {
	ug.checkFunctions(s, cx)
	ug.checkCommons(s, cx)
}

// checkFunctions reports references to functions that run SVM code where
// the others cannot join them.
func (ug *unitGen) checkFunctions(s *syntax.Stmt, cx ctx) {
	where := ""
	switch {
	case cx.mode == exclusive, cx.mode == dynamic && ug.modes&calledExclusive != 0:
		where = "in exclusive mode, where only the master evaluates expressions"
	case cx.mode == parallel:
		where = "inside a parallel loop, where each processor evaluates its own iterations"
	default:
		return
	}
	for _, n := range stmtNames(s) {
		if n.Call && ug.kind(n) == functionName && ug.prog.svmUnit(n.Name) != nil {
			ug.errorf(n.Pos, "function %s runs SVM code (parallel constructs), but it is referenced here %s and the other processors cannot join it: call it from replicated code, or make it a subroutine", n.Name, where)
		}
	}
}

// hasExitCode reports whether the unit must run code before it returns:
// free its shared variables, release its templates and arrangements.
func (ug *unitGen) hasExitCode() bool {
	return len(ug.templates)+len(ug.arrangements) > 0 ||
		slices.ContainsFunc(ug.shared, func(v *sharedVar) bool { return v.common == "" })
}

// returnStmt is the code of a RETURN: in exclusive mode the master first
// sends the others to the unit's end (with the values the caller may read
// that it set in an exclusive region), then the unit's exit code.
func (ug *unitGen) returnStmt(n *node, cx ctx) []fstmt {
	s := action(n.stmt)
	switch c := ug.construct(n); {
	case cx.mode == parallel:
		ug.errorf(s.Pos, "RETURN inside a parallel loop: the other processors run the loop's other iterations; leave the loop first")
	case c != nil && c.kind == criticalNode, c != nil && c.kind == psectionNode:
		ug.errorf(s.Pos, "RETURN inside %s: end it first", describe(c.stmt))
	}
	var out []fstmt
	if cx.exclusive() {
		var values []*sendVar
		if region := ug.region(n); region != nil {
			values = ug.values(n, s.Pos, "the caller", ug.liveOut(region))
		}
		if len(values) > 0 {
			// The others take the values on their way out.
			back := ug.label()
			ug.use("svm_dispatch_send")
			out = cx.masterGuard(append(ug.puts(values), callf("svm_dispatch_send", strconv.Itoa(ug.to(cx.wait, back))))...)
			ug.tail = append(append(append(ug.tail, continueAt(back)), ug.gets(values)...), gotoLabel(ug.end(ug.top)))
		} else {
			out = ug.send(cx, codeReturn, nil)
		}
	}
	if ug.hasExitCode() && !ug.outline {
		out = append(out, ug.exitCode()...)
	}
	out = append(out, simple{text: strings.TrimSpace(s.Text)})
	out[0] = labelled(n.stmt.Label, out[0])
	return out
}

// region is the exclusive region n is in, nil if none.
func (ug *unitGen) region(n *node) *node {
	for p := n.parent; p != nil; p = p.parent {
		if p.kind == exclusiveNode {
			return p
		}
	}
	return nil
}

// call writes a call, in exclusive or parallel mode, of a subprogram that
// runs SVM code. In exclusive mode the call is coordinated: the master
// dispatches the others to it, with the values its arguments need, and
// tells the subprogram that it runs in exclusive mode (its master runs it,
// the others wait in its dispatcher). Inside a parallel loop, each
// processor calls it in a processor set of its own (the paper's
// non-coordinated call).
func (ug *unitGen) call(e *emitter, n *node, callee *unitGen, cx ctx) {
	s := n.stmt
	ug.skip(e, s)
	text := simple{text: strings.TrimSpace(s.Text)}
	if cx.mode == parallel {
		ug.use("svm_pset_enter", "svm_pset_leave", "myprocset")
		e.gen(s.Pos,
			ifThen("svm_pset_enter([myprocset()], 1) .eq. 0", stmtf("error stop 'svm: a call in a parallel loop could not enter its processor set'")),
			text, callf("svm_pset_leave"))
		return
	}
	label, after := ug.resume(e, s.Pos, cx, s.Label, ug.values(n, s.Pos, "CALL "+s.Call.Name, ug.argumentReads(s, callee)))
	flag := ".true."
	if cx.mode == dynamic {
		flag = "svm_xmode"
	}
	ug.variable("svm_xcall", "logical svm_xcall")
	e.gen(s.Pos, labelled(label, assign("svm_xcall", flag)), text)
	e.gen(s.Pos, after...)
}

// argumentReads lists the variables the others need to make a call with
// the master's arguments: those in the arguments' subscripts and
// expressions, the arguments themselves where the callee's declarations
// read them (array bounds) or the code the others join in it reads them
// (the callee sends its scalar arguments itself, but an array argument's
// size only the caller may know), and the COMMON variables the callee's
// declarations read.
func (ug *unitGen) argumentReads(s *syntax.Stmt, callee *unitGen) []string {
	var names []syntax.Name
	for k, a := range s.Call.Args {
		if len(a.Names) == 0 {
			continue
		}
		first := a.Names[0]
		designator := first.Off == 0 && ug.kind(first) == variableName
		read := slices.Contains(callee.entryArgs, k) || ug.dims[first.Name] != nil && slices.Contains(callee.joinedArgs, k)
		if !designator || read {
			names = append(names, a.Names...)
		} else {
			names = append(names, a.Names[1:]...)
		}
	}
	out := ug.readNames(names)
	for block, vars := range callee.entryCommons {
		mine, ok := ug.commonVars[block]
		if !ok {
			ug.errorf(s.Pos, "CALL %s in exclusive mode: %s's declarations read %s of COMMON /%s/, which this unit does not declare, so the master's values cannot reach the others: declare COMMON /%s/ here", s.Call.Name, s.Call.Name, strings.Join(vars, ", "), block, block)
			continue
		}
		for _, v := range mine {
			out = append(out, v.Name)
		}
	}
	return out
}

// construct is the innermost SVM construct n is in (the section, for a
// parallel section), nil if none.
func (ug *unitGen) construct(n *node) *node {
	for p := n; p.parent != nil; p = p.parent {
		switch p.parent.kind {
		case exclusiveNode, replicatedNode, criticalNode, pdoNode, psectionNode:
			return p.parent
		}
	}
	return nil
}
