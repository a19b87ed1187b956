package syntax

import (
	"slices"
	"strconv"
	"strings"
)

// stmtParser parses single statements.
type stmtParser struct {
	d    *diags
	free bool
}

// ctx is what parsing a statement needs to know about its surroundings.
type ctx struct {
	// headerOK: a program unit or procedure header may come here, so a
	// fixed-form REAL FUNCTION F(X) is a header and not the declaration of
	// an array FUNCTIONF.
	headerOK bool
	spec     bool            // still in the specification part
	arrays   map[string]bool // names declared with array bounds in the scope
	hasUse   bool            // the scope has a USE statement
}

// info is what parsing a statement learns beyond the Stmt itself, for the
// unit builder.
type info struct {
	args       []string // a header's dummy arguments
	endOf      StmtKind // KindEnd: the unit kind END names; KindOther for a bare END
	openIface  bool     // INTERFACE
	closeIface bool     // END INTERFACE
	openType   bool     // a derived type definition: TYPE T
	closeType  bool     // END TYPE
}

// parse parses one statement (not an INCLUDE, which the builder handles).
func (p *stmtParser) parse(r *rawStmt, cx ctx) (*Stmt, info) {
	n := newNorm(r, p.free)
	c := newCur(n, p.d)
	s := &Stmt{FirstLine: r.first, LastLine: r.last, Label: r.label, Text: string(r.text)}
	var in info
	if r.dir {
		s.Kind, s.Pos = KindDirective, r.dirPos
		s.Dir = p.directive(c, r.dirPos)
		s.Spec = declarative(s.Dir.Kind)
		return s, in
	}
	s.Pos = n.pos(0)
	p.stmt(c, s, cx, &in)
	return s, in
}

// Statements that are specification statements but need no more than
// their kind.
var specKeywords = []struct {
	kw   string
	kind StmtKind
}{
	{"PARAMETER", KindParameter},
	{"IMPLICIT", KindImplicit},
	{"USE", KindUse},
	{"DATA", KindData},
	{"EQUIVALENCE", KindEquivalence},
	{"SAVE", KindSave},
	{"EXTERNAL", KindExternal},
	{"INTRINSIC", KindIntrinsic},
	// F90 and later attribute and declaration statements, and some DEC
	// extensions.
	{"ALLOCATABLE", KindOther},
	{"POINTER", KindOther},
	{"TARGET", KindOther},
	{"INTENT", KindOther},
	{"OPTIONAL", KindOther},
	{"PUBLIC", KindOther},
	{"PRIVATE", KindOther},
	{"NAMELIST", KindOther},
	{"SEQUENCE", KindOther},
	{"PROCEDURE", KindOther},
	{"VOLATILE", KindOther},
	{"VALUE", KindOther},
	{"PROTECTED", KindOther},
	{"ASYNCHRONOUS", KindOther},
	{"BIND", KindOther},
	{"IMPORT", KindOther},
	{"CONTIGUOUS", KindOther},
	{"ENUMERATOR", KindOther},
	{"ENUM", KindOther},
	{"GENERIC", KindOther},
	{"FINAL", KindOther},
	{"AUTOMATIC", KindOther},
	{"STATIC", KindOther},
	{"STRUCTURE", KindOther},
	{"RECORD", KindOther},
	{"UNION", KindOther},
	{"MAP", KindOther},
}

var ioKeywords = []string{"READ", "WRITE", "PRINT", "OPEN", "CLOSE", "INQUIRE", "REWIND", "BACKSPACE", "ENDFILE", "FLUSH", "WAIT"}

// attributeKeywords start the attribute statements the parser takes apart
// (KindAttribute): ALLOCATABLE :: A(:), INTENT(IN) X. POINTER followed by
// '(' is a Cray pointer statement, KindOther.
var attributeKeywords = []string{"ALLOCATABLE", "POINTER", "TARGET", "INTENT", "OPTIONAL", "VALUE", "VOLATILE",
	"PROTECTED", "ASYNCHRONOUS", "CONTIGUOUS"}

// stmt classifies and parses the statement at the cursor. A statement it
// does not take apart keeps its whole text as Other, for the names in it.
func (p *stmtParser) stmt(c *cur, s *Stmt, cx ctx, in *info) {
	start := c.i
	p.classify(c, s, cx, in)
	if s.Kind == KindOther {
		s.Other = c.n.expr(start, c.end)
	}
}

