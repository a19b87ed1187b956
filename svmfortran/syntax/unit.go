package syntax

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Options control Parse.
type Options struct {
	Form Form // FormAuto: by the file name's extension
	// ReadInclude reads the file an INCLUDE line names. nil makes every
	// INCLUDE line an error.
	ReadInclude func(name string) ([]byte, error)
	// Directives enables SVM directives; when false, directive lines are
	// comments.
	Directives bool
	// LongLines makes every column of a fixed-form line significant instead
	// of columns 1-72 only.
	LongLines bool
}

// Parse scans and parses one source file. It always returns a File, with
// whatever it could make of the source, and the diagnostics sorted by
// position: errors and warnings, at most 100 and then one saying there are
// too many.
func Parse(name string, src []byte, opts Options) (*File, []Diagnostic) {
	d := &diags{main: name}
	form := opts.Form
	if form != FormFixed && form != FormFree {
		form = formOf(name)
	}
	free := form == FormFree
	s := &scanner{d: d, opts: &opts, free: free, stack: []string{name}}
	lines, raws := s.scanFile(name, src)
	f := &File{Name: name, Form: form, Lines: lines}
	b := &builder{p: &stmtParser{d: d, free: free}, d: d, file: f}
	for _, r := range raws {
		b.add(r)
	}
	b.finish()
	return f, d.result()
}

// formOf chooses the source form by the file name's extension.
func formOf(name string) Form {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".f90", ".f95", ".f03", ".f08":
		return FormFree
	}
	return FormFixed
}

// builder groups statements into program units, tracking the scopes open
// in the current unit: the unit itself, procedures after CONTAINS,
// INTERFACE blocks with their bodies, derived type definitions.
type builder struct {
	p      *stmtParser
	d      *diags
	file   *File
	unit   *Unit // the open unit, nil between units
	scopes []*scope
	main   *Unit // the main program, once there is one
}

type scope struct {
	kind     StmtKind // KindProgram (also for a main program without PROGRAM), KindSubroutine, ...
	name     string
	pos      Pos
	iface    bool // an INTERFACE block
	typeDef  bool // a derived type definition
	contains bool // after CONTAINS
	spec     bool // still in the specification part
	arrays   map[string]bool
	hasUse   bool
}

func (b *builder) top() *scope {
	if len(b.scopes) == 0 {
		return nil
	}
	return b.scopes[len(b.scopes)-1]
}

// proc is the innermost procedure (or unit) scope.
func (b *builder) proc() *scope {
	for i := len(b.scopes) - 1; i >= 0; i-- {
		if sc := b.scopes[i]; !sc.iface && !sc.typeDef {
			return sc
		}
	}
	return nil
}

// inBlock reports whether an INTERFACE block or a type definition is open:
// everything in it is specification.
func (b *builder) inBlock() bool {
	return slices.ContainsFunc(b.scopes, func(sc *scope) bool { return sc.iface || sc.typeDef })
}

func (b *builder) ctx() ctx {
	top := b.top()
	if top == nil {
		return ctx{headerOK: true, spec: true}
	}
	proc := b.proc()
	cx := ctx{headerOK: top.iface || top.contains, spec: b.inBlock() || proc.spec}
	if proc != nil {
		cx.arrays, cx.hasUse = proc.arrays, proc.hasUse
	}
	return cx
}

func isHeader(k StmtKind) bool {
	switch k {
	case KindProgram, KindSubroutine, KindFunction, KindBlockData, KindModule:
		return true
	}
	return false
}

func describe(kind StmtKind, name string) string {
	if kind == KindProgram && name == "" {
		return "the main program"
	}
	return strings.TrimSpace(kind.String() + " " + name)
}

