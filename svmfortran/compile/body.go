package compile

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// The executable part: statements pass through; directives become runtime
// calls; the DO nest after a PDO gets the schedule's bounds; exclusive
// regions get the dispatch code of the paper's Figure 4.

// construct is an open directive construct, closed by its END directive.
type construct struct {
	kind syntax.DirKind
	pos  syntax.Pos
	// after runs when the construct closes (a non-master's way back to its
	// exclusive region's dispatcher, for one).
	after func(e *emitter)
	// sections: the construct's section count, the next SECTION's number,
	// its selector variable and the block depth at PSECTION.
	section   int
	selector  string
	depth     int
	savedExcl *exclusiveRegion
	name      string // CRITICAL's name
}

func (ug *unitGen) body(e *emitter) {
	var open []*construct
	closers := map[int][]func(*emitter){} // run after the statement at the index
	doEnds := map[int]int{}               // how many DOs end at an index
	for _, j := range ug.doEnd {
		doEnds[j]++
	}
	for i := ug.firstExec; i < len(ug.stmts); i++ {
		s := ug.stmts[i]
		if i == ug.exit {
			ug.unitEnd(e, i)
			break
		}
		if s.Kind == syntax.KindDirective {
			i = ug.directive(e, i, &open, closers)
		} else {
			ug.statement(e, s)
		}
		if s.Kind == syntax.KindIf || (s.Kind == syntax.KindDo && s.Do != nil) {
			ug.blockDepth++
		}
		if s.Kind == syntax.KindEndIf {
			ug.blockDepth--
		}
		ug.blockDepth -= doEnds[i]
		for _, c := range closers[i] {
			c(e)
		}
	}
	for _, c := range open {
		ug.errorf(c.pos, "%s is not closed (%s_END missing)", dirName(c.kind), dirName(c.kind))
	}
}

// unitEnd writes the exit code and the unit's END (or CONTAINS and what
// follows it, as written).
func (ug *unitGen) unitEnd(e *emitter, i int) {
	s := ug.stmts[i]
	ug.skip(e, s)
	if ug.outline {
		// The end of svm_body; the unit's exit code follows its call.
		e.stmt(s.Pos, s.Label, "end subroutine svm_body")
		e.stmt(s.Pos, 0, strings.TrimSpace(s.Text))
		for _, rest := range ug.stmts[i+1:] {
			ug.pass(e, rest)
		}
		return
	}
	label := ug.exitCode(e, s.Pos, s.Label)
	e.stmt(s.Pos, label, strings.TrimSpace(s.Text))
	for _, rest := range ug.stmts[i+1:] {
		ug.pass(e, rest)
	}
}

// statement writes an ordinary executable statement.
func (ug *unitGen) statement(e *emitter, s *syntax.Stmt) {
	if mentionsIntrinsic(s.Text) {
		ug.use("numproc", "myprocset")
	}
	inner := s
	if s.Kind == syntax.KindLogicalIf && s.Inner != nil {
		inner = s.Inner
	}
	switch {
	case inner.Kind == syntax.KindIO && ug.excl == nil && !ug.pdoBody && !ug.internalIO(inner.Text):
		ug.warnf(s.Pos, "I/O in replicated mode: every processor of the active set executes it (put it in an EXCLUSIVE_REGION)")
	case inner.Kind == syntax.KindReturn && ug.excl != nil:
		ug.errorf(s.Pos, "RETURN inside an exclusive region: the other processors wait in the region; end the region first")
	case inner.Kind == syntax.KindReturn && ug.pdoBody:
		ug.errorf(s.Pos, "RETURN inside a parallel loop")
	case inner.Kind == syntax.KindReturn && ug.hasExitCode() && !ug.outline:
		ug.returnWithFrees(e, s)
		return
	case s.Kind == syntax.KindCall && s.Call != nil && ug.excl != nil && ug.subprograms[s.Call.Name]:
		// A coordinated call (Figure 4): the waiting processors join it.
		label, after := ug.reactivate(e, s.Pos, s.Label)
		ug.skip(e, s)
		e.stmt(s.Pos, label, s.Text)
		after(e)
		return
	}
	ug.pass(e, s)
}

// internalIO reports whether an I/O statement reads or writes a character
// variable (an internal file), which is not I/O at all.
func (ug *unitGen) internalIO(text string) bool {
	ts := tokens(text)
	for i, t := range ts {
		if t.text == "(" {
			for _, u := range ts[i+1:] {
				if strings.TrimSpace(u.text) == "" {
					continue
				}
				if u.ident && strings.EqualFold(u.text, "UNIT") {
					continue
				}
				if u.text == "=" {
					continue
				}
				return u.ident && ug.characters[strings.ToUpper(u.text)]
			}
		}
	}
	return false
}