func (p *stmtParser) classify(c *cur, s *Stmt, cx ctx, in *info) {
	if lhs, ok := assignment(c); ok {
		s.Kind = KindAssignment
		s.Spec = cx.spec && lhs.stmtFunc && !cx.hasUse && !cx.arrays[lhs.name]
		s.Target, s.Value = c.n.expr(c.i, lhs.eq), c.n.expr(lhs.value, c.end)
		return
	}
	// A construct name, as in OUTER: DO I = 1, N.
	save := c.i
	if nm := c.name(); nm == "" || !c.is(":") || c.is("::") {
		c.i = save
	} else {
		c.i++
		s.Construct = nm
	}
	if p.header(c, s, cx, in) {
		return
	}
	switch {
	case c.accept("PROGRAM"):
		s.Kind = KindProgram
		if s.Name = c.name(); s.Name == "" {
			c.errf("expected the program name after PROGRAM, found %s", c.here())
		}
		c.expectEnd("PROGRAM " + s.Name)
		return
	case c.accept("BLOCKDATA"):
		s.Kind = KindBlockData
		s.Name = c.name()
		c.expectEnd("BLOCK DATA")
		return
	case c.is("MODULEPROCEDURE"):
		s.Kind, s.Spec = KindOther, true
		return
	case c.accept("MODULE"):
		s.Kind = KindModule
		if s.Name = c.name(); s.Name == "" {
			c.errf("expected the module name after MODULE, found %s", c.here())
		}
		c.expectEnd("MODULE " + s.Name)
		return
	}
	for _, kw := range ioKeywords {
		if c.is(kw) {
			p.io(c, s, kw)
			return
		}
	}
	if c.accept("END") {
		p.end(c, s, in)
		return
	}
	if ts := p.typeSpec(c); ts != "" {
		p.typeDecl(c, s, ts)
		return
	}
	switch {
	case c.is("TYPEIS("):
		s.Kind = KindOther // a SELECT TYPE guard
		return
	case c.is("TYPE"):
		s.Kind, s.Spec, in.openType = KindOther, true, true
		return
	case c.accept("DIMENSION"):
		p.dimension(c, s)
		return
	case c.accept("COMMON"):
		p.common(c, s)
		return
	case c.accept("CALL"):
		p.call(c, s)
		return
	case c.accept("RETURN"):
		s.Kind = KindReturn
		s.Value = c.expr("")
		c.expectEnd("RETURN")
		return
	case c.accept("STOP"), c.accept("ERRORSTOP"):
		s.Kind = KindStop
		s.Value = c.expr("")
		return
	case c.accept("CONTINUE"):
		s.Kind = KindContinue
		c.expectEnd("CONTINUE")
		return
	case c.accept("CONTAINS"):
		s.Kind = KindContains
		c.expectEnd("CONTAINS")
		return
	case c.accept("GOTO"):
		p.gotoStmt(c, s)
		return
	case c.is("IF("):
		p.ifStmt(c, s, cx)
		return
	case c.accept("ELSEIF"):
		s.Kind = KindElseIf
		if s.Cond = p.condition(c, "ELSE IF"); c.failed {
			return
		}
		if !c.accept("THEN") {
			c.errf("expected THEN after ELSE IF (...), found %s", c.here())
			return
		}
		s.Construct = c.name()
		c.expectEnd("ELSE IF (...) THEN")
		return
	case c.is("ELSEWHERE"):
		s.Kind = KindOther
		return
	case c.accept("ELSE"):
		s.Kind = KindElse
		s.Construct = c.name()
		c.expectEnd("ELSE")
		return
	case c.accept("DO"):
		p.do(c, s)
		return
	case c.is("SELECTCASE("):
		c.i += len("SELECTCASE")
		s.Kind = KindSelectCase
		s.Cond = p.condition(c, "SELECT CASE")
		c.expectEnd("SELECT CASE (...)")
		return
	case c.is("CASEDEFAULT"), c.is("CASE("):
		s.Kind = KindCase
		if !c.accept("CASEDEFAULT") {
			c.i += len("CASE")
			if c.i = c.group(c.i); c.i < 0 {
				c.i = c.end
				c.errf("unbalanced parentheses in CASE (...)")
				return
			}
		}
		s.Construct = c.name()
		c.expectEnd("CASE")
		return
	case c.accept("EXIT"):
		s.Kind = KindExit
		s.Construct = c.name()
		c.expectEnd("EXIT")
		return
	case c.accept("CYCLE"):
		s.Kind = KindCycle
		s.Construct = c.name()
		c.expectEnd("CYCLE")
		return
	case c.accept("ENTRY"):
		p.entry(c, s)
		return
	case c.is("FORMAT("):
		s.Kind = KindFormat
		return
	case c.is("INTERFACE"), c.is("ABSTRACTINTERFACE"):
		s.Kind, s.Spec, in.openIface = KindOther, true, true
		return
	}
	for _, kw := range attributeKeywords {
		if c.is(kw) && !c.is("POINTER(") {
			p.attribute(c, s, kw)
			return
		}
	}
	for _, k := range specKeywords {
		if c.is(k.kw) {
			s.Kind, s.Spec = k.kind, true
			p.specNames(c, s, k.kw)
			return
		}
	}
	s.Kind = KindOther
}

