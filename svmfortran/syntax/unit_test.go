package syntax

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnits(t *testing.T) {
	src := fixed(
		"C leading comment",
		"|X = 1",
		"|END",
		"|SUBROUTINE S(A, B)",
		"|END",
		"|INTEGER FUNCTION F(N)",
		"|F = N",
		"|END FUNCTION F",
		"|BLOCK DATA BD",
		"|COMMON /C/ X",
		"|END BLOCK DATA",
		"|MODULE M",
		"|END MODULE",
	)
	f := parseOK(t, "u.f", src, Options{})
	require.Len(t, f.Units, 5)
	type unit struct {
		kind  UnitKind
		name  string
		args  []string
		pos   Pos
		kinds []StmtKind
	}
	var got []unit
	for _, u := range f.Units {
		got = append(got, unit{u.Kind, u.Name, u.Args, u.Pos, kinds(u.Stmts)})
	}
	assert.Equal(t, []unit{
		{MainProgram, "", nil, Pos{"u.f", 2, 7}, []StmtKind{KindAssignment, KindEnd}},
		{Subroutine, "S", []string{"A", "B"}, Pos{"u.f", 4, 7}, []StmtKind{KindSubroutine, KindEnd}},
		{Function, "F", []string{"N"}, Pos{"u.f", 6, 7}, []StmtKind{KindFunction, KindAssignment, KindEnd}},
		{BlockData, "BD", nil, Pos{"u.f", 9, 7}, []StmtKind{KindBlockData, KindCommon, KindEnd}},
		{Module, "M", nil, Pos{"u.f", 12, 7}, []StmtKind{KindModule, KindEnd}},
	}, got)
}

func TestUnitLoneEnd(t *testing.T) {
	u := only(t, parseOK(t, "e.f", fixed("|END"), Options{}))
	assert.Equal(t, MainProgram, u.Kind)
	assert.Equal(t, []StmtKind{KindEnd}, kinds(u.Stmts))
	assert.Equal(t, 0, u.FirstExecutable())
}

func TestUnitContains(t *testing.T) {
	src := free(
		"module m",
		"  integer :: n",
		"  type point",
		"    real :: x, y",
		"  contains",
		"    procedure :: norm",
		"  end type point",
		"  interface",
		"    subroutine ext(a)",
		"      real a(*)",
		"    end subroutine",
		"  end interface",
		"contains",
		"  subroutine s(x)",
		"    real x(10)",
		"    x = 0",
		"  contains",
		"    function inner(y)",
		"      inner = y",
		"    end function inner",
		"  end subroutine s",
		"  real function g()",
		"    g = 1",
		"  end",
		"end module m",
	)
	u := only(t, parseOK(t, "m.f90", src, Options{}))
	assert.Equal(t, Module, u.Kind)
	assert.Equal(t, "M", u.Name)
	assert.Equal(t, []StmtKind{
		KindModule, KindTypeDecl,
		KindOther, KindTypeDecl, KindOther, KindOther, KindOther, // the type, its CONTAINS is not the module's
		KindOther, KindSubroutine, KindTypeDecl, KindEnd, KindOther, // the interface block
		KindContains,
		KindSubroutine, KindTypeDecl, KindAssignment, KindContains, KindFunction, KindAssignment, KindEnd, KindEnd,
		KindFunction, KindAssignment, KindEnd,
		KindEnd,
	}, kinds(u.Stmts))
	for i := 2; i <= 11; i++ {
		assert.True(t, u.Stmts[i].Spec, "statement %d (%q) is in a type or interface block", i, u.Stmts[i].Text)
	}
	assert.Equal(t, 12, u.FirstExecutable(), "a module's first executable place is its CONTAINS")
	assert.Equal(t, "M", u.Stmts[len(u.Stmts)-1].Name)
}

