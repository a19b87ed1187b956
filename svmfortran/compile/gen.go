package compile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// fileGen translates one file, unit after unit.
type fileGen struct {
	file  *syntax.File
	out   *emitter
	prog  *program
	units []*unitGen
	diags []syntax.Diagnostic
	// next is the next physical line of the file not yet written.
	next int
}

func newFileGen(f *syntax.File, prog *program) *fileGen {
	g := &fileGen{file: f, out: &emitter{form: f.Form}, prog: prog, next: 1}
	for _, u := range f.Units {
		g.units = append(g.units, newUnitGen(g, u))
	}
	return g
}

// generate writes the file; the program's units have been analysed.
func (g *fileGen) generate() []byte {
	for _, ug := range g.units {
		ug.generate()
	}
	g.rawUpTo(g.out, len(g.file.Lines)) // trailing comments
	return g.out.bytes()
}

func (g *fileGen) errorf(pos syntax.Pos, format string, args ...any) {
	g.diags = append(g.diags, syntax.Diagnostic{Pos: pos, Severity: syntax.Error, Msg: fmt.Sprintf(format, args...)})
}

func (g *fileGen) warnf(pos syntax.Pos, format string, args ...any) {
	g.diags = append(g.diags, syntax.Diagnostic{Pos: pos, Severity: syntax.Warning, Msg: fmt.Sprintf(format, args...)})
}

// rawUpTo writes the file's physical lines up to and including last (the
// comments and directive lines between statements, and statements passed
// through) that are not written yet.
func (g *fileGen) rawUpTo(e *emitter, last int) {
	if last >= g.next {
		e.raw(g.file.Name, g.next, g.file.Lines[g.next-1:last])
		g.next = last + 1
	}
}

// fromFile reports whether s lies in the file's own lines (not an INCLUDEd
// file), so it can be passed through as written.
func (g *fileGen) fromFile(s *syntax.Stmt) bool {
	return s.Pos.File == g.file.Name && s.FirstLine >= 1 && s.LastLine <= len(g.file.Lines)
}

// arrangement, template and shared are what a unit declares.
type arrangement struct {
	name   string
	decl   syntax.Entity
	handle string // svm_p_NAME: the runtime handle
	procs  string // svm_n_NAME: its number of processors
}

type template struct {
	name        string
	decl        syntax.Entity
	handle      string
	distributed bool // textually: a DISTRIBUTE for it precedes the point of use
}

type sharedVar struct {
	name   string
	pos    syntax.Pos
	ptr    string // svm_a_NAME: the Cray pointer
	scalar bool
	common string // the shared COMMON block it is in, "" if none
}

// unitGen translates one program unit: analyse reads it (declarations,
// the tree of its executable part, its calls), then, once the program's
// units are all analysed, generate writes it.
type unitGen struct {
	*fileGen
	*symbols
	u     *syntax.Unit
	stmts []*syntax.Stmt // INCLUDEs expanded
	// first executable statement, and where the unit's exit code goes
	// (CONTAINS or END).
	firstExec, exit int

	arrangements map[string]*arrangement
	templates    map[string]*template
	tmplOrder    []string
	arrOrder     []string
	shared       []*sharedVar
	sharedByName map[string]*sharedVar
	// sharedCommons are the COMMON blocks named SHARED, in order.
	sharedCommons []string
	specDists     []*syntax.Stmt // DISTRIBUTEs of the specification part
	// intrinsicDecls are the declarations that name NUMPROC or MYPROCSET.
	intrinsicDecls map[string]syntax.Pos

	// includedBy maps each statement of an INCLUDE file to the INCLUDE
	// line of this file that brought it in.
	includedBy map[*syntax.Stmt]*syntax.Stmt

	tree   []*node
	labels map[int]*node // statement label -> its node
	unitFacts

	// outline: the executable part becomes an internal subroutine taking
	// the shared variables as dummy arguments (see outlined).
	outline bool
	formats []*syntax.Stmt // FORMATs of the specification part, moved into it

	vars      map[string]string // generated variables: name -> declaration
	uses      map[string]bool   // module svm entities used
	nextLabel int
	dispatch  // dispatch codes and the unit's scopes
}