// add places one statement of the parsed file.
func (b *builder) add(r *rawStmt) {
	if r.include != nil {
		if b.unit == nil {
			if len(r.include.stmts) == 0 {
				return // like a comment line between units
			}
			b.startImplicit(r.posAt(0))
		}
		b.append(b.include(r))
		return
	}
	s, in := b.p.parse(r, b.ctx())
	if b.inBlock() {
		s.Spec = true
	}
	if top := b.top(); top != nil && top.typeDef && s.Kind == KindContains {
		s.Kind = KindOther // type-bound procedures follow
	}
	switch {
	case isHeader(s.Kind):
		b.header(s, in)
		return
	case s.Kind == KindEnd:
		b.end(s, in)
		return
	}
	if b.unit == nil {
		b.startImplicit(s.Pos)
	}
	top := b.top()
	switch {
	case s.Kind == KindContains:
		switch {
		case top.iface:
			b.d.errorf(s.Pos, "CONTAINS inside an INTERFACE block")
		case top.contains:
			b.d.errorf(s.Pos, "a second CONTAINS in %s", describe(top.kind, top.name))
		default:
			top.contains, top.spec = true, false
		}
	case in.closeIface:
		b.closeBlock(s, true)
	case in.closeType:
		b.closeBlock(s, false)
	}
	b.append(s)
	b.note(s)
	switch {
	case in.openIface:
		b.scopes = append(b.scopes, &scope{iface: true, pos: s.Pos})
	case in.openType:
		b.scopes = append(b.scopes, &scope{typeDef: true, pos: s.Pos})
	}
}

// include builds the statement for an INCLUDE line, parsing the included
// statements in the current scope.
func (b *builder) include(r *rawStmt) *Stmt {
	s := &Stmt{
		Kind: KindInclude, Pos: r.posAt(0), FirstLine: r.first, LastLine: r.last,
		Label: r.label, Text: string(r.text), Spec: true,
		Name: r.include.name, IncludedLines: r.include.lines,
	}
	for _, cr := range r.include.stmts {
		var cs *Stmt
		if cr.include != nil {
			cs = b.include(cr)
		} else {
			cs = b.included(cr)
		}
		s.Included = append(s.Included, cs)
		if !cs.Spec && cs.Kind != KindFormat {
			s.Spec = false
		}
	}
	return s
}

// included parses a statement of an INCLUDE file. Such statements may not
// change the program unit structure except inside an INTERFACE block.
func (b *builder) included(r *rawStmt) *Stmt {
	s, in := b.p.parse(r, b.ctx())
	block := b.inBlock()
	if block {
		s.Spec = true
	}
	top := b.top()
	bad := func() {
		b.d.errorf(s.Pos, "%s statement in INCLUDE file %q: program units and procedures cannot start or end in an INCLUDE file", s.Kind, r.file)
	}
	switch {
	case isHeader(s.Kind):
		if top == nil || !top.iface || (s.Kind != KindSubroutine && s.Kind != KindFunction) {
			bad()
			return s
		}
		b.scopes = append(b.scopes, &scope{kind: s.Kind, name: s.Name, pos: s.Pos, spec: true, arrays: map[string]bool{}})
		return s
	case s.Kind == KindEnd:
		if !block || top == nil || top.iface || top.typeDef {
			bad()
			return s
		}
		b.scopes = b.scopes[:len(b.scopes)-1]
		return s
	case s.Kind == KindContains:
		if top != nil && top.typeDef {
			s.Kind = KindOther
		} else {
			bad()
			return s
		}
	case in.closeIface:
		b.closeBlock(s, true)
	case in.closeType:
		b.closeBlock(s, false)
	}
	b.note(s)
	switch {
	case in.openIface:
		b.scopes = append(b.scopes, &scope{iface: true, pos: s.Pos})
	case in.openType:
		b.scopes = append(b.scopes, &scope{typeDef: true, pos: s.Pos})
	}
	return s
}