// lhs describes the left-hand side of an assignment.
type lhs struct {
	name     string
	stmtFunc bool // NAME(a, b, ...) with names as subscripts: may define a statement function
	eq       int  // where the '=' (or '=>') is
	value    int  // where the value starts
}

// assignment recognises v = e and v => e, where v is a name with any
// subscripts, substrings and components, and e has no comma outside
// brackets (which would make DO10I=1,N a DO statement).
func assignment(c *cur) (lhs, bool) {
	t := *c // a copy: looking ahead must not move c
	l := lhs{name: t.name()}
	if l.name == "" {
		return lhs{}, false
	}
	groups, simple := 0, true
	for more := true; more; {
		switch t.peek() {
		case '(', '[':
			k := t.group(t.i)
			if k < 0 {
				return lhs{}, false
			}
			groups++
			if groups == 1 && t.peek() == '(' {
				simple = namesOnly(&t, t.i+1, k-1)
			} else {
				simple = false
			}
			t.i = k
		case '%':
			t.i++
			if t.name() == "" {
				return lhs{}, false
			}
			simple = false
		default:
			more = false
		}
	}
	l.eq = t.i
	switch {
	case t.is("=>"):
		t.i += 2
	case t.is("=") && !t.is("=="):
		t.i++
	default:
		return lhs{}, false
	}
	l.value = t.i
	if t.topLevel(",") {
		return lhs{}, false
	}
	l.stmtFunc = simple && groups == 1
	return l, true
}

// namesOnly reports whether s[a:b] is a list of names, possibly empty.
func namesOnly(c *cur, a, b int) bool {
	t := *c
	t.i, t.end = a, b
	if !t.more() {
		return true
	}
	for {
		if t.name() == "" {
			return false
		}
		if !t.more() {
			return true
		}
		if !t.accept(",") {
			return false
		}
	}
}

// header parses a SUBROUTINE or FUNCTION statement with its prefixes
// (RECURSIVE, PURE, ELEMENTAL, a type). It reports false, leaving the
// cursor alone, if the statement is not one.
func (p *stmtParser) header(c *cur, s *Stmt, cx ctx, in *info) bool {
	start := c.i
	typed := ""
	for range 6 {
		if c.accept("RECURSIVE") || c.accept("PURE") || c.accept("ELEMENTAL") ||
			c.accept("IMPURE") || c.accept("NON_RECURSIVE") {
			continue
		}
		if typed == "" {
			save := c.i
			if typed = p.typeSpec(c); typed != "" {
				continue
			}
			c.i = save
		}
		break
	}
	switch {
	case c.is("SUBROUTINE") && typed == "":
		c.i += len("SUBROUTINE")
		s.Kind = KindSubroutine
		p.procedure(c, s, in, "SUBROUTINE")
		return true
	case c.is("FUNCTION"):
		kwEnd := c.i + len("FUNCTION")
		if typed != "" {
			// REAL FUNCTION F(X) or the declaration REAL FUNCTIONF(X)? In
			// free form the blank decides; in fixed form, where the unit
			// may start.
			sure := cx.headerOK || (p.free && c.n.gapAfter(kwEnd-1))
			if !sure || !looksLikeFunction(c, kwEnd) {
				c.i = start
				return false
			}
		}
		c.i = kwEnd
		s.Kind, s.TypeSpec = KindFunction, typed
		p.procedure(c, s, in, "FUNCTION")
		return true
	}
	c.i = start
	return false
}

// gapAfter reports whether blanks stood between s[i] and s[i+1].
func (n *norm) gapAfter(i int) bool {
	return i+1 < len(n.s) && n.at[i+1] > n.at[i]+1
}

// looksLikeFunction reports whether the statement from j on is the rest of
// a FUNCTION header: F(A, B) [RESULT(R)] [BIND(C)].
func looksLikeFunction(c *cur, j int) bool {
	t := *c
	t.i = j
	if t.name() == "" || t.peek() != '(' {
		return false
	}
	k := t.group(t.i)
	if k < 0 || !namesOnly(&t, t.i+1, k-1) {
		return false
	}
	t.i = k
	for t.more() {
		if !t.is("RESULT(") && !t.is("BIND(") {
			return false
		}
		for t.peek() != '(' {
			t.i++
		}
		t.i = t.group(t.i)
		if t.i < 0 {
			return false
		}
	}
	return true
}

