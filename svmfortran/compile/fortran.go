package compile

import (
	"fmt"
	"strconv"
	"strings"
)

// The generated statements are built as a small tree of Fortran
// statements, which the emitter prints in the source's form (generated
// code is never glued from fragments of statements). Expressions are text:
// the user's are copied as written, the generator's come from the helpers
// below.

// fstmt is a generated statement.
type fstmt interface {
	// lines appends the statement's lines, indented by depth blocks.
	lines(out []fline, depth int) []fline
}

// fline is one printed line of generated code.
type fline struct {
	label int
	text  string
}

// simple is a statement on one line.
type simple struct {
	label int
	text  string
}

func (s simple) lines(out []fline, depth int) []fline {
	return append(out, fline{s.label, indent(depth) + s.text})
}

// ifBlock is IF (cond) THEN ... [ELSE ...] END IF; with one simple
// statement and no ELSE, a logical IF.
type ifBlock struct {
	label int
	cond  string
	then  []fstmt
	els   []fstmt
}

func (b ifBlock) lines(out []fline, depth int) []fline {
	if s, ok := only(b.then); ok && len(b.els) == 0 && s.label == 0 {
		return append(out, fline{b.label, indent(depth) + "if (" + b.cond + ") " + s.text})
	}
	out = append(out, fline{b.label, indent(depth) + "if (" + b.cond + ") then"})
	out = block(out, b.then, depth+1)
	if len(b.els) > 0 {
		out = append(out, fline{0, indent(depth) + "else"})
		out = block(out, b.els, depth+1)
	}
	return append(out, fline{0, indent(depth) + "end if"})
}

// doBlock is DO header ... END DO.
type doBlock struct {
	label  int
	header string // what follows DO: "svm_i = 1, n", "while (...)" or ""
	body   []fstmt
}

func (b doBlock) lines(out []fline, depth int) []fline {
	out = append(out, fline{b.label, strings.TrimSpace(indent(depth) + "do " + b.header)})
	out = block(out, b.body, depth+1)
	return append(out, fline{0, indent(depth) + "end do"})
}

// selectBlock is SELECT CASE (selector) with its cases and CASE DEFAULT.
type selectBlock struct {
	label    int
	selector string
	cases    []caseArm
	def      []fstmt
}

type caseArm struct {
	value string
	body  []fstmt
}

func (b selectBlock) lines(out []fline, depth int) []fline {
	out = append(out, fline{b.label, indent(depth) + "select case (" + b.selector + ")"})
	for _, c := range b.cases {
		out = append(out, fline{0, indent(depth) + "case (" + c.value + ")"})
		out = block(out, c.body, depth+1)
	}
	if len(b.def) > 0 {
		out = append(out, fline{0, indent(depth) + "case default"})
		out = block(out, b.def, depth+1)
	}
	return append(out, fline{0, indent(depth) + "end select"})
}

// nested is statements indented one block deeper than those around them:
// the start of a block whose end the generator writes later.
type nested []fstmt

func (n nested) lines(out []fline, depth int) []fline { return block(out, n, depth+1) }

func block(out []fline, body []fstmt, depth int) []fline {
	for _, s := range body {
		out = s.lines(out, depth)
	}
	return out
}

func only(body []fstmt) (simple, bool) {
	if len(body) != 1 {
		return simple{}, false
	}
	s, ok := body[0].(simple)
	return s, ok
}

func indent(depth int) string { return strings.Repeat("  ", depth) }

// The statements the generator writes most.

func stmtf(format string, args ...any) fstmt { return simple{text: fmt.Sprintf(format, args...)} }

func callf(name string, args ...string) fstmt {
	return simple{text: "call " + name + "(" + strings.Join(args, ", ") + ")"}
}

func assign(lhs, rhs string) fstmt { return simple{text: lhs + " = " + rhs} }

func gotoLabel(l int) fstmt { return simple{text: "goto " + strconv.Itoa(l)} }

func continueAt(l int) fstmt { return simple{label: l, text: "continue"} }

func ifThen(cond string, then ...fstmt) fstmt { return ifBlock{cond: cond, then: then} }

// labelled gives the first line of s the label l (0: none).
func labelled(l int, s fstmt) fstmt {
	if l == 0 {
		return s
	}
	switch s := s.(type) {
	case simple:
		s.label = l
		return s
	case ifBlock:
		s.label = l
		return s
	case doBlock:
		s.label = l
		return s
	case selectBlock:
		s.label = l
		return s
	}
	panic(fmt.Sprintf("labelled: %T", s))
}

// list writes Fortran array constructor items: [a, b].
func list(items []string) string { return "[" + strings.Join(items, ", ") + "]" }

// paren parenthesises a user expression that is copied into a larger one.
func paren(expr string) string { return "(" + expr + ")" }