func newUnitGen(g *fileGen, u *syntax.Unit) *unitGen {
	ug := &unitGen{fileGen: g, u: u, symbols: newSymbols(u),
		arrangements: map[string]*arrangement{}, templates: map[string]*template{},
		sharedByName: map[string]*sharedVar{}, intrinsicDecls: map[string]syntax.Pos{},
		vars: map[string]string{}, uses: map[string]bool{}, nextLabel: 90000}
	ug.includedBy = map[*syntax.Stmt]*syntax.Stmt{}
	ug.stmts = ug.flatten(u.Stmts, nil)
	return ug
}

// flatten replaces INCLUDE statements by the statements they include,
// noting for each the INCLUDE line of the file that brought it in (inc,
// nil for the file's own statements).
func (ug *unitGen) flatten(stmts []*syntax.Stmt, inc *syntax.Stmt) []*syntax.Stmt {
	var out []*syntax.Stmt
	for _, s := range stmts {
		if s.Kind == syntax.KindInclude {
			out = append(out, ug.flatten(s.Included, cmp.Or(inc, s))...)
			continue
		}
		if inc != nil {
			ug.includedBy[s] = inc
		}
		out = append(out, s)
	}
	return out
}

func (ug *unitGen) use(names ...string) {
	for _, n := range names {
		ug.uses[n] = true
	}
}

// variable declares generated variable name (once) and returns it.
func (ug *unitGen) variable(name, decl string) string {
	ug.vars[name] = decl
	return name
}

func (ug *unitGen) intVar(name string) string { return ug.variable(name, "integer "+name) }

func (ug *unitGen) label() int {
	ug.nextLabel++
	return ug.nextLabel
}

// analyse reads the unit's executable part: its tree and the facts the
// program's analysis needs; collect has read its declarations.
func (ug *unitGen) analyse() {
	if len(ug.stmts) == 0 {
		return
	}
	ug.tree = ug.buildTree()
	ug.facts()
}

// generate writes the unit: its header, USE svm, the specification part,
// the generated declarations and entry code, and the translated body.
func (ug *unitGen) generate() {
	if len(ug.stmts) == 0 {
		return
	}
	if !ug.svm {
		// Nothing to translate: the unit as written, with the module
		// svm's intrinsics when it refers to them.
		ug.pass(ug.out, ug.stmts[0])
		if ug.intrinsicRefs {
			ug.use("numproc", "myprocset")
			ug.writeUses(ug.stmts[0].Pos)
		}
		for _, s := range ug.stmts[1:] {
			ug.pass(ug.out, s)
		}
		return
	}
	if ug.svm {
		for _, s := range ug.stmts[:ug.exit] {
			if s.Kind == syntax.KindEntry {
				ug.errorf(s.Pos, "ENTRY in %s, which runs SVM code: the compiler does not translate other entry points; make %s a subprogram of its own", describeUnit(ug.u), s.Name)
			}
		}
	}
	ug.outline = ug.outlined()
	header, spec, entry, body := &emitter{form: ug.file.Form}, &emitter{form: ug.file.Form}, &emitter{form: ug.file.Form}, &emitter{form: ug.file.Form}
	first := 0
	if ug.u.Kind != syntax.MainProgram || isHeader(ug.stmts[0]) {
		ug.pass(header, ug.stmts[0])
		first = 1
	}
	for i := first; i < ug.firstExec; i++ {
		ug.specStmt(spec, ug.stmts[i])
	}
	ug.entry(entry)
	ug.body(body)
	ug.out.b.WriteString(header.b.String())
	pos := ug.stmts[0].Pos
	if first == 0 {
		// An unnamed main program: give it a header, so USE can follow.
		ug.out.stmt(pos, 0, "program svm_main")
	}
	if ug.intrinsicRefs {
		ug.use("numproc", "myprocset")
	}
	ug.writeUses(pos)
	ug.out.b.WriteString(spec.b.String())
	declPos := pos
	if ug.firstExec < len(ug.stmts) {
		declPos = ug.stmts[ug.firstExec].Pos
	}
	for _, name := range slices.Sorted(maps.Keys(ug.vars)) {
		ug.out.stmt(declPos, 0, ug.vars[name])
	}
	if ug.outline {
		// A function the unit types but only svm_body calls would be a
		// variable of the host to svm_body.
		for _, name := range ug.typedFunctions() {
			ug.out.gen(declPos, simple{text: "external " + name})
		}
	}
	if _, ok := ug.vars["svm_xcall"]; ok {
		// The mode of the next call, for the subprogram it calls.
		ug.out.gen(declPos, simple{text: "common /svm_mode/ svm_xcall"})
	}
	for _, v := range ug.shared {
		ug.out.stmt(v.pos, 0, fmt.Sprintf("pointer (%s, %s)", v.ptr, v.name))
	}
	ug.out.b.WriteString(entry.b.String() + body.b.String())
}

