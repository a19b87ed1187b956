package compile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// fileGen translates one file, unit after unit.
type fileGen struct {
	file        *syntax.File
	out         *emitter
	subprograms map[string]bool
	diags       []syntax.Diagnostic
	// next is the next physical line of the file not yet written.
	next int
}

func generate(f *syntax.File, subprograms map[string]bool) ([]byte, []syntax.Diagnostic) {
	g := &fileGen{file: f, out: &emitter{form: f.Form}, subprograms: subprograms, next: 1}
	for _, u := range f.Units {
		newUnitGen(g, u).generate()
	}
	g.rawUpTo(g.out, len(f.Lines)) // trailing comments
	return g.out.bytes(), g.diags
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

// unitGen translates one program unit.
type unitGen struct {
	*fileGen
	u     *syntax.Unit
	stmts []*syntax.Stmt // INCLUDEs expanded
	doEnd map[int]int
	// first executable statement, and where the unit's exit code goes
	// (CONTAINS or END).
	firstExec, exit int

	arrangements map[string]*arrangement
	templates    map[string]*template
	tmplOrder    []string
	arrOrder     []string
	shared       []*sharedVar
	sharedByName map[string]*sharedVar
	// sharedCommons are the COMMON blocks named SHARED, in order, with
	// their variables as the unit's COMMON statements list them.
	sharedCommons []string
	commonVars    map[string][]syntax.Entity
	declared      map[string]bool
	characters    map[string]bool // declared CHARACTER: an I/O unit of that name is an internal file
	dummies       map[string]bool
	initialised   map[string]bool // in DATA statements
	equivalenced  map[string]bool // in EQUIVALENCE statements
	saved         map[string]bool // named in SAVE statements
	constants     map[string]bool // PARAMETERs
	specDists     []*syntax.Stmt  // DISTRIBUTEs of the specification part

	// outline: the executable part becomes an internal subroutine taking
	// the shared variables as dummy arguments (see outlined).
	outline bool
	formats []*syntax.Stmt // FORMATs of the specification part, moved into it

	vars      map[string]string // generated variables: name -> declaration
	uses      map[string]bool   // module svm entities used
	nextLabel int
	// control state while the body is generated
	excl       *exclusiveRegion
	sections   int // nesting depth of PSECTION constructs
	pdoBody    bool
	blockDepth int // DO and IF blocks open
}

type exclusiveRegion struct {
	pos        syntax.Pos
	dispatcher int   // label of the non-masters' dispatch code
	end        int   // label after the region
	targets    []int // labels of the continuation codes 2, 3, ...
	depth      int   // blockDepth at the region's start
}

func newUnitGen(g *fileGen, u *syntax.Unit) *unitGen {
	ug := &unitGen{fileGen: g, u: u,
		arrangements: map[string]*arrangement{}, templates: map[string]*template{},
		sharedByName: map[string]*sharedVar{}, commonVars: map[string][]syntax.Entity{},
		declared: map[string]bool{}, characters: map[string]bool{}, dummies: map[string]bool{}, initialised: map[string]bool{},
		equivalenced: map[string]bool{}, saved: map[string]bool{}, constants: map[string]bool{},
		vars: map[string]string{}, uses: map[string]bool{}, nextLabel: 90000}
	ug.stmts = flatten(u.Stmts)
	ug.doEnd = matchDos(ug.stmts)
	for _, a := range u.Args {
		ug.dummies[strings.ToUpper(a)] = true
	}
	return ug
}

// flatten replaces INCLUDE statements by the statements they include.
func flatten(stmts []*syntax.Stmt) []*syntax.Stmt {
	var out []*syntax.Stmt
	for _, s := range stmts {
		if s.Kind == syntax.KindInclude {
			out = append(out, flatten(s.Included)...)
			continue
		}
		out = append(out, s)
	}
	return out
}

// matchDos maps each DO statement's index to the index of the statement
// that ends it: the END DO of a block DO, the labelled statement of a
// DO 10 (shared terminators included).
func matchDos(stmts []*syntax.Stmt) map[int]int {
	end := map[int]int{}
	var open []int
	for j, s := range stmts {
		if s.Label != 0 {
			closed := false
			for len(open) > 0 && stmts[open[len(open)-1]].Do.TermLabel == s.Label {
				end[open[len(open)-1]] = j
				open = open[:len(open)-1]
				closed = true
			}
			if closed {
				continue
			}
		}
		if s.Kind == syntax.KindEndDo && len(open) > 0 && stmts[open[len(open)-1]].Do.TermLabel == 0 {
			end[open[len(open)-1]] = j
			open = open[:len(open)-1]
		}
		if s.Kind == syntax.KindDo && s.Do != nil {
			open = append(open, j)
		}
	}
	return end
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

// generate writes the unit: its header, USE svm, the specification part,
// the generated declarations and entry code, and the translated body.
func (ug *unitGen) generate() {
	if len(ug.stmts) == 0 {
		return
	}
	ug.collect()
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
	if ug.outline {
		ug.outlineStart(entry)
	}
	ug.body(body)
	if !ug.hasDirectives() {
		// Nothing to translate: the unit as written.
		ug.out.b.WriteString(header.b.String() + spec.b.String() + body.b.String())
		return
	}
	ug.out.b.WriteString(header.b.String())
	pos := ug.stmts[0].Pos
	if first == 0 {
		// An unnamed main program: give it a header, so USE can follow.
		ug.out.stmt(pos, 0, "program svm_main")
	}
	if mentionsIntrinsic(spec.b.String() + entry.b.String() + body.b.String()) {
		ug.use("numproc", "myprocset")
	}
	// Several short USE statements: generated lines stay within what any
	// compiler reads by default.
	names := slices.Sorted(maps.Keys(ug.uses))
	for len(names) > 0 {
		n := min(len(names), 4)
		ug.out.stmt(pos, 0, "use svm, only: "+strings.Join(names[:n], ", "))
		names = names[n:]
	}
	ug.out.b.WriteString(spec.b.String())
	declPos := pos
	if ug.firstExec < len(ug.stmts) {
		declPos = ug.stmts[ug.firstExec].Pos
	}
	for _, name := range slices.Sorted(maps.Keys(ug.vars)) {
		ug.out.stmt(declPos, 0, ug.vars[name])
	}
	for _, v := range ug.shared {
		ug.out.stmt(v.pos, 0, fmt.Sprintf("pointer (%s, %s)", v.ptr, v.name))
	}
	ug.out.b.WriteString(entry.b.String() + body.b.String())
}

func isHeader(s *syntax.Stmt) bool {
	switch s.Kind {
	case syntax.KindProgram, syntax.KindSubroutine, syntax.KindFunction, syntax.KindBlockData, syntax.KindModule:
		return true
	}
	return false
}

func (ug *unitGen) hasDirectives() bool {
	if len(ug.uses) > 0 {
		return true
	}
	for _, s := range ug.stmts {
		if s.Kind == syntax.KindDirective {
			return true
		}
	}
	return false
}

// pass writes s as written: its own lines when it has them to itself, or
// its text.
func (ug *unitGen) pass(e *emitter, s *syntax.Stmt) {
	if ug.fromFile(s) && s.FirstLine >= ug.next {
		ug.rawUpTo(e, s.LastLine)
		return
	}
	e.stmt(s.Pos, s.Label, s.Text)
}

// skip writes the comments before s, and s's own lines when it is a
// directive (a comment to gfortran), but not an ordinary statement that is
// replaced by generated code.
func (ug *unitGen) skip(e *emitter, s *syntax.Stmt) {
	if !ug.fromFile(s) {
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
	ug.firstExec, ug.exit = len(ug.stmts)-1, len(ug.stmts)-1
	found := false
	for i, s := range ug.stmts {
		if !found && i > 0 && !s.Spec && !(s.Kind == syntax.KindDirective && isSpecDirective(s.Dir.Kind)) &&
			s.Kind != syntax.KindInclude && s.Kind != syntax.KindFormat {
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
		switch s.Kind {
		case syntax.KindTypeDecl, syntax.KindDimension:
			for _, e := range s.Decl {
				ug.declared[e.Name] = true
				if strings.HasPrefix(strings.ToUpper(s.TypeSpec), "CHARACTER") {
					ug.characters[e.Name] = true
				}
			}
		case syntax.KindCommon:
			for _, b := range s.Common {
				ug.commonVars[b.Name] = append(ug.commonVars[b.Name], b.Vars...)
				for _, v := range b.Vars {
					ug.declared[v.Name] = true
				}
			}
		case syntax.KindData:
			for _, name := range identifiers(strings.SplitN(s.Text, "/", 2)[0]) {
				ug.initialised[name] = true
			}
		case syntax.KindEquivalence:
			for _, name := range identifiers(s.Text) {
				ug.equivalenced[name] = true
			}
		case syntax.KindSave:
			for _, name := range identifiers(s.Text) {
				ug.saved[name] = true
			}
		case syntax.KindParameter:
			// PARAMETER (N = 10, M = N*2): the names before each '='.
			for _, part := range strings.Split(s.Text, ",") {
				if ids := identifiers(strings.SplitN(part, "=", 2)[0]); len(ids) > 0 {
					ug.constants[ids[len(ids)-1]] = true
				}
			}
		}
	}
	if ug.nextLabel > 98000 {
		ug.errorf(ug.u.Pos, "the unit's statement labels leave no room for the compiler's own (it uses labels above the largest one, up to 99999)")
	}
	for i, s := range ug.stmts {
		if s.Kind != syntax.KindDirective {
			continue
		}
		if isSpecDirective(s.Dir.Kind) && i >= ug.firstExec {
			ug.errorf(s.Pos, "%s belongs in the specification part, before the first executable statement", dirName(s.Dir.Kind))
			continue
		}
		switch s.Dir.Kind {
		case syntax.DirProcessors:
			for _, e := range s.Dir.Decls {
				ug.declareArrangement(s, e)
			}
		case syntax.DirTemplate:
			for _, e := range s.Dir.Decls {
				ug.declareTemplate(s, e)
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

func isSpecDirective(k syntax.DirKind) bool {
	return k == syntax.DirProcessors || k == syntax.DirTemplate || k == syntax.DirShared
}

func (ug *unitGen) declareArrangement(s *syntax.Stmt, e syntax.Entity) {
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

func (ug *unitGen) declareTemplate(s *syntax.Stmt, e syntax.Entity) {
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
			ug.addShared(s, v.Name, block, len(v.Dims) == 0 && !ug.arrayDeclared(v.Name))
		}
		return
	}
	switch {
	case !ug.declared[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is not declared in this unit (declare its type and shape first)", name, name)
	case ug.dummies[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is a dummy argument; it is whatever the caller passed", name, name)
	case ug.initialised[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is initialised by DATA; shared data is allocated at run time", name, name)
	case ug.constants[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is a PARAMETER, not a variable", name, name)
	case ug.equivalenced[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is in an EQUIVALENCE; shared data is allocated on its own pages", name, name)
	case ug.saved[name]:
		ug.errorf(s.Pos, "SHARED %s: %s is SAVEd; shared data lives from the unit's start to its return (use a shared COMMON block)", name, name)
	case ug.inCommon(name) != "":
		ug.errorf(s.Pos, "SHARED %s: %s is in COMMON /%s/; share the block: SHARED:: /%s/", name, name, ug.inCommon(name), ug.inCommon(name))
	case ug.sharedByName[name] != nil:
	default:
		if b := ug.boundsOf(name); b != nil {
			for _, d := range b {
				if d.Hi.Text == "*" || d.Hi.Text == ":" {
					ug.errorf(s.Pos, "SHARED %s: %s has no explicit shape, so it cannot be allocated", name, name)
					return
				}
			}
		}
		ug.addShared(s, name, "", !ug.arrayDeclared(name))
	}
}

func (ug *unitGen) addShared(s *syntax.Stmt, name, common string, scalar bool) {
	v := &sharedVar{name: name, pos: s.Pos, ptr: "svm_a_" + name, scalar: scalar, common: common}
	ug.shared = append(ug.shared, v)
	ug.sharedByName[name] = v
	ug.variable(v.ptr, "integer(c_intptr_t) "+v.ptr)
	ug.use("c_intptr_t")
}

func (ug *unitGen) inCommon(name string) string {
	for b, vs := range ug.commonVars {
		for _, v := range vs {
			if v.Name == name {
				return b
			}
		}
	}
	return ""
}

// boundsOf returns the array bounds a declaration gives name, nil for a
// scalar.
func (ug *unitGen) boundsOf(name string) []syntax.Bound {
	for _, s := range ug.stmts[:ug.firstExec] {
		for _, e := range s.Decl {
			if e.Name == name && len(e.Dims) > 0 {
				return e.Dims
			}
		}
		for _, b := range s.Common {
			for _, e := range b.Vars {
				if e.Name == name && len(e.Dims) > 0 {
					return e.Dims
				}
			}
		}
	}
	return nil
}

func (ug *unitGen) arrayDeclared(name string) bool { return ug.boundsOf(name) != nil }

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
		e.stmt(s.Pos, label, "common "+strings.Join(keep, " "))
		label = 0
	}
	if len(dims) > 0 {
		e.stmt(s.Pos, label, "dimension "+strings.Join(dims, ", "))
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
func (ug *unitGen) byteSize(v *sharedVar) string {
	ug.use("c_size_t")
	if v.scalar {
		return fmt.Sprintf("int(storage_size(%s)/8, c_size_t)", v.name)
	}
	return fmt.Sprintf("int(size(%s), c_size_t)*(storage_size(%s)/8)", v.name, v.name)
}

// entry writes what runs when the unit starts: joining the job (main
// program), arrangements, templates, shared data, and the specification
// part's distributions.
func (ug *unitGen) entry(e *emitter) {
	at := ug.u.Pos
	if ug.firstExec < len(ug.stmts) {
		at = ug.stmts[ug.firstExec].Pos
	}
	if ug.u.Kind == syntax.MainProgram && ug.needsRuntime() {
		ug.use("svm_check", "svm_init")
		e.stmt(at, 0, "call svm_check(svm_init(), 'svm_init')")
	}
	for _, name := range ug.arrOrder {
		a := ug.arrangements[name]
		ug.use("svm_processors")
		var ext []string
		for _, d := range a.decl.Dims {
			ext = append(ext, "("+d.Hi.Text+")")
		}
		e.stmt(a.decl.Pos, 0, fmt.Sprintf("%s = svm_processors('%s', [%s])", ug.intVar(a.handle), a.name, strings.Join(ext, ", ")))
		e.stmt(a.decl.Pos, 0, fmt.Sprintf("%s = %s", ug.intVar(a.procs), strings.Join(ext, "*")))
	}
	for _, name := range ug.tmplOrder {
		t := ug.templates[name]
		ug.use("svm_template")
		e.stmt(t.decl.Pos, 0, fmt.Sprintf("%s = svm_template('%s', %d)", ug.intVar(t.handle), t.name, len(t.decl.Dims)))
		if t.decl.Dims[0].Hi.Text != ":" {
			ug.use("svm_template_create")
			e.stmt(t.decl.Pos, 0, fmt.Sprintf("call svm_template_create(%s, %s)", t.handle, boundsArrays(t.decl.Dims)))
		}
	}
	ug.allocateShared(e, at)
	for _, s := range ug.specDists {
		ug.distribute(e, s, s.Label)
	}
}

// needsRuntime reports whether the unit calls the runtime at all.
func (ug *unitGen) needsRuntime() bool {
	if len(ug.arrangements)+len(ug.templates)+len(ug.shared) > 0 {
		return true
	}
	for _, s := range ug.stmts {
		if s.Kind == syntax.KindDirective || mentionsIntrinsic(s.Text) {
			return true
		}
	}
	return false
}

// boundsArrays writes [lo1, lo2], [hi1, hi2].
func boundsArrays(dims []syntax.Bound) string {
	var lo, hi []string
	for _, d := range dims {
		l, h := lowerUpper(d)
		lo, hi = append(lo, "("+l+")"), append(hi, "("+h+")")
	}
	return "[" + strings.Join(lo, ", ") + "], [" + strings.Join(hi, ", ") + "]"
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
		e.stmt(v.pos, 0, fmt.Sprintf("%s = svm_address(svm_shared_alloc(%s))", v.ptr, ug.byteSize(v)))
	}
	for _, block := range ug.sharedCommons {
		off := ug.variable("svm_off", "integer(c_intptr_t) svm_off")
		ug.use("svm_address", "svm_common", "c_size_t")
		e.stmt(at, 0, off+" = 0")
		var members []*sharedVar
		for _, v := range ug.shared {
			if v.common == block {
				members = append(members, v)
				e.stmt(v.pos, 0, fmt.Sprintf("%s = %s", v.ptr, off))
				e.stmt(v.pos, 0, fmt.Sprintf("%s = (%s + %s + 7)/8*8", off, off, ug.byteSize(v)))
			}
		}
		base := ug.variable("svm_base", "integer(c_intptr_t) svm_base")
		e.stmt(at, 0, fmt.Sprintf("%s = svm_address(svm_common('%s', int(%s, c_size_t)))", base, block, off))
		for _, v := range members {
			e.stmt(v.pos, 0, fmt.Sprintf("%s = %s + %s", v.ptr, base, v.ptr))
		}
	}
}

// exitCode writes what runs before the unit returns: its shared variables
// are freed (with a barrier over the set first); the main program also
// frees the COMMON blocks and leaves the job.
func (ug *unitGen) exitCode(e *emitter, pos syntax.Pos, label int) int {
	// The unit's templates and arrangements go with it.
	for _, name := range slices.Backward(ug.tmplOrder) {
		ug.use("svm_release_template")
		e.stmt(pos, label, fmt.Sprintf("call svm_release_template(%s)", ug.templates[name].handle))
		label = 0
	}
	for _, name := range slices.Backward(ug.arrOrder) {
		ug.use("svm_release_processors")
		e.stmt(pos, label, fmt.Sprintf("call svm_release_processors(%s)", ug.arrangements[name].handle))
		label = 0
	}
	for _, v := range slices.Backward(ug.shared) {
		if v.common != "" {
			continue
		}
		ug.use("svm_shared_free", "svm_pointer")
		e.stmt(pos, label, fmt.Sprintf("call svm_shared_free(svm_pointer(%s))", v.ptr))
		label = 0
	}
	if ug.u.Kind == syntax.MainProgram && ug.needsRuntime() {
		ug.use("svm_commons_free", "svm_check", "svm_finalize")
		e.stmt(pos, label, "call svm_commons_free()")
		e.stmt(pos, 0, "call svm_check(svm_finalize(), 'svm_finalize')")
		label = 0
	}
	return label
}

// mentionsIntrinsic reports whether text calls NUMPROC() or MYPROCSET().
func mentionsIntrinsic(text string) bool {
	for _, id := range identifiers(text) {
		if id == "NUMPROC" || id == "MYPROCSET" {
			return true
		}
	}
	return false
}

// identifiers lists the names in a piece of Fortran (upper case), skipping
// character constants.
func identifiers(text string) []string {
	var ids []string
	for _, t := range tokens(text) {
		if t.ident {
			ids = append(ids, strings.ToUpper(t.text))
		}
	}
	return ids
}

type token struct {
	text  string
	ident bool
}

// tokens splits Fortran text into identifiers and everything else, keeping
// character constants whole, so that names can be found and replaced.
func tokens(text string) []token {
	var ts []token
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(text) {
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j+1, len(text))
			ts = append(ts, token{text: text[i:j]})
			i = j
		case isLetter(c):
			j := i + 1
			for j < len(text) && (isLetter(text[j]) || isDigit(text[j]) || text[j] == '_' || text[j] == '$') {
				j++
			}
			ts = append(ts, token{text: text[i:j], ident: true})
			i = j
		case isDigit(c):
			// A number, with any exponent letters: not a name.
			j := i + 1
			for j < len(text) && (isDigit(text[j]) || isLetter(text[j]) || text[j] == '.' || text[j] == '_') {
				j++
			}
			ts = append(ts, token{text: text[i:j]})
			i = j
		default:
			ts = append(ts, token{text: text[i : i+1]})
			i++
		}
	}
	return ts
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// substitute replaces the name old (any case) by new in Fortran text.
func substitute(text, old, new string) string {
	var b strings.Builder
	for _, t := range tokens(text) {
		if t.ident && strings.EqualFold(t.text, old) {
			b.WriteString(new)
		} else {
			b.WriteString(t.text)
		}
	}
	return b.String()
}

func dirName(k syntax.DirKind) string {
	return map[syntax.DirKind]string{
		syntax.DirProcessors: "PROCESSORS", syntax.DirTemplate: "TEMPLATE", syntax.DirCreate: "CREATE",
		syntax.DirDestroy: "DESTROY", syntax.DirUndef: "UNDEF", syntax.DirDistribute: "DISTRIBUTE",
		syntax.DirRedistribute: "REDISTRIBUTE", syntax.DirPDO: "PDO", syntax.DirPSection: "PSECTION",
		syntax.DirSection: "SECTION", syntax.DirPSectionEnd: "PSECTION_END",
		syntax.DirExclusiveRegion: "EXCLUSIVE_REGION", syntax.DirExclusiveRegionEnd: "EXCLUSIVE_REGION_END",
		syntax.DirReplicatedRegion: "REPLICATED_REGION", syntax.DirReplicatedRegionEnd: "REPLICATED_REGION_END",
		syntax.DirBarrier: "BARRIER", syntax.DirCritical: "CRITICAL", syntax.DirCriticalEnd: "CRITICAL_END",
		syntax.DirPageLock: "PAGE_LOCK", syntax.DirPageUnlock: "PAGE_UNLOCK", syntax.DirShared: "SHARED",
	}[k]
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
	for _, s := range ug.stmts {
		if s.Kind == syntax.KindContains || strings.HasPrefix(strings.ToUpper(strings.TrimSpace(s.Text)), "ENTRY ") {
			return false
		}
	}
	return true
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
	e.stmt(at, 0, "call svm_body("+args+")")
	ug.exitCode(e, at, 0)
	e.stmt(at, 0, "contains")
	e.stmt(at, 0, "subroutine svm_body("+args+")")
	for _, v := range ug.shared {
		typ, dims := ug.declarationOf(v.name)
		switch {
		case typ != "":
			e.stmt(v.pos, 0, typ+" "+v.name+boundsText(dims))
		case len(dims) > 0:
			e.stmt(v.pos, 0, "dimension "+v.name+boundsText(dims))
		}
	}
	for _, f := range ug.formats {
		e.stmt(f.Pos, f.Label, strings.TrimSpace(f.Text))
	}
}

// declarationOf returns the type a declaration gives name ("" when it is
// typed implicitly) and its array bounds.
func (ug *unitGen) declarationOf(name string) (string, []syntax.Bound) {
	typ := ""
	for _, s := range ug.stmts[:ug.firstExec] {
		if s.Kind != syntax.KindTypeDecl {
			continue
		}
		for _, e := range s.Decl {
			if e.Name == name {
				typ = s.TypeSpec
			}
		}
	}
	if strings.HasPrefix(strings.ToUpper(typ), "CHARACTER") && !strings.Contains(typ, "*") && !strings.Contains(typ, "(") {
		typ = "CHARACTER"
	}
	return typ, ug.boundsOf(name)
}
