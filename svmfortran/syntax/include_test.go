package syntax

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reader serves INCLUDE files from a map and counts the reads.
type reader struct {
	files map[string]string
	reads []string
}

func (r *reader) read(name string) ([]byte, error) {
	r.reads = append(r.reads, name)
	src, ok := r.files[name]
	if !ok {
		return nil, fmt.Errorf("open %s: %w", name, fs.ErrNotExist)
	}
	return []byte(src), nil
}

func TestInclude(t *testing.T) {
	r := &reader{files: map[string]string{
		"common.inc": fixed(
			"C the common block",
			"|INTEGER N",
			"|COMMON /C/ N, A(100)",
			"|INCLUDE 'params.inc'",
		),
		"params.inc": fixed("|PARAMETER (M = 10)"),
	}}
	src := fixed(
		"|SUBROUTINE S",
		"|INCLUDE 'common.inc'",
		"|A(1) = N",
		"|END",
	)
	f := parseOK(t, "s.f", src, Options{ReadInclude: r.read})
	u := only(t, f)
	require.Equal(t, []StmtKind{KindSubroutine, KindInclude, KindAssignment, KindEnd}, kinds(u.Stmts))
	inc := u.Stmts[1]
	assert.Equal(t, "common.inc", inc.Name)
	assert.Equal(t, "INCLUDE 'common.inc'", inc.Text)
	assert.Equal(t, 2, inc.FirstLine)
	assert.True(t, inc.Spec)
	assert.Equal(t, []string{"C the common block", "      INTEGER N", "      COMMON /C/ N, A(100)", "      INCLUDE 'params.inc'"}, inc.IncludedLines)
	require.Equal(t, []StmtKind{KindTypeDecl, KindCommon, KindInclude}, kinds(inc.Included))
	assert.Equal(t, Pos{"common.inc", 3, 7}, inc.Included[1].Pos)
	assert.Equal(t, 3, inc.Included[1].FirstLine)
	nested := inc.Included[2]
	assert.Equal(t, "params.inc", nested.Name)
	require.Equal(t, []StmtKind{KindParameter}, kinds(nested.Included))
	assert.Equal(t, Pos{"params.inc", 1, 7}, nested.Included[0].Pos)
	// A is an array from the INCLUDE file, so A(1) = N is executable.
	assert.Equal(t, 2, u.FirstExecutable())
	assert.Equal(t, []string{"common.inc", "params.inc"}, r.reads)
}

func TestIncludeFreeForm(t *testing.T) {
	r := &reader{files: map[string]string{"decl.inc": free("integer :: n ! count", "real :: x; real :: y")}}
	src := free("subroutine s", `  include "decl.inc"  ! declarations`, "  n = 1", "end")
	u := only(t, parseOK(t, "s.f90", src, Options{ReadInclude: r.read}))
	require.Equal(t, KindInclude, u.Stmts[1].Kind)
	assert.Equal(t, []StmtKind{KindTypeDecl, KindTypeDecl, KindTypeDecl}, kinds(u.Stmts[1].Included))
}

// An INCLUDE file may hold an interface block, procedures and all.
func TestIncludeInterface(t *testing.T) {
	r := &reader{files: map[string]string{"iface.inc": free(
		"interface",
		"  subroutine ext(a)",
		"    real a(*)",
		"  end subroutine",
		"end interface",
	)}}
	src := free("subroutine s", "  include 'iface.inc'", "  call ext(x)", "end")
	u := only(t, parseOK(t, "s.f90", src, Options{ReadInclude: r.read}))
	assert.Equal(t, []StmtKind{KindSubroutine, KindInclude, KindCall, KindEnd}, kinds(u.Stmts))
	assert.True(t, u.Stmts[1].Spec)
	assert.Equal(t, 2, u.FirstExecutable())
}