// closeBlock handles END INTERFACE (iface) or END TYPE: it closes the
// innermost open block of that kind, and the interface bodies in it that
// lack their END.
func (b *builder) closeBlock(s *Stmt, iface bool) {
	for k := len(b.scopes) - 1; k > 0; k-- {
		if sc := b.scopes[k]; iface && sc.iface || !iface && sc.typeDef {
			for _, inner := range b.scopes[k+1:] {
				b.d.errorf(inner.pos, "%s has no END statement", describe(inner.kind, inner.name))
			}
			b.scopes = b.scopes[:k]
			return
		}
	}
	if iface {
		b.d.errorf(s.Pos, "END INTERFACE without INTERFACE")
	} else {
		b.d.errorf(s.Pos, "END TYPE without a TYPE definition")
	}
}

// note records what a statement tells about its scope: the end of the
// specification part, arrays, USE.
func (b *builder) note(s *Stmt) {
	proc := b.proc()
	if proc == nil || b.inBlock() {
		return
	}
	if !s.Spec && s.Kind != KindFormat {
		proc.spec = false
	}
	switch s.Kind {
	case KindTypeDecl, KindDimension:
		for _, e := range s.Decl {
			if e.Dims != nil {
				proc.arrays[e.Name] = true
			}
		}
	case KindCommon:
		for _, blk := range s.Common {
			for _, e := range blk.Vars {
				if e.Dims != nil {
					proc.arrays[e.Name] = true
				}
			}
		}
	case KindUse:
		proc.hasUse = true
	}
}

func (b *builder) append(s *Stmt) {
	b.unit.Stmts = append(b.unit.Stmts, s)
}

// header places a PROGRAM, SUBROUTINE, FUNCTION, MODULE or BLOCK DATA
// statement.
func (b *builder) header(s *Stmt, in info) {
	top := b.top()
	if top != nil && (top.iface || top.contains) && (s.Kind == KindSubroutine || s.Kind == KindFunction) {
		// An interface body or an internal or module procedure.
		b.append(s)
		b.scopes = append(b.scopes, &scope{kind: s.Kind, name: s.Name, pos: s.Pos, spec: true, arrays: map[string]bool{}})
		return
	}
	if b.unit != nil {
		b.abandon(s)
	}
	u := &Unit{Pos: s.Pos, Name: s.Name}
	if len(in.args) > 0 {
		u.Args = in.args
	}
	switch s.Kind {
	case KindProgram:
		u.Kind = MainProgram
	case KindSubroutine:
		u.Kind = Subroutine
	case KindFunction:
		u.Kind = Function
	case KindBlockData:
		u.Kind = BlockData
	case KindModule:
		u.Kind = Module
	}
	b.open(u, s.Kind)
	b.append(s)
}

// startImplicit opens a main program without a PROGRAM statement.
func (b *builder) startImplicit(at Pos) {
	b.open(&Unit{Kind: MainProgram, Pos: at}, KindProgram)
}

func (b *builder) open(u *Unit, kind StmtKind) {
	if u.Kind == MainProgram {
		if b.main != nil {
			b.d.errorf(u.Pos, "a second main program (the first starts at line %d)", b.main.Pos.Line)
		} else {
			b.main = u
		}
	}
	b.file.Units = append(b.file.Units, u)
	b.unit = u
	b.scopes = []*scope{{kind: kind, name: u.Name, pos: u.Pos, spec: true, arrays: map[string]bool{}}}
}