func TestUnitFirstExecutable(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  int
	}{
		{"declarations then code", []string{"|SUBROUTINE S(N)", "|IMPLICIT NONE", "|INTEGER N", "|COMMON /C/ X", "|X = N", "|END"}, 4},
		{"FORMAT and DATA do not end the specification part", []string{"|SUBROUTINE S", "10|FORMAT(I5)", "|DATA X /1/", "|INTEGER I", "|CALL F", "|END"}, 4},
		{"declarative directives are specification", []string{"|SUBROUTINE S", "CSVM$ PROCESSORS:: P(4)", "CSVM$ TEMPLATE:: T(10)", "CSVM$ DISTRIBUTE (BLOCK) ONTO P :: T", "CSVM$ SHARED :: A", "CSVM$ BARRIER", "|END"}, 5},
		{"statement functions are specification", []string{"|FUNCTION F(X)", "|G(Y) = Y*2", "|F = G(X)", "|END"}, 2},
		{"no executable statement", []string{"|SUBROUTINE S", "|INTEGER I", "|END"}, 2},
		{"main program without PROGRAM", []string{"|INTEGER I", "|I = 1", "|END"}, 1},
		{"missing END", []string{"|SUBROUTINE S", "|INTEGER I"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := Parse("s.f", []byte(fixed(tt.lines...)), withDirectives)
			u := f.Units[0]
			assert.Equal(t, tt.want, u.FirstExecutable())
		})
	}
}

func TestUnitErrors(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		src   string
		want  []string
		units int
	}{
		{"missing END", "a.f", fixed("|SUBROUTINE S", "|X = 1"),
			[]string{"a.f:1:7: error: SUBROUTINE S has no END statement"}, 1},
		{"missing END before the next unit", "a.f", fixed("|SUBROUTINE S", "|X = 1", "|SUBROUTINE T", "|END"),
			[]string{"a.f:1:7: error: SUBROUTINE S has no END statement (SUBROUTINE T starts at line 3)"}, 2},
		{"main program without END", "a.f", fixed("|X = 1"),
			[]string{"a.f:1:7: error: the main program has no END statement"}, 1},
		{"END of the wrong kind", "a.f", fixed("|SUBROUTINE S", "|END FUNCTION"),
			[]string{"a.f:2:7: error: END FUNCTION ends SUBROUTINE S"}, 1},
		{"END with the wrong name", "a.f", fixed("|SUBROUTINE S", "|END SUBROUTINE T"),
			[]string{"a.f:2:7: error: END SUBROUTINE T does not match SUBROUTINE S"}, 1},
		{"two main programs", "a.f", fixed("|PROGRAM P", "|END", "|X = 1", "|END"),
			[]string{"a.f:3:7: error: a second main program (the first starts at line 1)"}, 2},
		{"internal procedure without END", "a.f90", free("subroutine s", "contains", "subroutine t", "end subroutine s"),
			[]string{"a.f90:4:1: error: END SUBROUTINE S does not match SUBROUTINE T", "a.f90:1:1: error: SUBROUTINE S has no END statement"}, 1},
		{"interface without END INTERFACE", "a.f90", free("subroutine s", "interface", "end"),
			[]string{"a.f90:2:1: error: INTERFACE block has no END INTERFACE"}, 1},
		{"END INTERFACE without INTERFACE", "a.f90", free("subroutine s", "end interface", "end"),
			[]string{"a.f90:2:1: error: END INTERFACE without INTERFACE"}, 1},
		{"two CONTAINS", "a.f90", free("module m", "contains", "contains", "end"),
			[]string{"a.f90:3:1: error: a second CONTAINS in MODULE M"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, diags := Parse(tt.file, []byte(tt.src), Options{})
			want := tt.want
			assert.ElementsMatch(t, want, strs(diags))
			assert.Len(t, f.Units, tt.units)
		})
	}
}

// doUnit parses a subroutine body and returns the unit.
func doUnit(t *testing.T, lines ...string) (*Unit, []Diagnostic) {
	t.Helper()
	src := fixed(append(append([]string{"|SUBROUTINE S"}, lines...), "|END")...)
	f, diags := Parse("d.f", []byte(src), Options{})
	return only(t, f), diags
}