func TestIncludeErrors(t *testing.T) {
	r := &reader{files: map[string]string{
		"a.inc":    fixed("|INCLUDE 'b.inc'"),
		"b.inc":    fixed("|INCLUDE 'a.inc'"),
		"self.inc": fixed("|X = 1", "|INCLUDE 'self.inc'"),
		"unit.inc": fixed("|SUBROUTINE T", "|END"),
		"bad.inc":  fixed("|CALL F(", "|PRINT *, 'x"),
	}}
	tests := []struct {
		name string
		line string
		read func(string) ([]byte, error)
		want []string
	}{
		{"no reader", "|INCLUDE 'x.inc'", nil,
			[]string{`s.f:2:7: error: INCLUDE "x.inc": INCLUDE lines are not allowed here (no include reader)`}},
		{"missing file", "|INCLUDE 'missing.inc'", r.read,
			[]string{`s.f:2:7: error: cannot read INCLUDE file "missing.inc": open missing.inc: file does not exist`}},
		{"cycle", "|INCLUDE 'a.inc'", r.read,
			[]string{`b.inc:1:7: error: INCLUDE "a.inc": include cycle s.f -> a.inc -> b.inc -> a.inc`}},
		{"self", "|INCLUDE 'self.inc'", r.read,
			[]string{`self.inc:2:7: error: INCLUDE "self.inc": include cycle s.f -> self.inc -> self.inc`}},
		{"including the including file", "|INCLUDE 's.f'", r.read,
			[]string{`s.f:2:7: error: INCLUDE "s.f": include cycle s.f -> s.f`}},
		{"program units in an INCLUDE file", "|INCLUDE 'unit.inc'", r.read,
			[]string{
				`unit.inc:1:7: error: SUBROUTINE statement in INCLUDE file "unit.inc": program units and procedures cannot start or end in an INCLUDE file`,
				`unit.inc:2:7: error: END statement in INCLUDE file "unit.inc": program units and procedures cannot start or end in an INCLUDE file`,
			}},
		{"errors in an INCLUDE file", "|INCLUDE 'bad.inc'", r.read,
			[]string{
				"bad.inc:1:14: error: expected an argument in the arguments of CALL F, found end of statement",
				"bad.inc:2:16: error: unterminated character constant",
			}},
		{"INCLUDE with a label", "10|INCLUDE 'x.inc'", func(string) ([]byte, error) { return nil, nil },
			[]string{"s.f:2:1: error: an INCLUDE line cannot have a label"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := fixed("|SUBROUTINE S", tt.line, "|END")
			f, diags := Parse("s.f", []byte(src), Options{ReadInclude: tt.read})
			assert.Equal(t, tt.want, strs(diags))
			u := only(t, f)
			require.Len(t, u.Stmts, 3, "the INCLUDE statement stays")
			assert.Equal(t, KindInclude, u.Stmts[1].Kind)
		})
	}
}

func TestIncludeDepth(t *testing.T) {
	// inc0 includes inc1 includes ... : 16 levels are fine, 17 are not.
	read := func(name string) ([]byte, error) {
		var n int
		if _, err := fmt.Sscanf(name, "inc%d", &n); err != nil {
			return nil, errors.New("bad name")
		}
		return []byte(fixed(fmt.Sprintf("|INCLUDE 'inc%d'", n+1))), nil
	}
	_, diags := Parse("s.f", []byte(fixed("|SUBROUTINE S", "|INCLUDE 'inc1'", "|END")), Options{ReadInclude: read})
	require.Len(t, diags, 1)
	assert.Equal(t, `inc16:1:7: error: INCLUDE "inc17": INCLUDE files nested more than 16 deep`, diags[0].String())
}

// A tree of INCLUDEs that reads file after file is cut off.
func TestIncludeBudget(t *testing.T) {
	reads := 0
	read := func(name string) ([]byte, error) {
		reads++
		return []byte(fixed("|INCLUDE '"+name+"a'", "|INCLUDE '"+name+"b'")), nil
	}
	_, diags := Parse("s.f", []byte(fixed("|SUBROUTINE S", "|INCLUDE 'x'", "|END")), Options{ReadInclude: read})
	assert.Equal(t, maxIncludes, reads)
	require.Len(t, diags, maxDiagnostics+1)
	assert.Contains(t, diags[0].Msg, "more than 1000 INCLUDE files read")
	assert.Contains(t, diags[maxDiagnostics].Msg, "too many errors")
}
