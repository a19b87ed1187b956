package compile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// The directives that become runtime calls in place: template operations
// and distributions, parallel sections and parallel loops. Each is checked
// first (errors at its line), then written.

// templateOp writes CREATE, DESTROY, UNDEF and (RE)DISTRIBUTE.
func (ug *unitGen) templateOp(s *syntax.Stmt) []fstmt {
	d := s.Dir
	var out []fstmt
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
			out = append(out, callf("svm_template_create", t.handle, boundsArrays(x.Dims)))
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
			out = append(out, callf(call, t.handle))
		}
	default:
		out = ug.distribute(s)
	}
	return out
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
func (ug *unitGen) distribute(s *syntax.Stmt) []fstmt {
	d := s.Dir.Dist
	if d == nil {
		return nil
	}
	var out []fstmt
	for _, name := range d.Targets {
		t := ug.template(s.Pos, name)
		if t == nil {
			continue
		}
		var code []fstmt
		var ok bool
		switch {
		case d.Var != "" && d.Home != "":
			code, ok = ug.linked(s, t)
		case d.Var != "":
			code, ok = ug.indirect(s, t)
		default:
			code, ok = ug.standard(s, t)
		}
		if ok {
			t.distributed = true
			out = append(out, code...)
		}
	}
	return out
}

// standardDist is a checked standard distribution: the runtime's formats,
// CYCLIC segments and GENERAL_BLOCK sizes per template dimension.
type standardDist struct {
	onto              *arrangement
	fmts, segs, sizes []string
}

func (ug *unitGen) checkStandard(s *syntax.Stmt, t *template) (standardDist, bool) {
	d := s.Dir.Dist
	sd := standardDist{onto: ug.arrangement(s.Pos, d.Onto)}
	if sd.onto == nil {
		return sd, false
	}
	if len(d.Formats) != len(t.decl.Dims) {
		ug.errorf(s.Pos, "template %s of rank %d needs %d distribution formats, not %d", t.name, len(t.decl.Dims), len(t.decl.Dims), len(d.Formats))
		return sd, false
	}
	distributed := 0
	for _, f := range d.Formats {
		seg := "0"
		switch f.Format {
		case syntax.DistBlock:
			sd.fmts = append(sd.fmts, "svm_block")
		case syntax.DistCyclic:
			sd.fmts = append(sd.fmts, "svm_cyclic")
			if f.Arg.Text != "" {
				seg = paren(f.Arg.Text)
			}
		case syntax.DistGeneralBlock:
			sd.fmts = append(sd.fmts, "svm_general_block")
			if f.Arg.Text == "" {
				ug.errorf(s.Pos, "GENERAL_BLOCK needs its block sizes: GENERAL_BLOCK(SIZES)")
				return sd, false
			}
			sd.sizes = append(sd.sizes, f.Arg.Text)
		case syntax.DistCollapsed:
			sd.fmts = append(sd.fmts, "svm_collapsed")
		default:
			ug.errorf(s.Pos, "an indirect or linked distribution has the form DISTRIBUTE (I) ONTO ...")
			return sd, false
		}
		if f.Format != syntax.DistCollapsed {
			distributed++
		}
		sd.segs = append(sd.segs, seg)
	}
	if distributed != len(sd.onto.decl.Dims) {
		ug.errorf(s.Pos, "mismatched ranks: template %s has %d distributed dimensions, arrangement %s has rank %d", t.name, distributed, sd.onto.name, len(sd.onto.decl.Dims))
		return sd, false
	}
	return sd, true
}

func (ug *unitGen) standard(s *syntax.Stmt, t *template) ([]fstmt, bool) {
	sd, ok := ug.checkStandard(s, t)
	if !ok {
		return nil, false
	}
	call := "svm_distribute"
	if s.Dir.Kind == syntax.DirRedistribute {
		call = "svm_redistribute"
	}
	args := []string{t.handle, sd.onto.handle, list(sd.fmts), list(sd.segs)}
	if len(sd.sizes) > 0 {
		args = append(args, list(sd.sizes))
	}
	ug.use(call)
	ug.use(sd.fmts...)
	return []fstmt{callf(call, args...)}, true
}