// hasExitCode reports whether the unit must run code before it returns:
// free its shared variables, release its templates and arrangements.
func (ug *unitGen) hasExitCode() bool {
	return len(ug.templates)+len(ug.arrangements) > 0 ||
		slices.ContainsFunc(ug.shared, func(v *sharedVar) bool { return v.common == "" })
}

// returnWithFrees frees the unit's shared variables before a RETURN (or
// an IF (...) RETURN).
func (ug *unitGen) returnWithFrees(e *emitter, s *syntax.Stmt) {
	ug.skip(e, s)
	if s.Kind == syntax.KindLogicalIf {
		cond, ok := ifCondition(s.Text)
		if !ok {
			ug.errorf(s.Pos, "cannot read the condition of this IF")
			return
		}
		e.stmt(s.Pos, s.Label, "if "+cond+" then")
		ug.exitCode(e, s.Pos, 0)
		e.stmt(s.Pos, 0, strings.TrimSpace(s.Inner.Text))
		e.stmt(s.Pos, 0, "end if")
		return
	}
	label := ug.exitCode(e, s.Pos, s.Label)
	e.stmt(s.Pos, label, strings.TrimSpace(s.Text))
}

// ifCondition returns the parenthesised condition of a logical IF.
func ifCondition(text string) (string, bool) {
	start := strings.Index(text, "(")
	if start < 0 {
		return "", false
	}
	depth, n := 0, start
	for _, t := range tokens(text[start:]) {
		n += len(t.text)
		switch t.text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return text[start:n], true
			}
		}
	}
	return "", false
}

// reactivate writes, inside an exclusive region, the master's dispatch of
// a new continuation code and the label where the others resume; it
// returns the label left for the construct's first statement and what
// sends the others back to the dispatcher afterwards. Outside a region it
// writes nothing.
func (ug *unitGen) reactivate(e *emitter, pos syntax.Pos, label int) (int, func(*emitter)) {
	x := ug.excl
	if x == nil {
		return label, func(*emitter) {}
	}
	if ug.blockDepth != x.depth {
		ug.errorf(pos, "inside an exclusive region, a construct the other processors join must not be inside a DO loop or IF block of the region (they wait at its top level)")
	}
	code := len(x.targets) + 2
	target := ug.label()
	x.targets = append(x.targets, target)
	ug.use("svm_dispatch_send", "myprocset")
	e.stmt(pos, label, fmt.Sprintf("call svm_dispatch_send(%d)", code))
	e.stmt(pos, target, "continue")
	return 0, func(e *emitter) {
		e.stmt(pos, 0, fmt.Sprintf("if (myprocset() .ne. 0) goto %d", x.dispatcher))
	}
}