// writeUses writes the USE of the module svm's entities the unit needs,
// in several short statements: generated lines stay within what any
// compiler reads by default.
func (ug *unitGen) writeUses(pos syntax.Pos) {
	names := slices.Sorted(maps.Keys(ug.uses))
	for len(names) > 0 {
		n := min(len(names), 4)
		ug.out.stmt(pos, 0, "use svm, only: "+strings.Join(names[:n], ", "))
		names = names[n:]
	}
}

func isHeader(s *syntax.Stmt) bool {
	switch s.Kind {
	case syntax.KindProgram, syntax.KindSubroutine, syntax.KindFunction, syntax.KindBlockData, syntax.KindModule:
		return true
	}
	return false
}

// pass writes s as written: its own lines when it has them to itself, or
// its text (a statement of an INCLUDE file is written in place of the
// INCLUDE line, which goes).
func (ug *unitGen) pass(e *emitter, s *syntax.Stmt) {
	if ug.fromFile(s) && s.FirstLine >= ug.next {
		ug.rawUpTo(e, s.LastLine)
		return
	}
	ug.skip(e, s)
	e.stmt(s.Pos, s.Label, s.Text)
}

// skip writes the comments before s, and s's own lines when it is a
// directive (a comment to gfortran), but not an ordinary statement that is
// replaced by generated code, nor the INCLUDE line of a statement from an
// INCLUDE file.
func (ug *unitGen) skip(e *emitter, s *syntax.Stmt) {
	if !ug.fromFile(s) {
		if inc := ug.includedBy[s]; inc != nil {
			ug.skip(e, inc) // the INCLUDE line goes
		}
		return
	}
	if s.Kind == syntax.KindDirective {
		ug.rawUpTo(e, s.LastLine)
		return
	}
	ug.rawUpTo(e, s.FirstLine-1)
	if s.LastLine >= ug.next {
		ug.next = s.LastLine + 1
	}
}

// collect reads the specification part: declarations, COMMON blocks,
// DATA, and the declarative directives.
func (ug *unitGen) collect() {
	if len(ug.stmts) == 0 {
		return
	}
	ug.firstExec, ug.exit = len(ug.stmts)-1, len(ug.stmts)-1
	found := false
	for i, s := range ug.stmts {
		if !found && i > 0 && !s.Spec && !(s.Kind == syntax.KindDirective && isSpecDirective(s.Dir.Kind)) &&
			s.Kind != syntax.KindFormat {
			ug.firstExec, found = i, true
		}
		if s.Kind == syntax.KindContains && ug.exit == len(ug.stmts)-1 {
			ug.exit = i
			if !found {
				ug.firstExec, found = i, true
			}
		}
		if s.Label >= ug.nextLabel && s.Label < 99000 {
			ug.nextLabel = s.Label + 1
		}
		if i < ug.firstExec || !found {
			ug.declare(s)
			ug.noteIntrinsicDecl(s)
		}
	}
	if ug.nextLabel > 98000 {
		ug.errorf(ug.u.Pos, "the unit's statement labels leave no room for the compiler's own (it uses labels above the largest one, up to 99999)")
	}
	for i, s := range ug.stmts {
		if s.Kind != syntax.KindDirective {
			continue
		}
		switch {
		case ug.u.Kind == syntax.Module || ug.u.Kind == syntax.BlockData:
			ug.errorf(s.Pos, "SVM directive in %s: directives belong in a main program or an external subprogram", describeUnit(ug.u))
			continue
		case i > ug.exit:
			ug.errorf(s.Pos, "SVM directive in a procedure after CONTAINS: the compiler translates the directives of external subprograms only (move the procedure out of %s)", describeUnit(ug.u))
			continue
		case isSpecDirective(s.Dir.Kind) && i >= ug.firstExec:
			ug.errorf(s.Pos, "%s belongs in the specification part, before the first executable statement", s.Dir.Kind)
			continue
		}
		switch s.Dir.Kind {
		case syntax.DirProcessors:
			for _, e := range s.Dir.Decls {
				ug.declareArrangement(e)
			}
		case syntax.DirTemplate:
			for _, e := range s.Dir.Decls {
				ug.declareTemplate(e)
			}
		case syntax.DirShared:
			for _, name := range s.Dir.Names {
				ug.declareShared(s, name)
			}
		case syntax.DirDistribute:
			if i < ug.firstExec {
				ug.specDists = append(ug.specDists, s)
			}
		}
	}
}