// end places an END statement: it ends the innermost procedure or the unit.
func (b *builder) end(s *Stmt, in info) {
	if b.unit == nil {
		b.startImplicit(s.Pos) // a lone END is a main program
	}
	for len(b.scopes) > 1 && (b.top().iface || b.top().typeDef) {
		sc := b.top()
		what := "INTERFACE block has no END INTERFACE"
		if sc.typeDef {
			what = "TYPE definition has no END TYPE"
		}
		b.d.errorf(sc.pos, "%s", what)
		b.scopes = b.scopes[:len(b.scopes)-1]
	}
	top := b.top()
	if b.inBlock() {
		s.Spec = true // the END of an interface body
	}
	switch {
	case in.endOf != KindOther && in.endOf != top.kind:
		b.d.errorf(s.Pos, "END %s ends %s", in.endOf, describe(top.kind, top.name))
	case s.Name != "" && s.Name != top.name:
		b.d.errorf(s.Pos, "END %s %s does not match %s", in.endOf, s.Name, describe(top.kind, top.name))
	}
	b.append(s)
	b.scopes = b.scopes[:len(b.scopes)-1]
	if len(b.scopes) == 0 {
		b.close()
	}
}

// abandon ends a unit that has no END, because next (nil at the end of the
// file) starts another.
func (b *builder) abandon(next *Stmt) {
	u := b.unit
	if u.Kind == MainProgram && len(u.Stmts) > 0 && u.Stmts[0].Kind != KindProgram &&
		!slices.ContainsFunc(u.Stmts, func(s *Stmt) bool { return s.Kind != KindDirective }) {
		// Only directives: they stand outside any program unit.
		for _, s := range u.Stmts {
			b.d.errorf(s.Pos, "SVM directive outside a program unit; directives belong after a PROGRAM, SUBROUTINE or FUNCTION statement")
		}
		b.file.Units = b.file.Units[:len(b.file.Units)-1]
		if b.main == u {
			b.main = nil
		}
		b.unit, b.scopes = nil, nil
		return
	}
	for _, sc := range b.scopes[1:] {
		switch {
		case sc.iface:
			b.d.errorf(sc.pos, "INTERFACE block has no END INTERFACE")
		case sc.typeDef:
			b.d.errorf(sc.pos, "TYPE definition has no END TYPE")
		default:
			b.d.errorf(sc.pos, "%s has no END statement", describe(sc.kind, sc.name))
		}
	}
	root := b.scopes[0]
	if next != nil {
		b.d.errorf(u.Pos, "%s has no END statement (%s starts at line %d)", describe(root.kind, root.name), describe(next.Kind, next.Name), next.Pos.Line)
	} else {
		b.d.errorf(u.Pos, "%s has no END statement", describe(root.kind, root.name))
	}
	b.close()
}

// close ends the open unit and checks its DO loops.
func (b *builder) close() {
	_, probs := doStructure(b.unit.Stmts)
	for _, p := range probs {
		b.d.errorf(b.unit.Stmts[p.at].Pos, "%s", p.msg)
	}
	b.unit, b.scopes = nil, nil
}

func (b *builder) finish() {
	if b.unit != nil {
		b.abandon(nil)
	}
}

// FirstExecutable returns the index in Stmts of the first executable
// statement after the specification part (skipping FORMAT statements): the
// place where code that must run first goes. A unit with none gives the
// index of its CONTAINS or END statement, or len(Stmts) if it has no END.
// Non-declarative directives (PDO, CREATE, ...) count as executable.
func (u *Unit) FirstExecutable() int {
	i := 0
	if len(u.Stmts) > 0 && isHeader(u.Stmts[0].Kind) {
		i = 1
	}
	for ; i < len(u.Stmts); i++ {
		if s := u.Stmts[i]; !s.Spec && s.Kind != KindFormat {
			return i
		}
	}
	return len(u.Stmts)
}

// DoEnd returns, for the DO statement Stmts[i], the index of the statement
// that ends it: the matching END DO of a block DO, the statement labelled
// with the DO's label otherwise (which may end several DO loops). The error
// says why there is none.
func (u *Unit) DoEnd(i int) (int, error) {
	if i < 0 || i >= len(u.Stmts) {
		return -1, fmt.Errorf("statement index %d out of range [0, %d)", i, len(u.Stmts))
	}
	if s := u.Stmts[i]; s.Kind != KindDo {
		return -1, fmt.Errorf("statement %d (line %d, %s) is not a DO statement", i, s.Pos.Line, s.Kind)
	}
	end, probs := doStructure(u.Stmts)
	if end[i] >= 0 {
		return end[i], nil
	}
	for _, p := range probs {
		if p.do == i {
			return -1, errors.New(p.msg)
		}
	}
	return -1, fmt.Errorf("the DO loop at line %d has no end", u.Stmts[i].Pos.Line)
}