// directive translates the directive at index i; it returns the index of
// the last statement it consumed.
func (ug *unitGen) directive(e *emitter, i int, open *[]*construct, closers map[int][]func(*emitter)) int {
	s := ug.stmts[i]
	d := s.Dir
	ug.skip(e, s)
	top := func(kind syntax.DirKind) *construct {
		if n := len(*open); n > 0 && (*open)[n-1].kind == kind {
			return (*open)[n-1]
		}
		return nil
	}
	pop := func() { *open = (*open)[:len(*open)-1] }
	switch d.Kind {
	case syntax.DirProcessors, syntax.DirTemplate, syntax.DirShared:
		// Reported by collect.
	case syntax.DirPDO:
		return ug.pdo(e, i, closers)
	case syntax.DirExclusiveRegion:
		switch {
		case ug.excl != nil:
			ug.errorf(s.Pos, "EXCLUSIVE_REGION inside an exclusive region")
		case ug.pdoBody:
			ug.errorf(s.Pos, "EXCLUSIVE_REGION inside a parallel loop")
		default:
			ug.excl = &exclusiveRegion{pos: s.Pos, dispatcher: ug.label(), end: ug.label(), depth: ug.blockDepth}
			ug.use("myprocset")
			e.stmt(s.Pos, 0, fmt.Sprintf("if (myprocset() .ne. 0) goto %d", ug.excl.dispatcher))
			*open = append(*open, &construct{kind: d.Kind, pos: s.Pos})
		}
	case syntax.DirExclusiveRegionEnd:
		if top(syntax.DirExclusiveRegion) == nil || ug.excl == nil {
			ug.errorf(s.Pos, "EXCLUSIVE_REGION_END without an open EXCLUSIVE_REGION")
			break
		}
		pop()
		x := ug.excl
		if ug.blockDepth != x.depth {
			ug.errorf(s.Pos, "EXCLUSIVE_REGION_END inside a DO loop or IF block that began inside the region")
		}
		ug.use("svm_dispatch_send", "svm_dispatch_recv")
		e.stmt(s.Pos, 0, "call svm_dispatch_send(1)")
		e.stmt(s.Pos, 0, fmt.Sprintf("goto %d", x.end))
		e.stmt(s.Pos, x.dispatcher, "select case (svm_dispatch_recv())")
		e.stmt(s.Pos, 0, "case (1)")
		e.stmt(s.Pos, 0, fmt.Sprintf("  goto %d", x.end))
		for k, target := range x.targets {
			e.stmt(s.Pos, 0, fmt.Sprintf("case (%d)", k+2))
			e.stmt(s.Pos, 0, fmt.Sprintf("  goto %d", target))
		}
		e.stmt(s.Pos, 0, "case default")
		e.stmt(s.Pos, 0, "  error stop 'svm: unknown continuation code in an exclusive region'")
		e.stmt(s.Pos, 0, "end select")
		e.stmt(s.Pos, x.end, "continue")
		ug.excl = nil
	case syntax.DirReplicatedRegion:
		_, after := ug.reactivate(e, s.Pos, 0)
		*open = append(*open, &construct{kind: d.Kind, pos: s.Pos, after: after, savedExcl: ug.excl})
		ug.excl = nil
	case syntax.DirReplicatedRegionEnd:
		c := top(syntax.DirReplicatedRegion)
		if c == nil {
			ug.errorf(s.Pos, "REPLICATED_REGION_END without an open REPLICATED_REGION")
			break
		}
		pop()
		ug.excl = c.savedExcl
		c.after(e)
	case syntax.DirPSection:
		ug.psection(e, i, open)
	case syntax.DirSection:
		c := top(syntax.DirPSection)
		if c == nil {
			ug.errorf(s.Pos, "SECTION outside a PSECTION construct")
			break
		}
		if ug.blockDepth != c.depth {
			ug.errorf(s.Pos, "SECTION inside a DO loop or IF block that began in the previous section")
		}
		c.section++
		if c.section == 1 {
			e.stmt(s.Pos, 0, fmt.Sprintf("select case (%s)", c.selector))
		}
		e.stmt(s.Pos, 0, fmt.Sprintf("case (%d)", c.section))
	case syntax.DirPSectionEnd:
		c := top(syntax.DirPSection)
		if c == nil {
			ug.errorf(s.Pos, "PSECTION_END without an open PSECTION")
			break
		}
		pop()
		if c.section > 0 {
			e.stmt(s.Pos, 0, "end select")
		}
		e.stmt(s.Pos, 0, "end do")
		ug.sections--
		ug.excl = c.savedExcl
		c.after(e)
	case syntax.DirBarrier:
		if ug.pdoBody {
			ug.errorf(s.Pos, "BARRIER inside a parallel loop: the processors run different iterations and would not meet")
			break
		}
		label, after := ug.reactivate(e, s.Pos, 0)
		ug.use("svm_pset_barrier")
		e.stmt(s.Pos, label, "call svm_pset_barrier()")
		after(e)
	case syntax.DirCritical:
		ug.use("svm_critical_begin")
		e.stmt(s.Pos, 0, fmt.Sprintf("call svm_critical_begin('%s')", criticalName(d.Name)))
		*open = append(*open, &construct{kind: d.Kind, pos: s.Pos, name: d.Name})
	case syntax.DirCriticalEnd:
		c := top(syntax.DirCritical)
		if c == nil {
			ug.errorf(s.Pos, "CRITICAL_END without an open CRITICAL section")
			break
		}
		if d.Name != "" && d.Name != c.name {
			ug.errorf(s.Pos, "CRITICAL_END %s ends critical section %s", d.Name, criticalNameOrUnnamed(c.name))
		}
		pop()
		ug.use("svm_critical_end")
		e.stmt(s.Pos, 0, fmt.Sprintf("call svm_critical_end('%s')", criticalName(c.name)))
	case syntax.DirPageLock, syntax.DirPageUnlock:
		call := "svm_page_lock"
		if d.Kind == syntax.DirPageUnlock {
			call = "svm_page_unlock"
		}
		for _, x := range d.Vars {
			v := ug.sharedByName[strings.ToUpper(x.Text)]
			if v == nil {
				ug.errorf(x.Pos, "%s(%s): page locks take whole shared variables, and %s is not one (SHARED:: %s)", dirName(d.Kind), x.Text, x.Text, x.Text)
				continue
			}
			ug.use(call, "svm_pointer")
			e.stmt(s.Pos, 0, fmt.Sprintf("call %s(svm_pointer(%s), %s)", call, v.ptr, ug.byteSize(v)))
		}
	case syntax.DirCreate, syntax.DirDestroy, syntax.DirUndef, syntax.DirDistribute, syntax.DirRedistribute:
		if ug.pdoBody {
			ug.errorf(s.Pos, "%s inside a parallel loop: every processor of the set must carry it out", dirName(d.Kind))
			break
		}
		label, after := ug.reactivate(e, s.Pos, 0)
		ug.templateOp(e, s, label)
		after(e)
	default:
		ug.errorf(s.Pos, "directive %s is not supported here", dirName(d.Kind))
	}
	return i
}