// noteIntrinsicDecl records a declaration of NUMPROC or MYPROCSET, which
// would hide the module's.
func (ug *unitGen) noteIntrinsicDecl(s *syntax.Stmt) {
	names := s.Names
	for _, e := range s.Decl {
		names = append(names, e.Name)
	}
	if s.Kind != syntax.KindTypeDecl && s.Kind != syntax.KindExternal {
		return
	}
	for _, n := range names {
		if svmIntrinsics[n] {
			ug.intrinsicDecls[n] = s.Pos
		}
	}
}

func describeUnit(u *syntax.Unit) string {
	if u.Kind == syntax.MainProgram && u.Name == "" {
		return "the main program"
	}
	return u.Kind.String() + " " + u.Name
}

func isSpecDirective(k syntax.DirKind) bool {
	return k == syntax.DirProcessors || k == syntax.DirTemplate || k == syntax.DirShared
}

func (ug *unitGen) declareArrangement(e syntax.Entity) {
	if ug.arrangements[e.Name] != nil || ug.templates[e.Name] != nil {
		ug.errorf(e.Pos, "%s is declared twice", e.Name)
		return
	}
	if len(e.Dims) == 0 {
		ug.errorf(e.Pos, "processor arrangement %s needs its extents: PROCESSORS:: %s(NUMPROC())", e.Name, e.Name)
		return
	}
	if len(e.Dims) > 7 {
		ug.errorf(e.Pos, "processor arrangement %s has rank %d; at most 7", e.Name, len(e.Dims))
		return
	}
	for _, d := range e.Dims {
		if d.Lo.Text != "" || d.Hi.Text == ":" || d.Hi.Text == "*" {
			ug.errorf(e.Pos, "processor arrangement %s: give each extent as one expression, as in P(NUMPROC())", e.Name)
			return
		}
	}
	ug.arrangements[e.Name] = &arrangement{name: e.Name, decl: e, handle: "svm_p_" + e.Name, procs: "svm_n_" + e.Name}
	ug.arrOrder = append(ug.arrOrder, e.Name)
}

func (ug *unitGen) declareTemplate(e syntax.Entity) {
	if ug.arrangements[e.Name] != nil || ug.templates[e.Name] != nil {
		ug.errorf(e.Pos, "%s is declared twice", e.Name)
		return
	}
	if len(e.Dims) == 0 || len(e.Dims) > 7 {
		ug.errorf(e.Pos, "template %s needs a rank of 1 to 7: TEMPLATE:: %s(N) or %s(:)", e.Name, e.Name, e.Name)
		return
	}
	deferred := 0
	for _, d := range e.Dims {
		if d.Hi.Text == ":" {
			deferred++
		}
	}
	if deferred != 0 && deferred != len(e.Dims) {
		ug.errorf(e.Pos, "template %s: give all of its bounds, or none (%s(:, :))", e.Name, e.Name)
		return
	}
	ug.templates[e.Name] = &template{name: e.Name, decl: e, handle: "svm_t_" + e.Name}
	ug.tmplOrder = append(ug.tmplOrder, e.Name)
}