// elementLoop is a loop of the generated index svm_i over rank-1 template
// t's elements, with body; ok is false (after an error) when t is not rank
// 1.
func (ug *unitGen) elementLoop(s *syntax.Stmt, t *template, body ...fstmt) (fstmt, bool) {
	if len(t.decl.Dims) != 1 {
		ug.errorf(s.Pos, "indirect and linked distributions are for rank-1 templates; %s has rank %d", t.name, len(t.decl.Dims))
		return nil, false
	}
	ug.use("svm_template_lbound", "svm_template_ubound")
	i := ug.intVar("svm_i")
	return doBlock{header: fmt.Sprintf("%s = svm_template_lbound(%s, 1), svm_template_ubound(%s, 1)", i, t.handle, t.handle), body: body}, true
}

// indexed is expr with the distribution's dummy index replaced by svm_i.
func indexed(x syntax.Expr, index string) string {
	var b strings.Builder
	at := 0
	for _, n := range x.Names {
		if n.Name == index && !n.Call {
			b.WriteString(x.Text[at:n.Off] + "svm_i")
			at = n.Off + len(n.Name)
		}
	}
	return b.String() + x.Text[at:]
}

func (ug *unitGen) indirect(s *syntax.Stmt, t *template) ([]fstmt, bool) {
	d := s.Dir.Dist
	a := ug.arrangement(s.Pos, d.Onto)
	if a == nil {
		return nil, false
	}
	if len(d.OntoArgs) != 1 || len(a.decl.Dims) != 1 {
		ug.errorf(s.Pos, "an indirect distribution maps onto a rank-1 arrangement: DISTRIBUTE (I) ONTO P(MAP(I))")
		return nil, false
	}
	m := ug.variable("svm_map", "integer, allocatable :: svm_map(:)")
	loop, ok := ug.elementLoop(s, t, assign(m+"(svm_i)", indexed(d.OntoArgs[0], d.Var)))
	if !ok {
		return nil, false
	}
	ug.use("svm_distribute_indirect")
	return []fstmt{
		stmtf("allocate(%s(svm_template_lbound(%s, 1):svm_template_ubound(%s, 1)))", m, t.handle, t.handle),
		loop,
		callf("svm_distribute_indirect", t.handle, a.handle, m),
		stmtf("deallocate(%s)", m),
	}, true
}

func (ug *unitGen) linked(s *syntax.Stmt, t *template) ([]fstmt, bool) {
	d := s.Dir.Dist
	home := ug.template(s.Pos, d.Home)
	if home == nil {
		return nil, false
	}
	if len(d.HomeArgs) != len(home.decl.Dims) {
		ug.errorf(s.Pos, "HOME(%s(...)) has %d subscripts; template %s has rank %d", d.Home, len(d.HomeArgs), d.Home, len(home.decl.Dims))
		return nil, false
	}
	if !home.distributed {
		ug.errorf(s.Pos, "linked to template %s, which is not distributed before this point", d.Home)
		return nil, false
	}
	m := ug.variable("svm_map", "integer, allocatable :: svm_map(:)")
	r := len(home.decl.Dims)
	var body []fstmt
	for k, x := range d.HomeArgs {
		body = append(body, assign(fmt.Sprintf("%s(%d*(svm_i - svm_template_lbound(%s, 1)) + %d)", m, r, t.handle, k+1), indexed(x, d.Var)))
	}
	loop, ok := ug.elementLoop(s, t, body...)
	if !ok {
		return nil, false
	}
	ug.use("svm_distribute_linked")
	return []fstmt{
		stmtf("allocate(%s(%d*(svm_template_ubound(%s, 1) - svm_template_lbound(%s, 1) + 1)))", m, r, t.handle, t.handle),
		loop,
		callf("svm_distribute_linked", t.handle, home.handle, m),
		stmtf("deallocate(%s)", m),
	}, true
}