func criticalName(name string) string {
	if name == "" {
		return "SVM$UNNAMED"
	}
	return name
}

func criticalNameOrUnnamed(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return name
}

// templateOp writes CREATE, DESTROY, UNDEF and (RE)DISTRIBUTE.
func (ug *unitGen) templateOp(e *emitter, s *syntax.Stmt, label int) {
	d := s.Dir
	switch d.Kind {
	case syntax.DirCreate:
		for _, x := range d.Decls {
			t := ug.template(x.Pos, x.Name)
			if t == nil {
				continue
			}
			if len(x.Dims) != len(t.decl.Dims) {
				ug.errorf(x.Pos, "CREATE %s with %d bounds; template %s has rank %d", x.Name, len(x.Dims), x.Name, len(t.decl.Dims))
				continue
			}
			ug.use("svm_template_create")
			e.stmt(s.Pos, label, fmt.Sprintf("call svm_template_create(%s, %s)", t.handle, boundsArrays(x.Dims)))
			label = 0
		}
	case syntax.DirDestroy, syntax.DirUndef:
		call := map[syntax.DirKind]string{syntax.DirDestroy: "svm_template_destroy", syntax.DirUndef: "svm_template_undef"}[d.Kind]
		for _, name := range d.Names {
			t := ug.template(s.Pos, name)
			if t == nil {
				continue
			}
			t.distributed = false
			ug.use(call)
			e.stmt(s.Pos, label, fmt.Sprintf("call %s(%s)", call, t.handle))
			label = 0
		}
	default:
		ug.distribute(e, s, label)
	}
}

func (ug *unitGen) template(pos syntax.Pos, name string) *template {
	t := ug.templates[name]
	if t == nil {
		if ug.arrangements[name] != nil {
			ug.errorf(pos, "%s is a processor arrangement, not a template", name)
		} else {
			ug.errorf(pos, "template %s is not declared in this unit (TEMPLATE:: %s(...))", name, name)
		}
	}
	return t
}

func (ug *unitGen) arrangement(pos syntax.Pos, name string) *arrangement {
	a := ug.arrangements[name]
	if a == nil {
		if ug.templates[name] != nil {
			ug.errorf(pos, "%s is a template, not a processor arrangement", name)
		} else {
			ug.errorf(pos, "processor arrangement %s is not declared in this unit (PROCESSORS:: %s(...))", name, name)
		}
	}
	return a
}

// distribute writes a DISTRIBUTE or REDISTRIBUTE of each target template.
func (ug *unitGen) distribute(e *emitter, s *syntax.Stmt, label int) {
	d := s.Dir.Dist
	if d == nil {
		return
	}
	redistribute := s.Dir.Kind == syntax.DirRedistribute
	for _, name := range d.Targets {
		t := ug.template(s.Pos, name)
		if t == nil {
			continue
		}
		var ok bool
		switch {
		case d.Var != "" && d.Home != "":
			ok = ug.linked(e, s, t, label)
		case d.Var != "":
			ok = ug.indirect(e, s, t, label)
		default:
			ok = ug.standard(e, s, t, label, redistribute)
		}
		if ok {
			t.distributed = true
			label = 0
		}
	}
}

func (ug *unitGen) standard(e *emitter, s *syntax.Stmt, t *template, label int, redistribute bool) bool {
	d := s.Dir.Dist
	a := ug.arrangement(s.Pos, d.Onto)
	if a == nil {
		return false
	}
	if len(d.Formats) != len(t.decl.Dims) {
		ug.errorf(s.Pos, "template %s of rank %d needs %d distribution formats, not %d", t.name, len(t.decl.Dims), len(t.decl.Dims), len(d.Formats))
		return false
	}
	var fmts, segs, sizes []string
	distributed := 0
	for _, f := range d.Formats {
		seg := "0"
		switch f.Format {
		case syntax.DistBlock:
			fmts = append(fmts, "svm_block")
		case syntax.DistCyclic:
			fmts = append(fmts, "svm_cyclic")
			if f.Arg.Text != "" {
				seg = "(" + f.Arg.Text + ")"
			}
		case syntax.DistGeneralBlock:
			fmts = append(fmts, "svm_general_block")
			if f.Arg.Text == "" {
				ug.errorf(s.Pos, "GENERAL_BLOCK needs its block sizes: GENERAL_BLOCK(SIZES)")
				return false
			}
			sizes = append(sizes, f.Arg.Text)
		case syntax.DistCollapsed:
			fmts = append(fmts, "svm_collapsed")
		default:
			ug.errorf(s.Pos, "an indirect or linked distribution has the form DISTRIBUTE (I) ONTO ...")
			return false
		}
		if f.Format != syntax.DistCollapsed {
			distributed++
		}
		segs = append(segs, seg)
	}
	if distributed != len(a.decl.Dims) {
		ug.errorf(s.Pos, "mismatched ranks: template %s has %d distributed dimensions, arrangement %s has rank %d", t.name, distributed, a.name, len(a.decl.Dims))
		return false
	}
	call := "svm_distribute"
	if redistribute {
		call = "svm_redistribute"
	}
	args := fmt.Sprintf("%s, %s, [%s], [%s]", t.handle, a.handle, strings.Join(fmts, ", "), strings.Join(segs, ", "))
	if len(sizes) > 0 {
		args += ", [" + strings.Join(sizes, ", ") + "]"
	}
	ug.use(call)
	for _, f := range fmts {
		ug.use(f)
	}
	e.stmt(s.Pos, label, fmt.Sprintf("call %s(%s)", call, args))
	return true
}