func (ug *unitGen) declareShared(s *syntax.Stmt, name string) {
	if strings.HasPrefix(name, "/") {
		block := strings.Trim(name, "/")
		if _, ok := ug.commonVars[block]; !ok {
			ug.errorf(s.Pos, "SHARED names COMMON /%s/, which no COMMON statement of this unit declares", block)
			return
		}
		if slices.Contains(ug.sharedCommons, block) {
			return
		}
		ug.sharedCommons = append(ug.sharedCommons, block)
		for _, v := range ug.commonVars[block] {
			if ug.initialised[v.Name] {
				ug.errorf(s.Pos, "COMMON /%s/ cannot be shared: %s is initialised by DATA", block, v.Name)
			}
			ug.addShared(s, v.Name, block)
		}
		return
	}
	_, dummy := ug.dummies[name]
	switch {
	case !ug.declared[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is not declared in this unit (declare its type and shape first)", name, name)
	case dummy:
		ug.errorf(s.Pos, "SHARED %s: %s is a dummy argument; it is whatever the caller passed", name, name)
	case ug.initialised[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is initialised by DATA; shared data is allocated at run time", name, name)
	case ug.constants[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is a PARAMETER, not a variable", name, name)
	case ug.equivalenced[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is in an EQUIVALENCE; shared data is allocated on its own pages", name, name)
	case ug.saved[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is SAVEd; shared data lives from the unit's start to its return (use a shared COMMON block)", name, name)
	case ug.commonOf[name] != "":
		ug.errorf(s.Pos, "SHARED %s: %s is in COMMON /%s/; share the block: SHARED:: /%s/", name, name, ug.commonOf[name], ug.commonOf[name])
	case ug.sharedByName[name] != nil:
	case slices.ContainsFunc(ug.dims[name], func(d syntax.Bound) bool { return d.Hi.Text == "*" || d.Hi.Text == ":" }):
		ug.errorf(s.Pos, "SHARED %s: %s has no explicit shape, so it cannot be allocated", name, name)
	default:
		ug.addShared(s, name, "")
	}
}

func (ug *unitGen) addShared(s *syntax.Stmt, name, common string) {
	v := &sharedVar{name: name, pos: s.Pos, ptr: "svm_a_" + name, scalar: ug.dims[name] == nil, common: common}
	ug.shared = append(ug.shared, v)
	ug.sharedByName[name] = v
	ug.variable(v.ptr, "integer(c_intptr_t) "+v.ptr)
	ug.use("c_intptr_t")
}

// specStmt writes a statement of the specification part: COMMON
// statements lose their shared blocks (whose variables become pointees).
func (ug *unitGen) specStmt(e *emitter, s *syntax.Stmt) {
	if ug.outline && s.Kind == syntax.KindFormat {
		ug.skip(e, s)
		ug.formats = append(ug.formats, s)
		return
	}
	if s.Kind != syntax.KindCommon || !slices.ContainsFunc(s.Common, func(b syntax.CommonBlock) bool {
		return slices.Contains(ug.sharedCommons, b.Name)
	}) {
		ug.pass(e, s)
		return
	}
	ug.skip(e, s)
	var keep, dims []string
	for _, b := range s.Common {
		if !slices.Contains(ug.sharedCommons, b.Name) {
			keep = append(keep, "/"+b.Name+"/ "+entities(b.Vars))
			continue
		}
		for _, v := range b.Vars {
			if len(v.Dims) > 0 {
				dims = append(dims, entities([]syntax.Entity{v}))
			}
		}
	}
	label := s.Label
	if len(keep) > 0 {
		e.gen(s.Pos, simple{label: label, text: "common " + strings.Join(keep, " ")})
		label = 0
	}
	if len(dims) > 0 {
		e.gen(s.Pos, simple{label: label, text: "dimension " + strings.Join(dims, ", ")})
	}
}

// entities writes declared names with their bounds: A(N, 0:M), B.
func entities(vs []syntax.Entity) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, v.Name+boundsText(v.Dims))
	}
	return strings.Join(parts, ", ")
}

func boundsText(dims []syntax.Bound) string {
	if len(dims) == 0 {
		return ""
	}
	var ds []string
	for _, d := range dims {
		if d.Lo.Text != "" {
			ds = append(ds, d.Lo.Text+":"+d.Hi.Text)
		} else {
			ds = append(ds, d.Hi.Text)
		}
	}
	return "(" + strings.Join(ds, ", ") + ")"
}

// lowerUpper returns a bound's lower (1 when not given) and upper
// expressions.
func lowerUpper(d syntax.Bound) (string, string) {
	lo := d.Lo.Text
	if lo == "" {
		lo = "1"
	}
	return lo, d.Hi.Text
}

// byteSize is the Fortran expression of a variable's size in bytes.
func (ug *unitGen) byteSize(name string) string {
	ug.use("c_size_t")
	if ug.dims[name] == nil {
		return fmt.Sprintf("int(storage_size(%s)/8, c_size_t)", name)
	}
	return fmt.Sprintf("int(size(%s), c_size_t)*(storage_size(%s)/8)", name, name)
}

// entry writes what runs when the unit starts: joining the job (main
// program), taking the mode of the call (subprogram), arrangements,
// templates, shared data, and the specification part's distributions.
func (ug *unitGen) entry(e *emitter) {
	at := ug.u.Pos
	if ug.firstExec < len(ug.stmts) {
		at = ug.stmts[ug.firstExec].Pos
	}
	if ug.u.Kind == syntax.MainProgram {
		ug.use("svm_check", "svm_init")
		e.gen(at, callf("svm_check", "svm_init()", "'svm_init'"))
	} else if ug.svm {
		// The caller says whether it calls in exclusive mode; the next
		// call is replicated unless it says so again.
		ug.variable("svm_xmode", "logical svm_xmode")
		ug.variable("svm_xcall", "logical svm_xcall")
		e.gen(at, assign("svm_xmode", "svm_xcall"), assign("svm_xcall", ".false."))
	}
	for _, name := range ug.arrOrder {
		a := ug.arrangements[name]
		ug.use("svm_processors")
		var ext []string
		for _, d := range a.decl.Dims {
			ext = append(ext, paren(d.Hi.Text))
		}
		e.gen(a.decl.Pos,
			assign(ug.intVar(a.handle), fmt.Sprintf("svm_processors('%s', %s)", a.name, list(ext))),
			assign(ug.intVar(a.procs), strings.Join(ext, "*")))
	}
	for _, name := range ug.tmplOrder {
		t := ug.templates[name]
		ug.use("svm_template")
		e.gen(t.decl.Pos, assign(ug.intVar(t.handle), fmt.Sprintf("svm_template('%s', %d)", t.name, len(t.decl.Dims))))
		if t.decl.Dims[0].Hi.Text != ":" {
			ug.use("svm_template_create")
			e.gen(t.decl.Pos, callf("svm_template_create", t.handle, boundsArrays(t.decl.Dims)))
		}
	}
	ug.allocateShared(e, at)
	for _, s := range ug.specDists {
		e.gen(s.Pos, ug.distribute(s)...)
	}
	if ug.outline {
		ug.outlineStart(e)
	}
}

// boundsArrays writes [lo1, lo2], [hi1, hi2].
func boundsArrays(dims []syntax.Bound) string {
	var lo, hi []string
	for _, d := range dims {
		l, h := lowerUpper(d)
		lo, hi = append(lo, paren(l)), append(hi, paren(h))
	}
	return list(lo) + ", " + list(hi)
}

// allocateShared allocates the unit's shared variables (each on its own
// pages) and its shared COMMON blocks (the block on its own pages, its
// variables in order, each aligned to 8 bytes).
func (ug *unitGen) allocateShared(e *emitter, at syntax.Pos) {
	for _, v := range ug.shared {
		if v.common != "" {
			continue
		}
		ug.use("svm_address", "svm_shared_alloc")
		e.gen(v.pos, assign(v.ptr, fmt.Sprintf("svm_address(svm_shared_alloc(%s))", ug.byteSize(v.name))))
	}
	for _, block := range ug.sharedCommons {
		off := ug.variable("svm_off", "integer(c_intptr_t) svm_off")
		ug.use("svm_address", "svm_common", "c_size_t")
		e.gen(at, assign(off, "0"))
		var members []*sharedVar
		for _, v := range ug.shared {
			if v.common == block {
				members = append(members, v)
				e.gen(v.pos, assign(v.ptr, off), assign(off, fmt.Sprintf("(%s + %s + 7)/8*8", off, ug.byteSize(v.name))))
			}
		}
		base := ug.variable("svm_base", "integer(c_intptr_t) svm_base")
		e.gen(at, assign(base, fmt.Sprintf("svm_address(svm_common('%s', int(%s, c_size_t)))", block, off)))
		for _, v := range members {
			e.gen(v.pos, assign(v.ptr, base+" + "+v.ptr))
		}
	}
}

// exitCode is what runs before the unit returns: its templates and
// arrangements are released, its shared variables freed (with a barrier
// over the set first); the main program also frees the COMMON blocks and
// leaves the job.
func (ug *unitGen) exitCode() []fstmt {
	var out []fstmt
	for _, name := range slices.Backward(ug.tmplOrder) {
		ug.use("svm_release_template")
		out = append(out, callf("svm_release_template", ug.templates[name].handle))
	}
	for _, name := range slices.Backward(ug.arrOrder) {
		ug.use("svm_release_processors")
		out = append(out, callf("svm_release_processors", ug.arrangements[name].handle))
	}
	for _, v := range slices.Backward(ug.shared) {
		if v.common != "" {
			continue
		}
		ug.use("svm_shared_free", "svm_pointer")
		out = append(out, callf("svm_shared_free", "svm_pointer("+v.ptr+")"))
	}
	if ug.u.Kind == syntax.MainProgram {
		ug.use("svm_commons_free", "svm_check", "svm_finalize")
		out = append(out, callf("svm_commons_free"), callf("svm_check", "svm_finalize()", "'svm_finalize'"))
	}
	return out
}

// outlined reports whether the unit's executable part becomes an internal
// subroutine svm_body whose dummy arguments are the shared variables. The
// shared variables are Cray pointees, which gfortran assumes may alias
// anything, so loops over them are not vectorised; as dummy arguments they
// do not alias, and the loops compile as they would without SVM. Units
// with internal procedures or ENTRY statements keep the pointees.
func (ug *unitGen) outlined() bool {
	if len(ug.shared) == 0 || ug.u.Kind == syntax.BlockData || ug.u.Kind == syntax.Module {
		return false
	}
	return !slices.ContainsFunc(ug.stmts, func(s *syntax.Stmt) bool {
		return s.Kind == syntax.KindContains || s.Kind == syntax.KindEntry
	})
}

// typedFunctions are the external functions the unit's declarations type
// and do not name EXTERNAL.
func (ug *unitGen) typedFunctions() []string {
	found := map[string]bool{}
	for _, s := range ug.stmts[ug.firstExec:ug.exit] {
		for _, n := range stmtNames(s) {
			if n.Call && ug.types[n.Name] != "" && !ug.procedures[n.Name] && ug.kind(n) == functionName {
				found[n.Name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(found))
}

// outlineStart writes the call of svm_body, the unit's exit code after it,
// and the start of svm_body: its dummy arguments' declarations and the
// FORMAT statements of the specification part.
func (ug *unitGen) outlineStart(e *emitter) {
	at := ug.stmts[ug.exit].Pos
	if ug.firstExec < len(ug.stmts) {
		at = ug.stmts[ug.firstExec].Pos
	}
	var names []string
	for _, v := range ug.shared {
		names = append(names, v.name)
	}
	args := strings.Join(names, ", ")
	e.gen(at, simple{text: "call svm_body(" + args + ")"})
	e.gen(at, ug.exitCode()...)
	e.gen(at, simple{text: "contains"}, simple{text: "subroutine svm_body(" + args + ")"})
	for _, v := range ug.shared {
		typ, dims := ug.declarationOf(v.name)
		switch {
		case typ != "":
			e.gen(v.pos, simple{text: typ + " " + v.name + boundsText(dims)})
		case len(dims) > 0:
			e.gen(v.pos, simple{text: "dimension " + v.name + boundsText(dims)})
		}
	}
	for _, f := range ug.formats {
		e.gen(f.Pos, simple{label: f.Label, text: strings.TrimSpace(f.Text)})
	}
}

// declarationOf returns the type a declaration gives name ("" when it is
// typed implicitly) and its array bounds.
func (ug *unitGen) declarationOf(name string) (string, []syntax.Bound) {
	return ug.types[name], ug.dims[name]
}