// procedure parses the rest of a SUBROUTINE or FUNCTION header: the name,
// the dummy arguments, RESULT and BIND.
func (p *stmtParser) procedure(c *cur, s *Stmt, in *info, kw string) {
	if s.Name = c.name(); s.Name == "" {
		c.errf("expected the %s name, found %s", kw, c.here())
		return
	}
	what := kw + " " + s.Name
	in.args = []string{}
	switch {
	case c.accept("("):
		for !c.accept(")") {
			if len(in.args) > 0 && !c.accept(",") {
				c.errf("expected ',' or ')' in the dummy arguments of %s, found %s", what, c.here())
				return
			}
			a := "*" // an alternate return
			if !c.accept("*") {
				if a = c.name(); a == "" {
					c.errf("expected a dummy argument name in %s, found %s", what, c.here())
					return
				}
			}
			in.args = append(in.args, a)
		}
	case kw == "FUNCTION":
		c.errf("expected '(' and the dummy arguments after %s, found %s", what, c.here())
		return
	}
	for c.more() {
		if !(kw == "FUNCTION" && c.is("RESULT(")) && !c.is("BIND(") {
			c.expectEnd(what + "(...)")
			return
		}
		for c.peek() != '(' {
			c.i++
		}
		k := c.group(c.i)
		if k < 0 {
			c.errf("unbalanced parentheses in %s", what)
			return
		}
		c.i = k
	}
}

var typeKeywords = []struct{ kw, spelled string }{
	{"DOUBLEPRECISION", "DOUBLE PRECISION"},
	{"DOUBLECOMPLEX", "DOUBLE COMPLEX"},
	{"INTEGER", "INTEGER"},
	{"REAL", "REAL"},
	{"COMPLEX", "COMPLEX"},
	{"LOGICAL", "LOGICAL"},
	{"CHARACTER", "CHARACTER"},
	{"BYTE", "BYTE"},
}

// typeSpec reads a type with its kind or length selector ("REAL*8",
// "CHARACTER(LEN=*)", "TYPE(POINT)"); "" if there is none.
func (p *stmtParser) typeSpec(c *cur) string {
	for _, t := range typeKeywords {
		if c.accept(t.kw) {
			return t.spelled + p.selector(c)
		}
	}
	for _, kw := range []string{"TYPE", "CLASS"} {
		if c.is(kw + "(") {
			start := c.i
			c.i += len(kw)
			k := c.group(c.i)
			if k < 0 {
				c.errf("unbalanced parentheses in %s(...)", kw)
				return kw
			}
			c.i = k
			return string(c.n.u[start:k])
		}
	}
	return ""
}

// selector reads a kind or length selector: *8, *(N+1), (8), (KIND=8).
func (p *stmtParser) selector(c *cur) string {
	start := c.i
	switch {
	case c.is("*("):
		k := c.group(c.i + 1)
		if k < 0 {
			c.errf("unbalanced parentheses in the length selector")
			return ""
		}
		c.i = k
	case c.accept("*"):
		if _, ok := c.digits(); !ok {
			c.errf("expected a length after *, found %s", c.here())
			return ""
		}
	case c.is("("):
		k := c.group(c.i)
		if k < 0 {
			c.errf("unbalanced parentheses in the kind selector")
			return ""
		}
		c.i = k
	}
	return string(c.n.u[start:c.i])
}

// typeDecl parses a type declaration after its type.
func (p *stmtParser) typeDecl(c *cur, s *Stmt, ts string) {
	s.Kind, s.Spec, s.TypeSpec = KindTypeDecl, true, ts
	var dims []Bound
	if c.topLevel("::") {
		for c.accept(",") {
			if c.accept("DIMENSION") {
				if c.peek() != '(' {
					c.errf("expected '(' and the array bounds after DIMENSION, found %s", c.here())
					return
				}
				dims = p.bounds(c)
				s.Attrs = append(s.Attrs, "DIMENSION")
				continue
			}
			attr := c.name()
			if attr == "" {
				c.errf("expected an attribute in the %s declaration, found %s", ts, c.here())
				return
			}
			s.Attrs = append(s.Attrs, attr)
			if c.peek() == '(' {
				c.i = c.group(c.i)
				if c.i < 0 {
					c.i = c.end
					c.errf("unbalanced parentheses in the attributes")
					return
				}
			}
		}
		if !c.accept("::") {
			c.errf("expected :: after the attributes of the %s declaration, found %s", ts, c.here())
			return
		}
	} else {
		c.accept(",") // F77 allows CHARACTER*8, A
	}
	s.Decl = p.entities(c, dims, ts+" declaration", true)
}

// entities reads a list of declared names with their bounds. With init, an
// entity may have a length (*8) and an initial value (= e, => e, /values/).
func (p *stmtParser) entities(c *cur, dims []Bound, what string, init bool) []Entity {
	var out []Entity
	for {
		e := Entity{Pos: c.pos(), Dims: slices.Clone(dims)}
		if e.Name = c.name(); e.Name == "" {
			c.errf("expected a name in the %s, found %s", what, c.here())
			return out
		}
		if c.peek() == '(' {
			e.Dims = p.bounds(c)
		}
		if init {
			if c.accept("*") {
				if c.peek() == '(' {
					if c.i = c.group(c.i); c.i < 0 {
						c.i = c.end
						c.errf("unbalanced parentheses in the length of %s", e.Name)
					}
				} else if _, ok := c.digits(); !ok {
					c.errf("expected a length after %s*, found %s", e.Name, c.here())
				}
			}
			switch {
			case c.accept("=>"), c.accept("="):
				e.Init = true
				if c.expr(",").Text == "" {
					c.errf("expected the initial value of %s, found %s", e.Name, c.here())
				}
			case c.accept("/"):
				e.Init = true
				c.expr("/")
				if !c.accept("/") {
					c.errf("expected '/' to end the initial values of %s", e.Name)
				}
			}
		}
		if c.failed {
			return out
		}
		out = append(out, e)
		if !c.more() {
			return out
		}
		if !c.accept(",") {
			c.errf("expected ',' or the end of the statement in the %s, found %s", what, c.here())
			return out
		}
	}
}