// elementLoop writes a loop of the generated index svm_i over rank-1
// template t's elements, with body lines; it returns false (after an
// error) when t is not rank 1.
func (ug *unitGen) elementLoop(e *emitter, s *syntax.Stmt, t *template, label int, body ...string) bool {
	if len(t.decl.Dims) != 1 {
		ug.errorf(s.Pos, "indirect and linked distributions are for rank-1 templates; %s has rank %d", t.name, len(t.decl.Dims))
		return false
	}
	ug.use("svm_template_lbound", "svm_template_ubound")
	i := ug.intVar("svm_i")
	e.stmt(s.Pos, label, fmt.Sprintf("do %s = svm_template_lbound(%s, 1), svm_template_ubound(%s, 1)", i, t.handle, t.handle))
	for _, l := range body {
		e.stmt(s.Pos, 0, "  "+l)
	}
	e.stmt(s.Pos, 0, "end do")
	return true
}

func (ug *unitGen) indirect(e *emitter, s *syntax.Stmt, t *template, label int) bool {
	d := s.Dir.Dist
	a := ug.arrangement(s.Pos, d.Onto)
	if a == nil {
		return false
	}
	if len(d.OntoArgs) != 1 || len(a.decl.Dims) != 1 {
		ug.errorf(s.Pos, "an indirect distribution maps onto a rank-1 arrangement: DISTRIBUTE (I) ONTO P(MAP(I))")
		return false
	}
	m := ug.variable("svm_map", "integer, allocatable :: svm_map(:)")
	e.stmt(s.Pos, label, fmt.Sprintf("allocate(%s(svm_template_lbound(%s, 1):svm_template_ubound(%s, 1)))", m, t.handle, t.handle))
	expr := substitute(d.OntoArgs[0].Text, d.Var, "svm_i")
	if !ug.elementLoop(e, s, t, 0, fmt.Sprintf("%s(svm_i) = %s", m, expr)) {
		return false
	}
	ug.use("svm_distribute_indirect")
	e.stmt(s.Pos, 0, fmt.Sprintf("call svm_distribute_indirect(%s, %s, %s)", t.handle, a.handle, m))
	e.stmt(s.Pos, 0, fmt.Sprintf("deallocate(%s)", m))
	return true
}

func (ug *unitGen) linked(e *emitter, s *syntax.Stmt, t *template, label int) bool {
	d := s.Dir.Dist
	home := ug.template(s.Pos, d.Home)
	if home == nil {
		return false
	}
	if len(d.HomeArgs) != len(home.decl.Dims) {
		ug.errorf(s.Pos, "HOME(%s(...)) has %d subscripts; template %s has rank %d", d.Home, len(d.HomeArgs), d.Home, len(home.decl.Dims))
		return false
	}
	if !home.distributed {
		ug.errorf(s.Pos, "linked to template %s, which is not distributed before this point", d.Home)
		return false
	}
	m := ug.variable("svm_map", "integer, allocatable :: svm_map(:)")
	r := len(home.decl.Dims)
	e.stmt(s.Pos, label, fmt.Sprintf("allocate(%s(%d*(svm_template_ubound(%s, 1) - svm_template_lbound(%s, 1) + 1)))", m, r, t.handle, t.handle))
	var body []string
	for k, x := range d.HomeArgs {
		body = append(body, fmt.Sprintf("%s(%d*(svm_i - svm_template_lbound(%s, 1)) + %d) = %s", m, r, t.handle, k+1, substitute(x.Text, d.Var, "svm_i")))
	}
	if !ug.elementLoop(e, s, t, 0, body...) {
		return false
	}
	ug.use("svm_distribute_linked")
	e.stmt(s.Pos, 0, fmt.Sprintf("call svm_distribute_linked(%s, %s, %s)", t.handle, home.handle, m))
	e.stmt(s.Pos, 0, fmt.Sprintf("deallocate(%s)", m))
	return true
}