// sectionSizes checks a PSECTION's sections and returns the processor
// counts of their arrangements (none without ON).
func (ug *unitGen) sectionSizes(n *node) []string {
	if len(n.parts) == 0 {
		ug.errorf(n.stmt.Pos, "PSECTION without a SECTION")
	}
	var sizes []string
	named := 0
	for _, p := range n.parts {
		if p.stmt.Dir.On == "" {
			continue
		}
		named++
		if a := ug.arrangement(p.stmt.Pos, p.stmt.Dir.On); a != nil {
			sizes = append(sizes, a.procs)
		}
	}
	if named != 0 && named != len(n.parts) {
		ug.errorf(n.stmt.Pos, "some SECTIONs name processors (ON P) and some do not: name them for all or none")
		return nil
	}
	return sizes
}

// psection writes a parallel section construct: the sections are counted
// now, so the runtime can place them; each runs in replicated mode on its
// own processors.
func (ug *unitGen) psection(e *emitter, n *node, cx ctx) {
	s := n.stmt
	ug.skip(e, s)
	if cx.mode == parallel {
		ug.errorf(s.Pos, "PSECTION inside a parallel loop: the processors run different iterations; put the loop inside the sections instead")
	}
	sizes := ug.sectionSizes(n)
	label, after := ug.resume(e, s.Pos, cx, 0, ug.values(n, s.Pos, describe(s), ug.reads([]*node{n})))
	ug.sectionDepth++
	defer func() { ug.sectionDepth-- }()
	sel := ug.intVar("svm_s" + strconv.Itoa(ug.sectionDepth))
	ug.use("svm_sections_begin", "svm_section_next")
	args := []string{strconv.Itoa(len(n.parts))}
	if len(sizes) > 0 {
		args = append(args, list(sizes))
	}
	e.gen(s.Pos, labelled(label, callf("svm_sections_begin", args...)), simple{text: "do"},
		nested{assign(sel, "svm_section_next()"), ifThen(sel+" .eq. 0", simple{text: "exit"})})
	for k, p := range n.parts {
		ug.skip(e, p.stmt)
		if k == 0 {
			e.gen(p.stmt.Pos, simple{text: "select case (" + sel + ")"})
		}
		e.gen(p.stmt.Pos, simple{text: "case (" + strconv.Itoa(k+1) + ")"})
		section := ctx{mode: replicated, block: ug.newScope()}
		ug.nodes(e, p.body, section)
		ug.closeScope(e, section.block, p.stmt.Pos)
	}
	end := s
	if n.end != nil {
		end = n.end
		ug.skip(e, end)
	}
	if len(n.parts) > 0 {
		e.gen(end.Pos, simple{text: "end select"})
	}
	e.gen(end.Pos, simple{text: "end do"})
	e.gen(end.Pos, after...)
}

// pdoPlan is a checked parallel loop: its directive, the DO statements of
// its LOOPS, outermost first, and the bounds the schedule gives them ("" for
// a loop that runs as written).
type pdoPlan struct {
	s      *syntax.Stmt
	p      *syntax.PDOSpec
	dos    []*node
	lo, hi []string
}

