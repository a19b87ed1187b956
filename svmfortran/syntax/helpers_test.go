package syntax

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Helpers shared by the tests.

// fixed joins lines into a fixed-form source; "|" stands for column 7, so
// "|X = 1" is "      X = 1" and "10|CONTINUE" is "10    CONTINUE".
func fixed(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		if label, rest, ok := strings.Cut(l, "|"); ok {
			l = fmt.Sprintf("%-6s%s", label, rest)
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// textOnly is e without its position and names, for comparisons.
func textOnly(e Expr) Expr { return Expr{Text: e.Text} }

func free(lines ...string) string {
	return strings.Join(lines, "\n") + "\n"
}

var withDirectives = Options{Directives: true}

// parseOK parses src and requires that there be no errors (warnings are
// allowed).
func parseOK(t *testing.T, name, src string, opts Options) *File {
	t.Helper()
	f, diags := Parse(name, []byte(src), opts)
	require.Empty(t, errorsOnly(diags), "source:\n%s", src)
	return f
}

func errorsOnly(diags []Diagnostic) []string {
	var out []string
	for _, d := range diags {
		if d.Severity == Error {
			out = append(out, d.String())
		}
	}
	return out
}

func strs(diags []Diagnostic) []string {
	var out []string
	for _, d := range diags {
		out = append(out, d.String())
	}
	return out
}

// only returns the one unit of f.
func only(t *testing.T, f *File) *Unit {
	t.Helper()
	require.Len(t, f.Units, 1)
	return f.Units[0]
}

// body parses the statements as the body of a fixed-form subroutine and
// returns them without the header and END.
func body(t *testing.T, lines ...string) []*Stmt {
	t.Helper()
	src := fixed(append(append([]string{"|SUBROUTINE S"}, lines...), "|END")...)
	u := only(t, parseOK(t, "s.f", src, withDirectives))
	require.GreaterOrEqual(t, len(u.Stmts), 2)
	return u.Stmts[1 : len(u.Stmts)-1]
}

// one parses a single fixed-form statement in a subroutine.
func one(t *testing.T, line string) *Stmt {
	t.Helper()
	ss := body(t, line)
	require.Len(t, ss, 1, "statements of %q", line)
	return ss[0]
}

// kinds lists the kinds of statements.
func kinds(ss []*Stmt) []StmtKind {
	var out []StmtKind
	for _, s := range ss {
		out = append(out, s.Kind)
	}
	return out
}

func texts(es []Expr) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Text)
	}
	return out
}

func names(es []Entity) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

// dims renders an entity's bounds as "lo:hi" (or "hi") strings.
func dims(e Entity) []string {
	var out []string
	for _, b := range e.Dims {
		if b.Lo.Text == "" {
			out = append(out, b.Hi.Text)
		} else {
			out = append(out, b.Lo.Text+":"+b.Hi.Text)
		}
	}
	return out
}