// DoEnds matches the DO statements of a list of statements (a unit's, or
// one with its INCLUDEs expanded) with the statements that end them, as
// DoEnd does: the result holds, for a DO statement at index i, the index of
// its end, and -1 everywhere else and for a DO without an end.
func DoEnds(stmts []*Stmt) []int {
	end, _ := doStructure(stmts)
	return end
}

// doProblem is something wrong with the DO loops of a unit, reported at
// statement at; do is the DO loop it concerns, -1 for none.
type doProblem struct {
	at, do int
	msg    string
}

func termLabel(s *Stmt) int {
	if s.Do == nil {
		return 0
	}
	return s.Do.TermLabel
}

// doStructure matches every DO statement in stmts with the statement that
// ends it: end[i] is its index for a DO at i, -1 if there is none. Unit
// boundaries (headers, END, CONTAINS) end the search, so the procedures
// after CONTAINS are matched separately.
func doStructure(stmts []*Stmt) (end []int, probs []doProblem) {
	end = make([]int, len(stmts))
	for i := range end {
		end[i] = -1
	}
	var stack []int // the open DO loops, innermost last
	unclosed := func() {
		for _, k := range stack {
			d := stmts[k]
			msg := fmt.Sprintf("the DO loop at line %d has no END DO", d.Pos.Line)
			if l := termLabel(d); l != 0 {
				msg = fmt.Sprintf("the DO %d loop at line %d is not ended: no statement labelled %d follows", l, d.Pos.Line, l)
			}
			probs = append(probs, doProblem{at: k, do: k, msg: msg})
		}
		stack = stack[:0]
	}
	for j, s := range stmts {
		switch {
		case j > 0 && isHeader(s.Kind), s.Kind == KindEnd, s.Kind == KindContains:
			unclosed()
			continue
		case s.Kind == KindDo:
			stack = append(stack, j)
			continue
		}
		consumed := false
		if s.Label != 0 {
			for len(stack) > 0 && termLabel(stmts[stack[len(stack)-1]]) == s.Label {
				end[stack[len(stack)-1]] = j
				stack = stack[:len(stack)-1]
				consumed = true
			}
			for k := len(stack) - 1; k >= 0; k-- {
				if termLabel(stmts[stack[k]]) != s.Label {
					continue
				}
				d, inner := stmts[stack[k]], stmts[stack[len(stack)-1]]
				probs = append(probs, doProblem{at: stack[k], do: stack[k], msg: fmt.Sprintf(
					"the DO %d loop at line %d ends at line %d, inside the DO loop at line %d, which is still open",
					s.Label, d.Pos.Line, s.Pos.Line, inner.Pos.Line)})
				stack = slices.Delete(stack, k, k+1)
				consumed = true
			}
		}
		if s.Kind != KindEndDo || consumed {
			continue
		}
		switch {
		case len(stack) == 0:
			probs = append(probs, doProblem{at: j, do: -1, msg: "END DO without a matching DO"})
		case termLabel(stmts[stack[len(stack)-1]]) != 0:
			k := stack[len(stack)-1]
			probs = append(probs, doProblem{at: j, do: k, msg: fmt.Sprintf(
				"END DO at line %d, but the DO loop at line %d ends at label %d",
				s.Pos.Line, stmts[k].Pos.Line, termLabel(stmts[k]))})
		default:
			end[stack[len(stack)-1]] = j
			stack = stack[:len(stack)-1]
		}
	}
	unclosed()
	return end, probs
}