// checkPDO checks a PDO and the DO nest it schedules.
func (ug *unitGen) checkPDO(n *node, cx ctx) (*pdoPlan, bool) {
	s := n.stmt
	p := s.Dir.PDO
	plan := &pdoPlan{s: s, p: p}
	switch {
	case cx.mode == parallel:
		ug.errorf(s.Pos, "PDO inside a parallel loop: nested parallel loops need PSECTION")
		return plan, false
	case p == nil || len(p.Loops) == 0:
		ug.errorf(s.Pos, "PDO needs LOOPS(...)")
		return plan, false
	}
	body := n.body
	for k, v := range p.Loops {
		if len(body) == 0 || body[0].kind != doNode || body[0].stmt.Do == nil {
			if k == 0 {
				ug.errorf(s.Pos, "PDO (LOOPS(%s)) must be followed by DO %s = ...", strings.Join(p.Loops, ", "), v)
			} else {
				ug.errorf(s.Pos, "LOOPS(%s): the DO %s loop must follow the DO %s statement directly (tightly nested)", strings.Join(p.Loops, ", "), v, p.Loops[k-1])
			}
			return plan, false
		}
		do := body[0]
		d := do.stmt.Do
		switch {
		case d.While || d.Var == "":
			ug.errorf(do.stmt.Pos, "a parallel loop needs a DO with an index, not DO WHILE")
			return plan, false
		case d.Var != v:
			ug.errorf(do.stmt.Pos, "PDO LOOPS names %s here, but this DO's index is %s", v, d.Var)
			return plan, false
		case d.Step.Text != "" && d.Step.Text != "1" && d.Step.Text != "+1":
			ug.errorf(do.stmt.Pos, "parallel loop %s has step %s; PDO loops need step 1", d.Var, d.Step.Text)
			return plan, false
		case slices.Contains(p.Loops[:k], v):
			ug.errorf(s.Pos, "LOOPS names %s twice", v)
			return plan, false
		}
		plan.dos = append(plan.dos, do)
		body = do.body
	}
	if p.Strategy == syntax.StratOnHome {
		// The runtime gets every bound at the start of the loop.
		for k, do := range plan.dos[1:] {
			for _, x := range []syntax.Expr{do.stmt.Do.Lo, do.stmt.Do.Hi} {
				for _, outer := range p.Loops[:k+1] {
					if slices.ContainsFunc(x.Names, func(n syntax.Name) bool { return n.Name == outer }) {
						ug.errorf(do.stmt.Pos, "the bounds of parallel loop %s depend on %s; with this strategy every bound of LOOPS is fixed when the loop starts", do.stmt.Do.Var, outer)
						return plan, false
					}
				}
			}
		}
	}
	plan.lo, plan.hi = make([]string, len(plan.dos)), make([]string, len(plan.dos))
	return plan, true
}

// pdo writes a parallel loop: the schedule's bounds for the DO nest, its
// body in parallel mode, and the join.
func (ug *unitGen) pdo(e *emitter, n *node, cx ctx) {
	s := n.stmt
	ug.skip(e, s)
	plan, ok := ug.checkPDO(n, cx)
	var head, tail []fstmt
	if ok {
		switch plan.p.Strategy {
		case syntax.StratBlock, syntax.StratCyclic:
			head, tail = ug.inlineSchedule(plan)
		default:
			head, ok = ug.runtimeSchedule(plan)
			tail = []fstmt{simple{text: "end do"}}
		}
	}
	if !ok {
		ug.nodes(e, n.body, ctx{mode: parallel})
		return
	}
	label, after := ug.resume(e, s.Pos, cx, 0, ug.values(n, s.Pos, describe(s), ug.reads([]*node{n})))
	head[0] = labelled(label, head[0])
	e.gen(s.Pos, head...)
	ug.nest(e, plan, 0)
	e.gen(s.Pos, tail...)
	e.gen(s.Pos, after...)
}

// nest writes the plan's DO loops from the k-th on, with the schedule's
// bounds, and their bodies in parallel mode.
func (ug *unitGen) nest(e *emitter, plan *pdoPlan, k int) {
	do := plan.dos[k]
	if plan.lo[k] != "" {
		ug.doHeader(e, do.stmt, plan.lo[k], plan.hi[k])
	} else {
		ug.pass(e, do.stmt)
	}
	body := do.body
	if k+1 < len(plan.dos) {
		ug.nest(e, plan, k+1)
		body = body[1:] // what follows the inner loop
	}
	ug.nodes(e, body, ctx{mode: parallel})
	if do.end != nil {
		ug.pass(e, do.end)
	}
}

// doHeader writes a parallel loop's DO statement with new bounds, keeping
// its label, terminating label and construct name.
func (ug *unitGen) doHeader(e *emitter, s *syntax.Stmt, lo, hi string) {
	ug.skip(e, s)
	head := "do "
	if s.Construct != "" {
		head = s.Construct + ": do "
	}
	if s.Do.TermLabel != 0 {
		head += strconv.Itoa(s.Do.TermLabel) + " "
	}
	e.gen(s.Pos, simple{label: s.Label, text: fmt.Sprintf("%s%s = %s, %s", head, s.Do.Var, lo, hi)})
}