// psection opens a parallel section construct: the sections are counted
// now, so the runtime can place them.
func (ug *unitGen) psection(e *emitter, i int, open *[]*construct) {
	s := ug.stmts[i]
	if ug.pdoBody {
		ug.errorf(s.Pos, "PSECTION inside a parallel loop")
		return
	}
	n, depth := 0, 0
	var on []string
	firstSection := -1
	for j := i + 1; j < len(ug.stmts); j++ {
		t := ug.stmts[j]
		if t.Kind != syntax.KindDirective {
			if depth == 0 && firstSection < 0 {
				ug.errorf(t.Pos, "a statement between PSECTION and its first SECTION")
				firstSection = j
			}
			continue
		}
		switch t.Dir.Kind {
		case syntax.DirPSection:
			depth++
		case syntax.DirPSectionEnd:
			depth--
		case syntax.DirSection:
			if depth == 0 {
				n++
				on = append(on, t.Dir.On)
				if firstSection < 0 {
					firstSection = j
				}
			}
		}
		if depth < 0 {
			break
		}
	}
	if n == 0 {
		ug.errorf(s.Pos, "PSECTION without a SECTION")
	}
	var sizes []string
	for _, name := range on {
		if name == "" {
			continue
		}
		if a := ug.arrangement(s.Pos, name); a != nil {
			sizes = append(sizes, a.procs)
		}
	}
	if len(sizes) != 0 && len(sizes) != n {
		ug.errorf(s.Pos, "some SECTIONs name processors (ON P) and some do not: name them for all or none")
		sizes = nil
	}
	label, after := ug.reactivate(e, s.Pos, 0)
	ug.sections++
	sel := ug.intVar("svm_s" + strconv.Itoa(ug.sections))
	ug.use("svm_sections_begin", "svm_section_next")
	call := fmt.Sprintf("call svm_sections_begin(%d)", n)
	if len(sizes) > 0 {
		call = fmt.Sprintf("call svm_sections_begin(%d, [%s])", n, strings.Join(sizes, ", "))
	}
	e.stmt(s.Pos, label, call)
	e.stmt(s.Pos, 0, "do")
	e.stmt(s.Pos, 0, fmt.Sprintf("  %s = svm_section_next()", sel))
	e.stmt(s.Pos, 0, fmt.Sprintf("  if (%s .eq. 0) exit", sel))
	*open = append(*open, &construct{kind: syntax.DirPSection, pos: s.Pos, after: after, selector: sel,
		depth: ug.blockDepth, savedExcl: ug.excl})
	ug.excl = nil // a section is a task of its own set, in replicated mode
}