// bounds reads array bounds in parentheses: (10, 0:N, *, :).
func (p *stmtParser) bounds(c *cur) []Bound {
	c.i++ // (
	var out []Bound
	for {
		var b Bound
		e := c.expr(",:")
		if c.peek() == ':' {
			colon := c.pos()
			c.i++
			b.Lo, b.Hi = e, c.expr(",")
			if b.Hi.Text == "" {
				b.Hi = Expr{Text: ":", Pos: colon}
			}
		} else {
			if e.Text == "" {
				c.errf("expected an array bound, found %s", c.here())
				return out
			}
			b.Hi = e
		}
		out = append(out, b)
		if c.accept(",") {
			continue
		}
		if c.accept(")") {
			return out
		}
		c.errf("expected ',' or ')' in the array bounds, found %s", c.here())
		return out
	}
}

// args reads an argument list in parentheses; what names it for errors.
func (p *stmtParser) args(c *cur, what string) []Expr {
	c.i++ // (
	if c.accept(")") {
		return nil
	}
	var out []Expr
	for {
		e := c.expr(",")
		if e.Text == "" {
			c.errf("expected an argument in %s, found %s", what, c.here())
			return out
		}
		out = append(out, e)
		if c.accept(",") {
			continue
		}
		if c.accept(")") {
			return out
		}
		c.errf("expected ',' or ')' in %s, found %s", what, c.here())
		return out
	}
}

func (p *stmtParser) dimension(c *cur, s *Stmt) {
	s.Kind, s.Spec = KindDimension, true
	c.accept("::")
	s.Decl = p.entities(c, nil, "DIMENSION statement", false)
	for _, e := range s.Decl {
		if e.Dims == nil {
			c.errAt(e.Pos, "DIMENSION %s needs array bounds", e.Name)
		}
	}
}

// common parses COMMON [/name/] list [[,] /name/ list]...
func (p *stmtParser) common(c *cur, s *Stmt) {
	s.Kind, s.Spec = KindCommon, true
	var blocks []CommonBlock
	for c.more() {
		if c.accept("/") {
			name := c.name()
			if !c.accept("/") {
				c.errf("expected '/' after the COMMON block name, found %s", c.here())
				return
			}
			blocks = append(blocks, CommonBlock{Name: name})
		} else if len(blocks) == 0 {
			blocks = append(blocks, CommonBlock{})
		}
		b := &blocks[len(blocks)-1]
		e := Entity{Pos: c.pos()}
		if e.Name = c.name(); e.Name == "" {
			c.errf("expected a variable name in COMMON /%s/, found %s", b.Name, c.here())
			return
		}
		if c.peek() == '(' {
			e.Dims = p.bounds(c)
			if c.failed {
				return
			}
		}
		b.Vars = append(b.Vars, e)
		if c.accept(",") || c.peek() == '/' {
			continue
		}
		if c.more() {
			c.errf("expected ',' or '/' in COMMON, found %s", c.here())
			return
		}
	}
	if len(blocks) == 0 {
		c.errf("COMMON lists no variables")
	}
	s.Common = blocks
}

func (p *stmtParser) call(c *cur, s *Stmt) {
	s.Kind = KindCall
	name := c.name()
	if name == "" {
		c.errf("expected the subroutine name after CALL, found %s", c.here())
		return
	}
	for c.accept("%") { // a type-bound procedure: CALL X%F()
		part := c.name()
		if part == "" {
			c.errf("expected a component name after %%, found %s", c.here())
			return
		}
		name += "%" + part
	}
	s.Call = &CallStmt{Name: name}
	if c.peek() == '(' {
		s.Call.Args = p.args(c, "the arguments of CALL "+name)
	}
	for _, a := range s.Call.Args {
		// An alternate return, *10.
		if l, err := strconv.Atoi(strings.TrimPrefix(a.Text, "*")); err == nil && strings.HasPrefix(a.Text, "*") {
			s.Targets = append(s.Targets, l)
		}
	}
	c.expectEnd("CALL " + name + "(...)")
}