// inlineSchedule is the code of BLOCK and CYCLIC loops: their bounds come
// from inline code, as in the paper's compiler.
func (ug *unitGen) inlineSchedule(plan *pdoPlan) (head, tail []fstmt) {
	d := plan.dos[0].stmt.Do
	ug.use("numproc", "myprocset", "svm_pset_barrier")
	if plan.p.Strategy == syntax.StratBlock {
		l0, n, b, l, u := ug.intVar("svm_l0"), ug.intVar("svm_n"), ug.intVar("svm_b"), ug.intVar("svm_l"), ug.intVar("svm_u")
		plan.lo[0], plan.hi[0] = l, u
		return []fstmt{
			assign(l0, paren(d.Lo.Text)),
			assign(n, fmt.Sprintf("%s - %s + 1", paren(d.Hi.Text), l0)),
			assign(b, fmt.Sprintf("max(0, (%s + numproc() - 1)/numproc())", n)),
			assign(l, fmt.Sprintf("%s + myprocset()*%s", l0, b)),
			assign(u, fmt.Sprintf("min(%s + %s - 1, %s + %s - 1)", l, b, l0, n)),
		}, []fstmt{callf("svm_pset_barrier")}
	}
	l0, u0, c, k := ug.intVar("svm_l0"), ug.intVar("svm_u"), ug.intVar("svm_c"), ug.intVar("svm_k")
	chunk := plan.p.Chunk.Text
	if chunk == "" {
		chunk = "1"
	}
	plan.lo[0], plan.hi[0] = k, fmt.Sprintf("min(%s + %s - 1, %s)", k, c, u0)
	return []fstmt{
		assign(l0, paren(d.Lo.Text)),
		assign(u0, paren(d.Hi.Text)),
		assign(c, fmt.Sprintf("max(1, %s)", paren(chunk))),
		simple{text: fmt.Sprintf("do %s = %s + myprocset()*%s, %s, numproc()*%s", k, l0, c, u0, c)},
	}, []fstmt{simple{text: "end do"}, callf("svm_pset_barrier")}
}

// runtimeSchedule is the code of ON_HOME, DYNAMIC and SEMI_DYNAMIC loops:
// their boxes come from the runtime.
func (ug *unitGen) runtimeSchedule(plan *pdoPlan) ([]fstmt, bool) {
	sc, ok := ug.checkRuntimeSchedule(plan)
	if !ok {
		return nil, false
	}
	var lo, hi []string
	for _, j := range sc.order {
		d := plan.dos[j].stmt.Do
		lo, hi = append(lo, paren(d.Lo.Text)), append(hi, paren(d.Hi.Text))
	}
	h := ug.intVar("svm_h")
	bl := ug.variable("svm_lo", "integer svm_lo(7)")
	bh := ug.variable("svm_hi", "integer svm_hi(7)")
	ug.use("svm_loop_begin", "svm_loop_next", sc.strategy)
	for k, j := range sc.order {
		plan.lo[j], plan.hi[j] = fmt.Sprintf("%s(%d)", bl, k+1), fmt.Sprintf("%s(%d)", bh, k+1)
	}
	return []fstmt{
		assign(h, fmt.Sprintf("svm_loop_begin(%s, %s, %s%s)", sc.strategy, list(lo), list(hi), sc.args)),
		simple{text: fmt.Sprintf("do while (svm_loop_next(%s, %s(1:%d), %s(1:%d)))", h, bl, len(sc.order), bh, len(sc.order))},
	}, true
}

// loopSchedule is a checked schedule from the runtime: its strategy,
// the optional arguments of svm_loop_begin, and the loops it schedules
// (indices into the plan's), by runtime dimension.
type loopSchedule struct {
	strategy, args string
	order          []int
}