var constructName = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9_]*)\s*:\s*[Dd][Oo]`)

// pdo translates a PDO directive and the DO nest after it; it returns the
// index of the directive (the nest's statements follow in the main loop).
func (ug *unitGen) pdo(e *emitter, i int, closers map[int][]func(*emitter)) int {
	s := ug.stmts[i]
	p := s.Dir.PDO
	if ug.pdoBody {
		ug.errorf(s.Pos, "PDO inside a parallel loop: nested parallel loops need PSECTION")
		return i
	}
	if p == nil || len(p.Loops) == 0 {
		ug.errorf(s.Pos, "PDO needs LOOPS(...)")
		return i
	}
	// The nest: tightly nested DO statements for the LOOPS indices.
	var dos []*syntax.Stmt
	for k, v := range p.Loops {
		j := i + 1 + k
		if j >= len(ug.stmts) || ug.stmts[j].Kind != syntax.KindDo || ug.stmts[j].Do == nil {
			if k == 0 {
				ug.errorf(s.Pos, "PDO (LOOPS(%s)) must be followed by DO %s = ...", strings.Join(p.Loops, ", "), v)
			} else {
				ug.errorf(s.Pos, "LOOPS(%s): the DO %s loop must follow the DO %s statement directly (tightly nested)", strings.Join(p.Loops, ", "), v, p.Loops[k-1])
			}
			return i
		}
		d := ug.stmts[j].Do
		if d.While || d.Var == "" {
			ug.errorf(ug.stmts[j].Pos, "a parallel loop needs a DO with an index, not DO WHILE")
			return i
		}
		if d.Var != strings.ToUpper(v) {
			ug.errorf(ug.stmts[j].Pos, "PDO LOOPS names %s here, but this DO's index is %s", v, d.Var)
			return i
		}
		if st := strings.TrimSpace(d.Step.Text); st != "" && st != "1" && st != "+1" {
			ug.errorf(ug.stmts[j].Pos, "parallel loop %s has step %s; PDO loops need step 1", d.Var, st)
			return i
		}
		if slices.Contains(p.Loops[:k], v) {
			ug.errorf(s.Pos, "LOOPS names %s twice", v)
			return i
		}
		dos = append(dos, ug.stmts[j])
	}
	end, ok := ug.doEnd[i+1]
	if !ok {
		ug.errorf(dos[0].Pos, "the DO loop after PDO has no end")
		return i
	}
	if p.Strategy == syntax.StratOnHome {
		// The runtime gets every bound at the start of the loop.
		for k := 1; k < len(dos); k++ {
			for _, outer := range p.Loops[:k] {
				for _, x := range []syntax.Expr{dos[k].Do.Lo, dos[k].Do.Hi} {
					if slices.Contains(identifiers(x.Text), strings.ToUpper(outer)) {
						ug.errorf(dos[k].Pos, "the bounds of parallel loop %s depend on %s; with this strategy every bound of LOOPS is fixed when the loop starts", dos[k].Do.Var, outer)
						return i
					}
				}
			}
		}
	}
	label, after := ug.reactivate(e, s.Pos, 0)
	var close []func(*emitter)
	switch p.Strategy {
	case syntax.StratBlock:
		ug.use("numproc", "myprocset", "svm_pset_barrier")
		l0, n, b, l, u := ug.intVar("svm_l0"), ug.intVar("svm_n"), ug.intVar("svm_b"), ug.intVar("svm_l"), ug.intVar("svm_u")
		d := dos[0].Do
		e.stmt(s.Pos, label, fmt.Sprintf("%s = (%s)", l0, d.Lo.Text))
		e.stmt(s.Pos, 0, fmt.Sprintf("%s = (%s) - %s + 1", n, d.Hi.Text, l0))
		e.stmt(s.Pos, 0, fmt.Sprintf("%s = max(0, (%s + numproc() - 1)/numproc())", b, n))
		e.stmt(s.Pos, 0, fmt.Sprintf("%s = %s + myprocset()*%s", l, l0, b))
		e.stmt(s.Pos, 0, fmt.Sprintf("%s = min(%s + %s - 1, %s + %s - 1)", u, l, b, l0, n))
		ug.doHeader(e, dos[0], l, u)
		for _, k := range dos[1:] {
			ug.pass(e, k)
		}
		close = append(close, func(e *emitter) { e.stmt(s.Pos, 0, "call svm_pset_barrier()") })
	case syntax.StratCyclic:
		ug.use("numproc", "myprocset", "svm_pset_barrier")
		l0, u0, c, k := ug.intVar("svm_l0"), ug.intVar("svm_u"), ug.intVar("svm_c"), ug.intVar("svm_k")
		d := dos[0].Do
		chunk := p.Chunk.Text
		if chunk == "" {
			chunk = "1"
		}
		e.stmt(s.Pos, label, fmt.Sprintf("%s = (%s)", l0, d.Lo.Text))
		e.stmt(s.Pos, 0, fmt.Sprintf("%s = (%s)", u0, d.Hi.Text))
		e.stmt(s.Pos, 0, fmt.Sprintf("%s = max(1, (%s))", c, chunk))
		e.stmt(s.Pos, 0, fmt.Sprintf("do %s = %s + myprocset()*%s, %s, numproc()*%s", k, l0, c, u0, c))
		ug.doHeader(e, dos[0], k, fmt.Sprintf("min(%s + %s - 1, %s)", k, c, u0))
		for _, k := range dos[1:] {
			ug.pass(e, k)
		}
		close = append(close, func(e *emitter) {
			e.stmt(s.Pos, 0, "end do")
			e.stmt(s.Pos, 0, "call svm_pset_barrier()")
		})
	default:
		if !ug.runtimeLoop(e, s, p, dos, label) {
			return i
		}
		close = append(close, func(e *emitter) { e.stmt(s.Pos, 0, "end do") })
	}
	ug.pdoBody = true
	savedExcl := ug.excl
	ug.excl = nil
	close = append(close, func(e *emitter) {
		ug.pdoBody = false
		ug.excl = savedExcl
	}, after)
	closers[end] = append(closers[end], close...)
	// The nest's DO statements are written; the main loop goes on inside.
	ug.blockDepth += len(dos)
	return i + len(dos)
}

// doHeader writes a parallel loop's DO statement with new bounds, keeping
// its label, terminating label and construct name.
func (ug *unitGen) doHeader(e *emitter, s *syntax.Stmt, lo, hi string) {
	ug.skip(e, s)
	d := s.Do
	head := "do "
	if m := constructName.FindStringSubmatch(s.Text); m != nil {
		head = m[1] + ": do "
	}
	if d.TermLabel != 0 {
		head += strconv.Itoa(d.TermLabel) + " "
	}
	e.stmt(s.Pos, s.Label, fmt.Sprintf("%s%s = %s, %s", head, d.Var, lo, hi))
}

// runtimeLoop writes an ON_HOME, DYNAMIC or SEMI_DYNAMIC loop: its boxes
// come from the runtime.
func (ug *unitGen) runtimeLoop(e *emitter, s *syntax.Stmt, p *syntax.PDOSpec, all []*syntax.Stmt, label int) bool {
	dos := all
	// dim[v] is the runtime dimension of loop index v; order lists the
	// loops by runtime dimension.
	dim := map[string]int{}
	var strategy, extra string
	offsets := make([]string, len(dos))
	order := make([]*syntax.Stmt, len(dos))
	switch p.Strategy {
	case syntax.StratOnHome:
		t := ug.template(s.Pos, p.Template)
		if t == nil {
			return false
		}
		if !t.distributed {
			ug.errorf(s.Pos, "ON_HOME on template %s, which is not distributed before this loop", t.name)
			return false
		}
		if len(p.Subscripts) != len(t.decl.Dims) {
			ug.errorf(s.Pos, "ON_HOME(%s(...)) has %d subscripts; template %s has rank %d", t.name, len(p.Subscripts), t.name, len(t.decl.Dims))
			return false
		}
		if len(p.Subscripts) != len(dos) {
			ug.errorf(s.Pos, "ON_HOME(%s(...)) has %d subscripts for %d LOOPS indices: each index appears in one subscript", t.name, len(p.Subscripts), len(dos))
			return false
		}
		for k, x := range p.Subscripts {
			v, off, ok := subscript(x.Text)
			j := slices.IndexFunc(dos, func(d *syntax.Stmt) bool { return d.Do.Var == v })
			if !ok || j < 0 {
				ug.errorf(x.Pos, "ON_HOME subscript %s: write a LOOPS index plus or minus a constant (I, I+1, J-2)", x.Text)
				return false
			}
			if _, dup := dim[v]; dup {
				ug.errorf(x.Pos, "ON_HOME names loop index %s twice", v)
				return false
			}
			dim[v], offsets[k], order[k] = k, off, dos[j]
		}
		strategy, extra = "svm_sched_on_home", fmt.Sprintf(", t=%s, offsets=[%s]", t.handle, strings.Join(offsets, ", "))
	case syntax.StratDynamic, syntax.StratSemiDynamic:
		// Chunks of the outermost loop; the inner LOOPS run whole, as
		// written (their bounds may depend on the outer index).
		dos, order = dos[:1], order[:1]
		dim[dos[0].Do.Var], order[0] = 0, dos[0]
		strategy = "svm_sched_dynamic"
		if p.Chunk.Text != "" {
			extra = fmt.Sprintf(", chunk=(%s)", p.Chunk.Text)
		}
		if p.Strategy == syntax.StratSemiDynamic {
			t := ug.template(s.Pos, p.Template)
			if t == nil {
				return false
			}
			if len(t.decl.Dims) != 1 {
				ug.errorf(s.Pos, "SEMI_DYNAMIC records the schedule of the outermost loop in a rank-1 template; %s has rank %d", t.name, len(t.decl.Dims))
				return false
			}
			strategy = "svm_sched_semi_dynamic"
			extra += ", t=" + t.handle
		}
	default:
		ug.errorf(s.Pos, "unknown loop strategy")
		return false
	}
	var lo, hi []string
	for _, d := range order {
		lo, hi = append(lo, "("+d.Do.Lo.Text+")"), append(hi, "("+d.Do.Hi.Text+")")
	}
	h := ug.intVar("svm_h")
	bl := ug.variable("svm_lo", "integer svm_lo(7)")
	bh := ug.variable("svm_hi", "integer svm_hi(7)")
	ug.use("svm_loop_begin", "svm_loop_next", strategy)
	e.stmt(s.Pos, label, fmt.Sprintf("%s = svm_loop_begin(%s, [%s], [%s]%s)", h, strategy, strings.Join(lo, ", "), strings.Join(hi, ", "), extra))
	e.stmt(s.Pos, 0, fmt.Sprintf("do while (svm_loop_next(%s, %s(1:%d), %s(1:%d)))", h, bl, len(dos), bh, len(dos)))
	for _, d := range dos {
		k := dim[d.Do.Var] + 1
		ug.doHeader(e, d, fmt.Sprintf("%s(%d)", bl, k), fmt.Sprintf("%s(%d)", bh, k))
	}
	for _, d := range all[len(dos):] {
		ug.pass(e, d)
	}
	return true
}

// subscript reads an ON_HOME subscript: an index, plus or minus an integer
// constant.
func subscript(text string) (string, string, bool) {
	t := strings.ReplaceAll(text, " ", "")
	i := strings.IndexAny(t, "+-")
	if i < 0 {
		if isName(t) {
			return strings.ToUpper(t), "0", true
		}
		return "", "", false
	}
	v, c := t[:i], t[i:]
	if !isName(v) {
		return "", "", false
	}
	if _, err := strconv.Atoi(c); err != nil {
		return "", "", false
	}
	return strings.ToUpper(v), c, true
}

func isName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isLetter(s[i]) && !isDigit(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}