// do parses a DO statement after DO.
func (p *stmtParser) do(c *cur, s *Stmt) {
	s.Kind = KindDo
	d := &DoStmt{}
	s.Do = d
	if isDigit(c.peek()) {
		at := c.pos()
		n, ok := c.digits()
		if !ok || n == 0 || n > 99999 {
			c.errAt(at, "bad statement label in DO")
			return
		}
		d.TermLabel = n
		c.accept(",")
	}
	if !c.more() {
		return // DO or DO 10 without loop control
	}
	save := c.i
	if v := c.name(); v != "" && c.is("=") && !c.is("==") {
		c.i++
		d.Var = v
		var parts []Expr
		for {
			e := c.expr(",")
			if e.Text == "" {
				c.errf("expected an expression in the loop control of DO %s, found %s", v, c.here())
				return
			}
			parts = append(parts, e)
			if !c.accept(",") {
				break
			}
		}
		switch {
		case c.more():
			c.errf("unexpected %s in the loop control of DO %s", c.here(), v)
		case len(parts) < 2:
			c.errf("DO %s = %s needs an upper bound: DO %s = first, last[, step]", v, parts[0].Text, v)
		case len(parts) > 3:
			c.errAt(parts[3].Pos, "too many expressions in the loop control of DO %s: DO %s = first, last[, step]", v, v)
		default:
			d.Lo, d.Hi = parts[0], parts[1]
			if len(parts) == 3 {
				d.Step = parts[2]
			}
		}
		return
	}
	c.i = save
	for _, kw := range []string{"WHILE", "CONCURRENT"} {
		if !c.is(kw + "(") {
			continue
		}
		c.i += len(kw)
		open := c.i
		k := c.group(open)
		if k < 0 {
			c.errf("unbalanced parentheses in DO %s", kw)
			return
		}
		d.While = kw == "WHILE"
		d.Cond = c.n.expr(open+1, k-1)
		if d.Cond.Text == "" {
			c.errf("empty condition in DO %s", kw)
			return
		}
		c.i = k
		c.expectEnd("DO " + kw + " (...)")
		return
	}
	c.errf("malformed DO statement: expected a loop variable, WHILE or the end of the statement, found %s", c.here())
}

// ifStmt parses IF (...) THEN, a logical IF and an arithmetic IF.
func (p *stmtParser) ifStmt(c *cur, s *Stmt, cx ctx) {
	s.Kind = KindOther
	c.i += len("IF")
	if s.Cond = p.condition(c, "IF"); c.failed {
		return
	}
	switch {
	case !c.more():
		c.errf("IF (...) must be followed by THEN or a statement")
	case c.is("THEN") && c.i+len("THEN") == c.end:
		s.Kind = KindIf
	case isDigit(c.peek()):
		s.Kind = KindArithmeticIf
		s.Targets = p.labels(c, "arithmetic IF")
		c.expectEnd("IF (...) l1, l2, l3")
	default:
		s.Kind = KindLogicalIf
		at := c.pos()
		inner := &Stmt{Pos: at, Text: c.n.textFrom(c.i), FirstLine: at.Line, LastLine: s.LastLine}
		s.Inner = inner
		var in info
		p.stmt(c, inner, ctx{arrays: cx.arrays, hasUse: cx.hasUse}, &in)
		switch inner.Kind {
		case KindDo, KindIf, KindElseIf, KindElse, KindEndIf, KindEndDo, KindEnd, KindLogicalIf,
			KindProgram, KindSubroutine, KindFunction, KindBlockData, KindModule, KindContains, KindFormat,
			KindSelectCase, KindCase, KindEndSelect, KindEntry:
			c.errAt(at, "%s statements are not allowed in a logical IF", inner.Kind)
		default:
			if inner.Spec {
				c.errAt(at, "%s statements are not allowed in a logical IF", inner.Kind)
			}
		}
	}
}

// condition reads the parenthesised expression at the cursor (the
// condition of an IF, the selector of a SELECT CASE) and returns what is
// inside the parentheses.
func (p *stmtParser) condition(c *cur, what string) Expr {
	if c.peek() != '(' {
		c.errf("expected '(' after %s, found %s", what, c.here())
		return Expr{}
	}
	k := c.group(c.i)
	switch {
	case k < 0:
		c.errf("unbalanced parentheses in the %s condition", what)
		return Expr{}
	case k == c.i+2:
		c.errf("empty %s condition", what)
		return Expr{}
	}
	e := c.n.expr(c.i+1, k-1)
	c.i = k
	return e
}

// labels reads a list of statement labels separated by commas: 10, 20, 30.
func (p *stmtParser) labels(c *cur, what string) []int {
	var out []int
	for {
		at := c.pos()
		l, ok := c.digits()
		if !ok || l == 0 || l > 99999 {
			c.errAt(at, "expected a statement label in the %s, found %s", what, c.here())
			return out
		}
		out = append(out, l)
		if !c.accept(",") {
			return out
		}
	}
}

