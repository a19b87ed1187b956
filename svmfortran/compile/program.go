package compile

import (
	"maps"
	"slices"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// The program: what the compiler knows of the whole build. A subprogram
// that runs SVM code — one with directives, or one that calls such a
// subprogram — inherits the execution mode of each call (the paper's
// section 4): called in exclusive mode, its master runs it while the others
// wait in its dispatcher. The analysis finds those subprograms, and how the
// build calls each, so that the generator knows which calls re-activate the
// waiting processors and which warnings hold.

// program holds the units of the build.
type program struct {
	units   map[string]*unitGen // the subroutines and functions, by name
	modules map[string]*unitGen // the modules, by name
}

// importModules makes what the build's modules declare known in the units
// that use them (and in the modules that use them).
func (p *program) importModules(files []*fileGen) {
	for _, g := range files {
		for _, ug := range g.units {
			if ug.u.Kind == syntax.Module && p.modules[ug.u.Name] == nil {
				p.modules[ug.u.Name] = ug
			}
		}
	}
	done := map[*unitGen]bool{}
	var imp func(ug *unitGen)
	imp = func(ug *unitGen) {
		if done[ug] {
			return
		}
		done[ug] = true
		for _, name := range ug.usedModules {
			if m := p.modules[name]; m != nil {
				imp(m)
				ug.importModule(m.symbols)
			}
		}
	}
	for _, g := range files {
		for _, ug := range g.units {
			imp(ug)
		}
	}
}

// mode is the execution mode of a piece of code.
type mode int

const (
	replicated mode = iota // every processor of the active set runs it
	exclusive              // the master runs it; the others wait in a dispatcher
	dynamic                // a subprogram's own code: the mode of its call (svm_xmode)
	parallel               // a parallel loop's body: every processor runs its iterations
)

// callModes is the set of modes a subprogram is called in.
type callModes uint8

const (
	calledReplicated callModes = 1 << iota
	calledExclusive
)

// unitFacts are what the analysis learns about a unit.
type unitFacts struct {
	directives    bool // the unit has SVM directives
	intrinsicRefs bool // it refers to NUMPROC or MYPROCSET
	calls         []callSite
	// entryArgs are the positions of the dummy arguments its declarations
	// read (array bounds, arrangements and templates), entryCommons the
	// COMMON variables they read, by block: all processors evaluate them
	// when it starts.
	entryArgs    []int
	entryCommons map[string][]string
	// joinedArgs are the positions of the dummy arguments read by the
	// code the other processors join (parallel constructs, calls).
	joinedArgs []int
	// commonReads and commonSets are the private COMMON blocks the unit,
	// and the subprograms of the build it calls, read and assign;
	// moduleReads the variables they read that a USE brings in (names
	// they do not declare).
	commonReads, commonSets, moduleReads map[string]bool
	// svm: the unit runs SVM code and needs its mode (it has directives or
	// calls a unit that has).
	svm bool
	// modes: how the build calls it; both when no call in the build says
	// (the main program: replicated). replicatedAt is a call that makes it
	// replicated, zero when none or unknown.
	modes        callModes
	replicatedAt syntax.Pos
}

// callSite is a call, or a function reference, to a subprogram of the
// build.
type callSite struct {
	callee string
	pos    syntax.Pos
	mode   mode // the mode where it stands
}

// facts reads what the program's analysis needs from the unit.
func (ug *unitGen) facts() {
	for _, s := range ug.stmts {
		if s.Kind == syntax.KindDirective {
			ug.directives = true
		}
		for _, n := range stmtNames(s) {
			if svmIntrinsics[n.Name] && n.Call {
				ug.intrinsicRefs = true
			}
		}
	}
	if ug.intrinsicRefs {
		for name, pos := range ug.intrinsicDecls {
			ug.errorf(pos, "%s is SVM-Fortran's intrinsic (module svm): do not declare it", name)
		}
	}
	ug.walkModes(ug.tree, ug.topMode(), func(s *syntax.Stmt, m mode) {
		if m == exclusive || m == dynamic {
			ug.noteAssigned(s)
		}
		if c := action(s); c.Kind == syntax.KindCall && c.Call != nil {
			ug.calls = append(ug.calls, callSite{callee: c.Call.Name, pos: s.Pos, mode: m})
		}
		for _, n := range stmtNames(s) {
			if n.Call && ug.kind(n) == functionName {
				ug.calls = append(ug.calls, callSite{callee: n.Name, pos: n.Pos, mode: m})
			}
		}
	})
	ug.commonFacts()
	ug.argumentFacts()
}

// commonFacts finds the private COMMON blocks the unit's code reads and
// assigns.
func (ug *unitGen) commonFacts() {
	ug.commonReads, ug.commonSets, ug.moduleReads = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range ug.stmts[ug.firstExec:] {
		for _, n := range stmtNames(s) {
			if b := ug.commonOf[n.Name]; b != "" {
				ug.commonReads[b] = true
			}
			if ug.fromModule(n.Name) && ug.kind(n) == variableName {
				ug.moduleReads[n.Name] = true
			}
		}
		for _, name := range assignedBy(s) {
			if b := ug.commonOf[name]; b != "" {
				ug.commonSets[b] = true
			}
		}
	}
}

// argumentFacts finds the dummy arguments (and COMMON variables) the
// unit's declarations read, and the dummy arguments the code the others
// join reads: what a caller in exclusive mode must send.
func (ug *unitGen) argumentFacts() {
	walk(ug.tree, func(n *node) bool {
		if !ug.joined(n) {
			return true
		}
		statements([]*node{n}, func(s *syntax.Stmt) {
			for _, name := range stmtNames(s) {
				if k, ok := ug.dummies[name.Name]; ok && !slices.Contains(ug.joinedArgs, k) {
					ug.joinedArgs = append(ug.joinedArgs, k)
				}
			}
		})
		return false
	})
	ug.entryCommons = map[string][]string{}
	for _, n := range ug.entryNames() {
		if k, ok := ug.dummies[n.Name]; ok && !slices.Contains(ug.entryArgs, k) {
			ug.entryArgs = append(ug.entryArgs, k)
		}
		if b := ug.commonOf[n.Name]; b != "" && !slices.Contains(ug.entryCommons[b], n.Name) {
			ug.entryCommons[b] = append(ug.entryCommons[b], n.Name)
		}
	}
}

// joined reports whether the other processors may join the code of n:
// a parallel construct, a replicated region, a template operation, a call.
func (ug *unitGen) joined(n *node) bool {
	switch n.kind {
	case pdoNode, psectionNode, replicatedNode:
		return true
	case leafNode:
		s := action(n.stmt)
		return s.Kind == syntax.KindCall || s.Kind == syntax.KindDirective && s.Dir.Kind != syntax.DirShared
	}
	return false
}

// topMode is the mode of the unit's own code: replicated in the main
// program, the mode of the call in a subprogram.
func (ug *unitGen) topMode() mode {
	if ug.u.Kind == syntax.Subroutine || ug.u.Kind == syntax.Function {
		return dynamic
	}
	return replicated
}

// walkModes calls f for each statement of the nodes with the mode it runs
// in.
func (ug *unitGen) walkModes(nodes []*node, m mode, f func(*syntax.Stmt, mode)) {
	for _, n := range nodes {
		f(n.stmt, m)
		for k, p := range n.parts {
			if k > 0 || n.kind != ifNode {
				f(p.stmt, m)
			}
		}
		inner := m
		switch n.kind {
		case exclusiveNode:
			inner = exclusive
		case replicatedNode, psectionNode:
			inner = replicated
		case pdoNode:
			inner = parallel
		}
		ug.walkModes(n.children(), inner, f)
	}
}

// entryNames are the names the unit's declarations read when it starts:
// array bounds, the extents of its arrangements, the bounds of its
// templates, and its specification part's distributions.
func (ug *unitGen) entryNames() []syntax.Name {
	var out []syntax.Name
	bounds := func(dims []syntax.Bound) {
		for _, d := range dims {
			out = append(out, d.Lo.Names...)
			out = append(out, d.Hi.Names...)
		}
	}
	for _, s := range ug.stmts[:ug.firstExec] {
		for _, e := range s.Decl {
			bounds(e.Dims)
		}
		for _, b := range s.Common {
			for _, e := range b.Vars {
				bounds(e.Dims)
			}
		}
		if s.Kind == syntax.KindDirective {
			out = append(out, directiveNames(s.Dir)...)
		}
	}
	return slices.DeleteFunc(out, func(n syntax.Name) bool { return ug.kind(n) != variableName })
}

// analyse finds the units that run SVM code, the private COMMON blocks
// each reads and sets, and how the build calls each.
func (p *program) analyse(files []*fileGen) {
	var all []*unitGen
	for _, g := range files {
		for _, ug := range g.units {
			all = append(all, ug)
			if (ug.u.Kind == syntax.Subroutine || ug.u.Kind == syntax.Function) && p.units[ug.u.Name] == nil {
				p.units[ug.u.Name] = ug
			}
		}
	}
	p.propagate(all)
	p.callModes(all)
}

// propagate marks the units that run SVM code — those with directives
// (and a main program that refers to NUMPROC or MYPROCSET: it joins the
// job), and those that call one — and adds to each unit's COMMON blocks
// those of the units it calls.
func (p *program) propagate(all []*unitGen) {
	shared := map[string]bool{} // COMMON blocks a unit shares: they are no one's private data
	for _, ug := range all {
		for _, b := range ug.sharedCommons {
			shared[b] = true
		}
	}
	for _, ug := range all {
		ug.svm = ug.directives || ug.u.Kind == syntax.MainProgram && ug.intrinsicRefs
		maps.DeleteFunc(ug.commonReads, func(b string, _ bool) bool { return shared[b] })
		maps.DeleteFunc(ug.commonSets, func(b string, _ bool) bool { return shared[b] })
	}
	for changed := true; changed; {
		changed = false
		for _, ug := range all {
			for _, c := range ug.calls {
				callee := p.units[c.callee]
				if callee == nil {
					continue
				}
				changed = union(ug.commonReads, callee.commonReads) || changed
				changed = union(ug.commonSets, callee.commonSets) || changed
				changed = union(ug.moduleReads, callee.moduleReads) || changed
				if callee.svm && !ug.svm {
					ug.svm, changed = true, true
				}
			}
		}
	}
}

// callModes finds how the build calls each unit: a call in replicated code
// or a parallel loop calls in replicated mode, one in exclusive code in
// exclusive mode, one in a subprogram's own code in the modes that
// subprogram is called in. A subprogram the build does not call may be
// called either way.
func (p *program) callModes(all []*unitGen) {
	called := map[*unitGen]bool{}
	for _, ug := range all {
		for _, c := range ug.calls {
			if callee := p.units[c.callee]; callee != nil {
				called[callee] = true
			}
		}
	}
	for _, ug := range all {
		switch {
		case ug.u.Kind == syntax.MainProgram:
			ug.modes = calledReplicated
		case !called[ug]:
			ug.modes = calledReplicated | calledExclusive
		}
	}
	for changed := true; changed; {
		changed = false
		for _, ug := range all {
			for _, c := range ug.calls {
				callee := p.units[c.callee]
				if callee == nil || !called[callee] {
					continue
				}
				m := map[mode]callModes{replicated: calledReplicated, parallel: calledReplicated,
					exclusive: calledExclusive, dynamic: ug.modes}[c.mode]
				if m&calledReplicated != 0 && callee.replicatedAt == (syntax.Pos{}) {
					callee.replicatedAt = c.pos
				}
				if callee.modes|m != callee.modes {
					callee.modes |= m
					changed = true
				}
			}
		}
	}
}

// svmUnit returns the subprogram of the build called name if it runs SVM
// code, nil otherwise.
func (p *program) svmUnit(name string) *unitGen {
	if ug := p.units[name]; ug != nil && ug.svm {
		return ug
	}
	return nil
}

// union adds the keys of from to to, and reports whether it added any.
func union(to, from map[string]bool) bool {
	added := false
	for k := range from {
		if !to[k] {
			to[k], added = true, true
		}
	}
	return added
}

// callees are the subprograms of the build a statement calls: with CALL,
// or in a function reference.
func (ug *unitGen) callees(s *syntax.Stmt) []*unitGen {
	var out []*unitGen
	if c := action(s); c.Kind == syntax.KindCall && c.Call != nil {
		if callee := ug.prog.units[c.Call.Name]; callee != nil {
			out = append(out, callee)
		}
	}
	for _, n := range stmtNames(s) {
		if callee := ug.prog.units[n.Name]; callee != nil && n.Call && ug.kind(n) == functionName {
			out = append(out, callee)
		}
	}
	return out
}

// calleeModuleReads lists the variables a USE brings into the
// subprograms s calls that they read: where this unit assigns variables
// of those names in exclusive mode, they are the same module's.
func (ug *unitGen) calleeModuleReads(s *syntax.Stmt) []string {
	var out []string
	for _, callee := range ug.callees(s) {
		out = append(out, slices.Sorted(maps.Keys(callee.moduleReads))...)
	}
	return out
}

// calleeCommons lists the variables, as this unit declares them, of the
// private COMMON blocks the subprograms s calls read (or, with set,
// assign). It reports each block this unit does not declare with the
// callee.
func (ug *unitGen) calleeCommons(s *syntax.Stmt, set bool, missing func(block string, callee *unitGen)) []string {
	var out []string
	for _, callee := range ug.callees(s) {
		blocks := callee.commonReads
		if set {
			blocks = callee.commonSets
		}
		for _, b := range slices.Sorted(maps.Keys(blocks)) {
			vars, ok := ug.commonVars[b]
			if !ok {
				missing(b, callee)
				continue
			}
			for _, v := range vars {
				out = append(out, v.Name)
			}
		}
	}
	return out
}