func TestDoEnd(t *testing.T) {
	u, diags := doUnit(t,
		"|DO 10 I = 1, N",  //  1
		"|DO 10 J = 1, N",  //  2
		"|DO 20 K = 1, N",  //  3
		"|X = 1",           //  4
		"20|CONTINUE",      //  5
		"10|CONTINUE",      //  6  ends both DO 10
		"|DO I = 1, N",     //  7
		"|DO J = 1, N",     //  8
		"|DO 30 K = 1, N",  //  9
		"30|Y = 2",         // 10
		"|END DO",          // 11
		"|IF (X) THEN",     // 12
		"|DO WHILE (X)",    // 13
		"|ENDDO",           // 14
		"|END IF",          // 15
		"|ENDDO",           // 16
		"|DO 40 I = 1, N",  // 17
		"|DO",              // 18
		"|EXIT",            // 19
		"|END DO",          // 20
		"40|END DO",        // 21 ends DO 40 (a labelled END DO)
		"|DO 50, I = 1, 2", // 22
		"50|IF (X) Y = 1",  // 23 a logical IF as the terminal statement
	)
	require.Empty(t, diags)
	want := map[int]int{1: 6, 2: 6, 3: 5, 7: 16, 8: 11, 9: 10, 13: 14, 17: 21, 18: 20, 22: 23}
	for i, s := range u.Stmts {
		if s.Kind != KindDo {
			continue
		}
		end, err := u.DoEnd(i)
		require.NoError(t, err, "DO at %d", i)
		assert.Equal(t, want[i], end, "DO at %d (%s)", i, s.Text)
		delete(want, i)
	}
	assert.Empty(t, want, "DO statements not found")
}

func TestDoEndErrors(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		do    int // the DO to ask DoEnd about
		err   string
		diags []string
	}{
		{"block DO without END DO", []string{"|DO I = 1, N", "|X = 1"}, 1,
			"the DO loop at line 2 has no END DO",
			[]string{"d.f:2:7: error: the DO loop at line 2 has no END DO"}},
		{"label never comes", []string{"|DO 10 I = 1, N", "|X = 1"}, 1,
			"the DO 10 loop at line 2 is not ended: no statement labelled 10 follows",
			[]string{"d.f:2:7: error: the DO 10 loop at line 2 is not ended: no statement labelled 10 follows"}},
		{"label inside an open inner loop", []string{"|DO 10 I = 1, N", "|DO J = 1, N", "10|CONTINUE", "|END DO"}, 1,
			"the DO 10 loop at line 2 ends at line 4, inside the DO loop at line 3, which is still open",
			[]string{"d.f:2:7: error: the DO 10 loop at line 2 ends at line 4, inside the DO loop at line 3, which is still open"}},
		{"END DO for a labelled DO", []string{"|DO 10 I = 1, N", "|END DO", "10|CONTINUE"}, 1,
			"", // the label still ends it
			[]string{"d.f:3:7: error: END DO at line 3, but the DO loop at line 2 ends at label 10"}},
		{"END DO without DO", []string{"|X = 1", "|END DO"}, 1,
			"statement 1 (line 2, assignment) is not a DO statement",
			[]string{"d.f:3:7: error: END DO without a matching DO"}},
		{"a DO crossing into a contained procedure", []string{"|DO I = 1, N", "|CONTAINS", "|SUBROUTINE T", "|END DO", "|END"}, 1,
			"the DO loop at line 2 has no END DO",
			[]string{"d.f:2:7: error: the DO loop at line 2 has no END DO", "d.f:5:7: error: END DO without a matching DO"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, diags := doUnit(t, tt.lines...)
			assert.ElementsMatch(t, tt.diags, strs(diags))
			_, err := u.DoEnd(tt.do)
			if tt.err == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tt.err)
			}
		})
	}
	u, _ := doUnit(t)
	_, err := u.DoEnd(7)
	assert.EqualError(t, err, "statement index 7 out of range [0, 2)")
	_, err = u.DoEnd(-1)
	assert.Error(t, err)
}

func TestUnitInterfaceBodyWithoutEnd(t *testing.T) {
	src := free("subroutine s", "interface", "subroutine ext(a)", "end interface", "end type", "end")
	_, diags := Parse("a.f90", []byte(src), Options{})
	assert.Equal(t, []string{
		"a.f90:3:1: error: SUBROUTINE EXT has no END statement",
		"a.f90:5:1: error: END TYPE without a TYPE definition",
	}, strs(diags))
}

func TestDoEnds(t *testing.T) {
	u := only(t, parseOK(t, "d.f", fixed("|DO 10 J = 1, 2", "|DO 10 I = 1, 2", "10|CONTINUE", "|DO K = 1, 2", "|END DO", "|END"), Options{}))
	assert.Equal(t, []int{2, 2, -1, 4, -1, -1}, DoEnds(u.Stmts))
}