// gotoStmt parses the rest of GO TO l, GO TO (l1, l2, ...) [,] index and
// GO TO var [[,] (l1, l2, ...)].
func (p *stmtParser) gotoStmt(c *cur, s *Stmt) {
	s.Kind = KindGoto
	switch {
	case isDigit(c.peek()):
		s.Targets = p.labels(c, "GO TO")
		if len(s.Targets) > 1 {
			c.errf("GO TO takes one statement label")
		}
	case c.accept("("):
		s.Targets = p.labels(c, "computed GO TO")
		if !c.accept(")") {
			c.errf("expected ')' after the labels of the computed GO TO, found %s", c.here())
			return
		}
		c.accept(",")
		if s.Value = c.expr(""); s.Value.Text == "" {
			c.errf("expected the index of the computed GO TO, found %s", c.here())
		}
	default:
		// An assigned GO TO: the variable, then the labels it may hold.
		at := c.i
		if c.name() == "" {
			c.errf("expected a statement label after GO TO, found %s", c.here())
			return
		}
		s.Value = c.n.expr(at, c.i)
		c.accept(",")
		if c.accept("(") {
			s.Targets = p.labels(c, "assigned GO TO")
			if !c.accept(")") {
				c.errf("expected ')' after the labels of the assigned GO TO, found %s", c.here())
				return
			}
		}
	}
	c.expectEnd("GO TO")
}

// io parses an I/O statement: the control list in parentheses (or READ's
// and PRINT's format, REWIND's unit, without them) and the input or
// output list.
func (p *stmtParser) io(c *cur, s *Stmt, verb string) {
	s.Kind = KindIO
	io := &IOStmt{Verb: verb}
	s.IO = io
	c.i += len(verb)
	switch {
	case c.peek() == '(' && verb != "PRINT":
		k := c.group(c.i)
		if k < 0 {
			c.errf("unbalanced parentheses in the control list of %s", verb)
			return
		}
		t := *c
		t.i, t.end = c.i+1, k-1
		for n := 0; t.more(); n++ {
			spec := IOSpec{}
			save := t.i
			if key := t.name(); key != "" && t.is("=") && !t.is("==") {
				t.i++
				spec.Key = key
			} else {
				t.i = save
				spec.Key = positionalSpec(verb, n)
			}
			spec.Value = t.expr(",")
			io.Specs = append(io.Specs, spec)
			if !t.accept(",") && t.more() {
				t.errf("expected ',' in the control list of %s, found %s", verb, t.here())
			}
		}
		if t.failed { // reported: abandon the statement
			c.failed, c.i = true, c.end
			return
		}
		c.i = k
		c.accept(",") // WRITE (6, *), X: a comma some compilers accept
	case c.more():
		key := "FMT"
		if verb != "READ" && verb != "PRINT" {
			key = "UNIT"
		}
		io.Specs = []IOSpec{{Key: key, Value: c.expr(",")}}
		if c.more() && !c.accept(",") {
			c.errf("expected ',' after the format of %s, found %s", verb, c.here())
			return
		}
	}
	for c.more() {
		e := c.expr(",")
		if e.Text == "" {
			c.errf("expected an item in the list of %s, found %s", verb, c.here())
			return
		}
		io.Items = append(io.Items, e)
		if c.more() && !c.accept(",") {
			c.errf("expected ',' in the list of %s, found %s", verb, c.here())
			return
		}
	}
	for _, spec := range io.Specs {
		if spec.Key != "ERR" && spec.Key != "END" && spec.Key != "EOR" {
			continue
		}
		if l, err := strconv.Atoi(spec.Value.Text); err == nil && l > 0 && l <= 99999 {
			s.Targets = append(s.Targets, l)
		}
	}
}

// positionalSpec is the keyword an item without one stands for at place n
// of verb's control list: the unit, then (READ and WRITE) the format.
func positionalSpec(verb string, n int) string {
	if n == 1 && (verb == "READ" || verb == "WRITE") {
		return "FMT"
	}
	if n == 0 {
		return "UNIT"
	}
	return ""
}

// entry parses the rest of ENTRY name [(args)].
func (p *stmtParser) entry(c *cur, s *Stmt) {
	s.Kind = KindEntry
	if s.Name = c.name(); s.Name == "" {
		c.errf("expected the entry name after ENTRY, found %s", c.here())
		return
	}
	if c.accept("(") && !c.accept(")") {
		for {
			a := "*"
			if !c.accept("*") {
				if a = c.name(); a == "" {
					c.errf("expected a dummy argument name in ENTRY %s, found %s", s.Name, c.here())
					return
				}
			}
			s.Names = append(s.Names, a)
			if c.accept(")") {
				break
			}
			if !c.accept(",") {
				c.errf("expected ',' or ')' in the dummy arguments of ENTRY %s, found %s", s.Name, c.here())
				return
			}
		}
	}
	c.expectEnd("ENTRY " + s.Name + "(...)")
}