func (ug *unitGen) checkRuntimeSchedule(plan *pdoPlan) (loopSchedule, bool) {
	s, p := plan.s, plan.p
	switch p.Strategy {
	case syntax.StratOnHome:
		return ug.checkOnHome(plan)
	case syntax.StratDynamic, syntax.StratSemiDynamic:
		// Chunks of the outermost loop; the inner LOOPS run whole, as
		// written (their bounds may depend on the outer index).
		sc := loopSchedule{strategy: "svm_sched_dynamic", order: []int{0}}
		if p.Chunk.Text != "" {
			sc.args = ", chunk=" + paren(p.Chunk.Text)
		}
		if p.Strategy == syntax.StratDynamic {
			return sc, true
		}
		t := ug.template(s.Pos, p.Template)
		if t == nil {
			return sc, false
		}
		if len(t.decl.Dims) != 1 {
			ug.errorf(s.Pos, "SEMI_DYNAMIC records the schedule of the outermost loop in a rank-1 template; %s has rank %d", t.name, len(t.decl.Dims))
			return sc, false
		}
		sc.strategy, sc.args = "svm_sched_semi_dynamic", sc.args+", t="+t.handle
		return sc, true
	}
	ug.errorf(s.Pos, "unknown loop strategy")
	return loopSchedule{}, false
}

// checkOnHome checks an ON_HOME schedule: every LOOPS index in one
// subscript of a distributed template, plus or minus a constant.
func (ug *unitGen) checkOnHome(plan *pdoPlan) (loopSchedule, bool) {
	s, p, dos := plan.s, plan.p, plan.dos
	sc := loopSchedule{strategy: "svm_sched_on_home", order: make([]int, len(dos))}
	t := ug.template(s.Pos, p.Template)
	switch {
	case t == nil:
		return sc, false
	case !t.distributed:
		ug.errorf(s.Pos, "ON_HOME on template %s, which is not distributed before this loop", t.name)
		return sc, false
	case len(p.Subscripts) != len(t.decl.Dims):
		ug.errorf(s.Pos, "ON_HOME(%s(...)) has %d subscripts; template %s has rank %d", t.name, len(p.Subscripts), t.name, len(t.decl.Dims))
		return sc, false
	case len(p.Subscripts) != len(dos):
		ug.errorf(s.Pos, "ON_HOME(%s(...)) has %d subscripts for %d LOOPS indices: each index appears in one subscript", t.name, len(p.Subscripts), len(dos))
		return sc, false
	}
	offsets := make([]string, len(dos))
	seen := map[string]bool{}
	for k, x := range p.Subscripts {
		v, off, ok := subscript(x)
		j := slices.IndexFunc(dos, func(d *node) bool { return d.stmt.Do.Var == v })
		if !ok || j < 0 {
			ug.errorf(x.Pos, "ON_HOME subscript %s: write a LOOPS index plus or minus a constant (I, I+1, J-2)", x.Text)
			return sc, false
		}
		if seen[v] {
			ug.errorf(x.Pos, "ON_HOME names loop index %s twice", v)
			return sc, false
		}
		seen[v] = true
		offsets[k], sc.order[k] = off, j
	}
	sc.args = fmt.Sprintf(", t=%s, offsets=%s", t.handle, list(offsets))
	return sc, true
}

// subscript reads an ON_HOME subscript: an index, plus or minus an integer
// constant.
func subscript(x syntax.Expr) (string, string, bool) {
	if len(x.Names) != 1 || x.Names[0].Call {
		return "", "", false
	}
	n := x.Names[0]
	before := strings.TrimSpace(x.Text[:n.Off])
	after := strings.ReplaceAll(x.Text[n.Off+len(n.Name):], " ", "")
	if before != "" {
		return "", "", false
	}
	if after == "" {
		return n.Name, "0", true
	}
	if after[0] != '+' && after[0] != '-' {
		return "", "", false
	}
	if _, err := strconv.Atoi(after); err != nil {
		return "", "", false
	}
	return n.Name, after, true
}