// attribute parses an attribute statement: ALLOCATABLE [::] A(:), B.
func (p *stmtParser) attribute(c *cur, s *Stmt, kw string) {
	s.Kind, s.Spec, s.Attrs = KindAttribute, true, []string{kw}
	c.i += len(kw)
	if c.peek() == '(' { // INTENT(IN)
		if c.i = c.group(c.i); c.i < 0 {
			c.i = c.end
			c.errf("unbalanced parentheses after %s", kw)
			return
		}
	}
	c.accept("::")
	s.Decl = p.entities(c, nil, kw+" statement", false)
}

// specNames records the names a PARAMETER, DATA, SAVE, EQUIVALENCE,
// EXTERNAL or INTRINSIC statement declares (Stmt.Names), and the module a
// USE names (Stmt.Name). The other specification statements of
// specKeywords are kept whole.
func (p *stmtParser) specNames(c *cur, s *Stmt, kw string) {
	c.i += len(kw)
	switch kw {
	case "USE":
		// USE [[, INTRINSIC] ::] NAME [, ONLY: ...]
		if c.accept(",") {
			c.name()
		}
		c.accept("::")
		s.Name = c.name()
	case "PARAMETER":
		// PARAMETER (N = 10, M = N*2)
		if c.peek() != '(' {
			return // DEC's PARAMETER N = 10, without parentheses
		}
		t := *c
		t.i, t.end = c.i+1, c.group(c.i)-1
		for t.more() {
			if name := t.name(); name != "" {
				s.Names = append(s.Names, name)
			}
			t.expr(",")
			t.accept(",")
		}
	case "DATA":
		// DATA X, A(1) /1.0, 2.0/, (B(I), I = 1, 3) /3*0/
		for c.more() {
			for c.more() && c.peek() != '/' {
				s.Names = append(s.Names, dataObject(c.expr(",/"))...)
				c.accept(",")
			}
			c.accept("/")
			c.expr("/")
			c.accept("/")
			c.accept(",")
		}
	case "SAVE", "EXTERNAL", "INTRINSIC":
		c.accept("::")
		for c.more() {
			switch name := c.name(); {
			case name != "":
				s.Names = append(s.Names, name)
			case c.accept("/"):
				s.Names = append(s.Names, "/"+c.name()+"/")
				c.accept("/")
			default:
				return
			}
			c.accept(",")
		}
	case "EQUIVALENCE":
		// EQUIVALENCE (A, B(2)), (C, D)
		for c.accept("(") {
			for c.more() && !c.accept(")") {
				if e := c.expr(","); len(e.Names) > 0 {
					s.Names = append(s.Names, e.Names[0].Name)
				}
				c.accept(",")
			}
			c.accept(",")
		}
	}
}

// dataObject returns the variable a DATA object initialises: the name of
// X or A(1), the arrays of an implied DO ((B(I), I = 1, 3)).
func dataObject(e Expr) []string {
	if len(e.Names) == 0 {
		return nil
	}
	if !strings.HasPrefix(e.Text, "(") {
		return []string{e.Names[0].Name}
	}
	var out []string
	for _, n := range e.Names {
		if n.Call {
			out = append(out, n.Name)
		}
	}
	return out
}

// end parses the statements starting with END (after it), except END FILE.
func (p *stmtParser) end(c *cur, s *Stmt, in *info) {
	units := []struct {
		kw   string
		kind StmtKind
	}{
		{"PROGRAM", KindProgram},
		{"SUBROUTINE", KindSubroutine},
		{"FUNCTION", KindFunction},
		{"MODULE", KindModule},
		{"BLOCKDATA", KindBlockData},
	}
	s.Kind, in.endOf = KindEnd, KindOther
	if !c.more() {
		return
	}
	for _, u := range units {
		if c.accept(u.kw) {
			in.endOf = u.kind
			s.Name = c.name()
			c.expectEnd("END " + u.kind.String() + " " + s.Name)
			return
		}
	}
	switch {
	case c.accept("DO"):
		s.Kind = KindEndDo
		s.Construct = c.name()
		c.expectEnd("END DO")
	case c.accept("IF"):
		s.Kind = KindEndIf
		s.Construct = c.name()
		c.expectEnd("END IF")
	case c.accept("SELECT"):
		s.Kind = KindEndSelect
		s.Construct = c.name()
		c.expectEnd("END SELECT")
	case c.is("INTERFACE"):
		s.Kind, s.Spec, in.closeIface = KindOther, true, true
	case c.is("TYPE"):
		s.Kind, s.Spec, in.closeType = KindOther, true, true
	case c.is("ENUM"), c.is("STRUCTURE"), c.is("UNION"), c.is("MAP"):
		s.Kind, s.Spec = KindOther, true
	default:
		// END SELECT, END WHERE, END FORALL, END ASSOCIATE, END BLOCK, ...
		s.Kind = KindOther
	}
}
