package syntax

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStmtKinds(t *testing.T) {
	tests := []struct {
		line string
		kind StmtKind
		spec bool
	}{
		{"|X = 1", KindAssignment, false},
		{"|A(1, J) = B(J, I)", KindAssignment, false},
		{"|S(1:2) = 'AB'", KindAssignment, false},
		{"|P%X = 1", KindAssignment, false},
		{"|DO10I = 1.5", KindAssignment, false}, // the classic: an assignment to DO10I
		{"|IF(2) = 3", KindAssignment, false},
		{"|CALLX = 1", KindAssignment, false},
		{"|CONTINUE", KindContinue, false},
		{"|CALL F", KindCall, false},
		{"|COMMON /B/ X", KindCommon, true},
		{"|INTEGER I", KindTypeDecl, true},
		{"|DIMENSION A(10)", KindDimension, true},
		{"|PARAMETER (N = 10)", KindParameter, true},
		{"|IMPLICIT DOUBLE PRECISION (A-H, O-Z)", KindImplicit, true},
		{"|IMPLICIT NONE", KindImplicit, true},
		{"|USE MOD, ONLY: A => B", KindUse, true},
		{"|RETURN", KindReturn, false},
		{"|STOP 'done'", KindStop, false},
		{"|READ (5, *) X", KindIO, false},
		{"|READ *, X", KindIO, false},
		{"|WRITE (6, 100) (A(I), I = 1, N)", KindIO, false},
		{"|PRINT *, X", KindIO, false},
		{"|OPEN (UNIT=1, FILE='X')", KindIO, false},
		{"|CLOSE (1)", KindIO, false},
		{"|INQUIRE (FILE='X', EXIST=E)", KindIO, false},
		{"|REWIND 1", KindIO, false},
		{"|BACKSPACE 1", KindIO, false},
		{"|END FILE 1", KindIO, false},
		{"|ENDFILE 1", KindIO, false},
		{"100|FORMAT (1X, I5)", KindFormat, false},
		{"|DATA X, Y /1.0, 2.0/", KindData, true},
		{"|EQUIVALENCE (A, B)", KindEquivalence, true},
		{"|SAVE /BLK/, X", KindSave, true},
		{"|SAVE", KindSave, true},
		{"|EXTERNAL F, G", KindExternal, true},
		{"|INTRINSIC SIN", KindIntrinsic, true},
		{"|GOTO 10", KindGoto, false},
		{"|GO TO (10, 20), I", KindGoto, false},
		{"|IF (X .GT. 0) X = 0", KindLogicalIf, false},
		{"|IF (X) 10, 20, 30", KindArithmeticIf, false},
		{"|ALLOCATABLE :: A(:)", KindAttribute, true},
		{"|POINTER (P, X)", KindOther, true}, // a Cray pointer
		{"|SELECT CASE (K)", KindSelectCase, false},
		{"|CASE (1:3)", KindCase, false},
		{"|CASE DEFAULT", KindCase, false},
		{"|END SELECT", KindEndSelect, false},
		{"|EXIT", KindExit, false},
		{"|CYCLE OUTER", KindCycle, false},
		{"|FLUSH (6)", KindIO, false},
		{"|NAMELIST /NL/ A, B", KindOther, true},
		{"|ALLOCATE (A(N))", KindOther, false},
		{"|PAUSE", KindOther, false},
		{"|ENTRY E(X)", KindEntry, false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			s := one(t, tt.line)
			assert.Equal(t, tt.kind, s.Kind)
			assert.Equal(t, tt.spec, s.Spec)
		})
	}
}

func TestStmtDo(t *testing.T) {
	tests := []struct {
		line string
		want DoStmt
	}{
		{"|DO 10 I = 1, N", DoStmt{TermLabel: 10, Var: "I", Lo: Expr{Text: "1"}, Hi: Expr{Text: "N"}}},
		{"|DO10I=1,N", DoStmt{TermLabel: 10, Var: "I", Lo: Expr{Text: "1"}, Hi: Expr{Text: "N"}}},
		{"|DO 10, I = 1, N", DoStmt{TermLabel: 10, Var: "I", Lo: Expr{Text: "1"}, Hi: Expr{Text: "N"}}},
		{"|DO 20 K = N - 1, MAX(1, M), -2", DoStmt{TermLabel: 20, Var: "K", Lo: Expr{Text: "N-1"}, Hi: Expr{Text: "MAX(1,M)"}, Step: Expr{Text: "-2"}}},
		{"|DO ivar = a(1, 2), (/ 1, 2 /)", DoStmt{Var: "IVAR", Lo: Expr{Text: "a(1,2)"}, Hi: Expr{Text: "(/1,2/)"}}},
		{"|DO WHILE (X .LT. 1.0)", DoStmt{While: true, Cond: Expr{Text: "X.LT.1.0"}}},
		{"|DO 30 WHILE (X .LT. 1.0)", DoStmt{TermLabel: 30, While: true, Cond: Expr{Text: "X.LT.1.0"}}},
		{"|DO", DoStmt{}},
		{"|OUTER: DO I = 1, 2", DoStmt{Var: "I", Lo: Expr{Text: "1"}, Hi: Expr{Text: "2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			src := fixed("|SUBROUTINE S", tt.line, "|END DO", "10|CONTINUE", "20|CONTINUE", "30|CONTINUE", "|END")
			f, _ := Parse("s.f", []byte(src), Options{})
			s := f.Units[0].Stmts[1]
			require.Equal(t, KindDo, s.Kind)
			got := *s.Do
			for _, e := range []*Expr{&got.Lo, &got.Hi, &got.Step, &got.Cond} {
				*e = textOnly(*e)
			}
			assert.Equal(t, tt.want, got)
		})
	}
	// Free form keeps the blanks of expressions.
	u := only(t, parseOK(t, "s.f90", free("do i = n - 1, max(1, m)", "end do", "end"), Options{}))
	assert.Equal(t, "n - 1", u.Stmts[0].Do.Lo.Text)
	assert.Equal(t, "max(1, m)", u.Stmts[0].Do.Hi.Text)
	assert.Equal(t, Pos{"s.f90", 1, 8}, u.Stmts[0].Do.Lo.Pos)
}

func TestStmtCall(t *testing.T) {
	tests := []struct {
		line string
		name string
		args []string
	}{
		{"|CALL F", "F", nil},
		{"|CALL F()", "F", nil},
		{"|CALL SUB(A, B(1, 2), 'x, y', (/ 1, 2 /), [3, 4], *10)", "SUB", []string{"A", "B(1,2)", "'x, y'", "(/1,2/)", "[3,4]", "*10"}},
		{"|CALL S(3HA,B, X)", "S", []string{"3HA,B", "X"}},
		{"|call mixed_Case(x)", "MIXED_CASE", []string{"x"}},
		{"|CALL OBJ%METHOD(1)", "OBJ%METHOD", []string{"1"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			s := one(t, tt.line)
			require.Equal(t, KindCall, s.Kind)
			assert.Equal(t, tt.name, s.Call.Name)
			assert.Equal(t, tt.args, texts(s.Call.Args))
		})
	}
}

func TestStmtCommon(t *testing.T) {
	s := one(t, "|COMMON A, B(10) /BLK1/ C(N, 0:M), D, /BLK2/ E // F")
	require.Equal(t, KindCommon, s.Kind)
	require.Len(t, s.Common, 4)
	assert.Equal(t, "", s.Common[0].Name)
	assert.Equal(t, []string{"A", "B"}, names(s.Common[0].Vars))
	assert.Equal(t, []string{"10"}, dims(s.Common[0].Vars[1]))
	assert.Nil(t, s.Common[0].Vars[0].Dims)
	assert.Equal(t, "BLK1", s.Common[1].Name)
	assert.Equal(t, []string{"C", "D"}, names(s.Common[1].Vars))
	assert.Equal(t, []string{"N", "0:M"}, dims(s.Common[1].Vars[0]))
	assert.Equal(t, "BLK2", s.Common[2].Name)
	assert.Equal(t, []string{"E"}, names(s.Common[2].Vars))
	assert.Equal(t, "", s.Common[3].Name)
	assert.Equal(t, []string{"F"}, names(s.Common[3].Vars))
	assert.Equal(t, Pos{"s.f", 2, 17}, s.Common[0].Vars[1].Pos)
}

func TestStmtDecl(t *testing.T) {
	tests := []struct {
		line     string
		kind     StmtKind
		typeSpec string
		names    []string
		dims     [][]string
	}{
		{"|INTEGER I, J(10), K(0:N, *)", KindTypeDecl, "INTEGER", []string{"I", "J", "K"}, [][]string{nil, {"10"}, {"0:N", "*"}}},
		{"|REAL*8 X(N), Y", KindTypeDecl, "REAL*8", []string{"X", "Y"}, [][]string{{"N"}, nil}},
		{"|DOUBLE PRECISION D", KindTypeDecl, "DOUBLE PRECISION", []string{"D"}, [][]string{nil}},
		{"|DOUBLEPRECISION D", KindTypeDecl, "DOUBLE PRECISION", []string{"D"}, [][]string{nil}},
		{"|REAL(8) :: R", KindTypeDecl, "REAL(8)", []string{"R"}, [][]string{nil}},
		{"|real(kind=8) :: r", KindTypeDecl, "REAL(KIND=8)", []string{"R"}, [][]string{nil}},
		{"|CHARACTER*10 S, T*20, U(5)*3", KindTypeDecl, "CHARACTER*10", []string{"S", "T", "U"}, [][]string{nil, nil, {"5"}}},
		{"|CHARACTER*(*) S", KindTypeDecl, "CHARACTER*(*)", []string{"S"}, [][]string{nil}},
		{"|CHARACTER*8, A", KindTypeDecl, "CHARACTER*8", []string{"A"}, [][]string{nil}},
		{"|CHARACTER(LEN=*), INTENT(IN) :: NAME", KindTypeDecl, "CHARACTER(LEN=*)", []string{"NAME"}, [][]string{nil}},
		{"|REAL, DIMENSION(N, M), INTENT(INOUT) :: A, B(2)", KindTypeDecl, "REAL", []string{"A", "B"}, [][]string{{"N", "M"}, {"2"}}},
		{"|REAL, ALLOCATABLE :: W(:, :)", KindTypeDecl, "REAL", []string{"W"}, [][]string{{":", ":"}}},
		{"|REAL A(0:), B(2:*)", KindTypeDecl, "REAL", []string{"A", "B"}, [][]string{{"0::"}, {"2:*"}}},
		{"|INTEGER, PARAMETER :: N = 10, M = N*2", KindTypeDecl, "INTEGER", []string{"N", "M"}, [][]string{nil, nil}},
		{"|REAL X /1.0/, Y(2) /1.0, 2.0/", KindTypeDecl, "REAL", []string{"X", "Y"}, [][]string{nil, {"2"}}},
		{"|TYPE(POINT) :: P, Q(3)", KindTypeDecl, "TYPE(POINT)", []string{"P", "Q"}, [][]string{nil, {"3"}}},
		{"|LOGICAL L", KindTypeDecl, "LOGICAL", []string{"L"}, [][]string{nil}},
		{"|COMPLEX*16 Z", KindTypeDecl, "COMPLEX*16", []string{"Z"}, [][]string{nil}},
		{"|INTEGER*4 FUNCTIONS(10)", KindTypeDecl, "INTEGER*4", []string{"FUNCTIONS"}, [][]string{{"10"}}},
		{"|DIMENSION A(10), B(N, M)", KindDimension, "", []string{"A", "B"}, [][]string{{"10"}, {"N", "M"}}},
		{"|DIMENSION :: A(10)", KindDimension, "", []string{"A"}, [][]string{{"10"}}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			s := one(t, tt.line)
			require.Equal(t, tt.kind, s.Kind)
			assert.Equal(t, tt.typeSpec, s.TypeSpec)
			assert.Equal(t, tt.names, names(s.Decl))
			var got [][]string
			for _, e := range s.Decl {
				got = append(got, dims(e))
			}
			assert.Equal(t, tt.dims, got)
		})
	}
}

func TestStmtIf(t *testing.T) {
	ss := body(t,
		"|IF (A .AND. (B .OR. C)) THEN",
		"|ELSE IF (D) THEN",
		"|ELSEIF (E) THEN",
		"|ELSE",
		"|END IF",
		"|IF (X) THEN",
		"|ENDIF",
		"|IF (X .GT. 0) CALL F(X)",
		"|IF (X .GT. 0) THEN = 1",
		"|IF (N .EQ. 1) RETURN",
	)
	assert.Equal(t, []StmtKind{KindIf, KindElseIf, KindElseIf, KindElse, KindEndIf, KindIf, KindEndIf,
		KindLogicalIf, KindLogicalIf, KindLogicalIf}, kinds(ss))
	in := ss[7].Inner
	require.NotNil(t, in)
	assert.Equal(t, KindCall, in.Kind)
	assert.Equal(t, "CALL F(X)", in.Text)
	assert.Equal(t, "F", in.Call.Name)
	assert.Equal(t, Pos{"s.f", 9, 21}, in.Pos)
	assert.Equal(t, KindAssignment, ss[8].Inner.Kind)
	assert.Equal(t, KindReturn, ss[9].Inner.Kind)
}

func TestStmtHeadersAndEnds(t *testing.T) {
	src := fixed(
		"|PROGRAM MAIN",
		"|END PROGRAM MAIN",
		"|SUBROUTINE S1",
		"|END SUBROUTINE",
		"|SUBROUTINE S2()",
		"|END",
		"|SUBROUTINE S3(A, B, *)",
		"|END SUBROUTINE S3",
		"|FUNCTION F(X)",
		"|END FUNCTION F",
		"|REAL*8 FUNCTION G(X, Y)",
		"|END",
		"|RECURSIVE INTEGER FUNCTION H(N) RESULT(R)",
		"|END",
		"|CHARACTER*(*) FUNCTION C()",
		"|END",
		"|BLOCK DATA",
		"|END BLOCK DATA",
		"|BLOCKDATA INIT",
		"|END",
		"|MODULE M",
		"|END MODULE M",
		"|PURE SUBROUTINE P(X)",
		"|END",
	)
	f := parseOK(t, "h.f", src, Options{})
	type unit struct {
		kind     UnitKind
		name     string
		args     []string
		typeSpec string
	}
	var got []unit
	for _, u := range f.Units {
		got = append(got, unit{u.Kind, u.Name, u.Args, u.Stmts[0].TypeSpec})
		require.Len(t, u.Stmts, 2)
		assert.Equal(t, KindEnd, u.Stmts[1].Kind)
	}
	assert.Equal(t, []unit{
		{MainProgram, "MAIN", nil, ""},
		{Subroutine, "S1", nil, ""},
		{Subroutine, "S2", nil, ""},
		{Subroutine, "S3", []string{"A", "B", "*"}, ""},
		{Function, "F", []string{"X"}, ""},
		{Function, "G", []string{"X", "Y"}, "REAL*8"},
		{Function, "H", []string{"N"}, "INTEGER"},
		{Function, "C", nil, "CHARACTER*(*)"},
		{BlockData, "", nil, ""},
		{BlockData, "INIT", nil, ""},
		{Module, "M", nil, ""},
		{Subroutine, "P", []string{"X"}, ""},
	}, got)
	assert.Equal(t, "MAIN", f.Units[0].Stmts[1].Name)
	assert.Equal(t, "S3", f.Units[3].Stmts[1].Name)
}

// Free form tells REAL FUNCTION F(X) from REAL FUNCTIONF(X) by the blank.
func TestStmtTypedFunctionFreeForm(t *testing.T) {
	f := parseOK(t, "a.f90", free(
		"subroutine s",
		"  real functions(10)",
		"  functions(1) = 0",
		"contains",
		"  real function f(x)",
		"    f = x",
		"  end function",
		"end subroutine",
	), Options{})
	u := only(t, f)
	assert.Equal(t, []StmtKind{KindSubroutine, KindTypeDecl, KindAssignment, KindContains,
		KindFunction, KindAssignment, KindEnd, KindEnd}, kinds(u.Stmts))
}

func TestStmtFunction(t *testing.T) {
	ss := body(t,
		"|DIMENSION A(10)",
		"|F(X) = X*2",
		"|A(I) = 1",
		"|G(X, Y) = X + Y",
	)
	assert.Equal(t, []StmtKind{KindDimension, KindAssignment, KindAssignment, KindAssignment}, kinds(ss))
	assert.True(t, ss[1].Spec, "F(X) = X*2 defines a statement function")
	assert.False(t, ss[2].Spec, "A is an array")
	assert.False(t, ss[3].Spec, "after the first executable statement")

	ss = body(t, "|USE M", "|F(X) = 1")
	assert.False(t, ss[1].Spec, "F may be an array from M")
	ss = body(t, "|F(1) = 1")
	assert.False(t, ss[0].Spec, "a constant subscript")
}

func TestStmtErrors(t *testing.T) {
	tests := []struct {
		line string
		want string // the error at the statement on line 2
	}{
		{"|DO I = 1, ", "s.f:2:16: error: expected an expression in the loop control of DO I, found end of statement"},
		{"|DO 10 I = 1", ""}, // an assignment to DO10I
		{"|DO I = 1, 2, 3, 4", "s.f:2:23: error: too many expressions in the loop control of DO I: DO I = first, last[, step]"},
		{"|DO (I) = 1, 2", `s.f:2:10: error: malformed DO statement: expected a loop variable, WHILE or the end of the statement, found "("`},
		{"|CALL", "s.f:2:11: error: expected the subroutine name after CALL, found end of statement"},
		{"|CALL F(A,)", `s.f:2:16: error: expected an argument in the arguments of CALL F, found ")"`},
		{"|CALL F(A) B", `s.f:2:17: error: unexpected "B" after CALL F(...)`},
		{"|COMMON /B X", "s.f:2:18: error: expected '/' after the COMMON block name, found end of statement"}, // the name is BX
		{"|COMMON /B/", "s.f:2:17: error: expected a variable name in COMMON /B/, found end of statement"},
		{"|COMMON", "s.f:2:13: error: COMMON lists no variables"},
		{"|INTEGER A(10", "s.f:2:19: error: expected ',' or ')' in the array bounds, found end of statement"},
		{"|INTEGER A(1) B", `s.f:2:20: error: expected ',' or the end of the statement in the INTEGER declaration, found "B"`},
		{"|INTEGER, INTENT(IN) ::", "s.f:2:29: error: expected a name in the INTEGER declaration, found end of statement"},
		{"|INTEGER, INTENT(IN) A", `s.f:2:27: error: expected ',' or the end of the statement in the INTEGER declaration, found "A"`},
		{"|DIMENSION A", "s.f:2:17: error: DIMENSION A needs array bounds"},
		{"|IF (X", "s.f:2:10: error: unbalanced parentheses in the IF condition"},
		{"|IF (X)", "s.f:2:13: error: IF (...) must be followed by THEN or a statement"},
		{"|IF (X) DO I = 1, 2", "s.f:2:14: error: DO statements are not allowed in a logical IF"},
		{"|IF (X) INTEGER I", "s.f:2:14: error: type declaration statements are not allowed in a logical IF"},
		{"|ELSE IF (X) Y = 1", `s.f:2:19: error: expected THEN after ELSE IF (...), found "Y"`},
		{"|CONTINUE 10", `s.f:2:16: error: unexpected "10" after CONTINUE`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			src := fixed("|SUBROUTINE S", tt.line, "|END")
			_, diags := Parse("s.f", []byte(src), Options{})
			if tt.want == "" {
				assert.Empty(t, diags)
				return
			}
			assert.Contains(t, strs(diags), tt.want)
		})
	}
}

// One error per statement; parsing goes on with the next statement.
func TestStmtErrorRecovery(t *testing.T) {
	src := fixed(
		"|SUBROUTINE S",
		"|CALL F(A,,B,,C)",
		"|COMMON /X",
		"|X = 1",
		"|DO I = 1,",
		"|END DO",
		"|END",
	)
	f, diags := Parse("s.f", []byte(src), Options{})
	assert.Equal(t, []string{
		`s.f:2:16: error: expected an argument in the arguments of CALL F, found ","`,
		"s.f:3:16: error: expected '/' after the COMMON block name, found end of statement",
		"s.f:5:16: error: expected an expression in the loop control of DO I, found end of statement",
	}, strs(diags))
	assert.Equal(t, []StmtKind{KindSubroutine, KindCall, KindCommon, KindAssignment, KindDo, KindEndDo, KindEnd},
		kinds(only(t, f).Stmts))
}

func TestStmtHeaderErrors(t *testing.T) {
	tests := []struct {
		line string
		want string
	}{
		{"|SUBROUTINE", "h.f:1:17: error: expected the SUBROUTINE name, found end of statement"},
		{"|SUBROUTINE S(A,", "h.f:1:22: error: expected a dummy argument name in SUBROUTINE S, found end of statement"},
		{"|SUBROUTINE S(A;B)", `h.f:1:21: error: expected ',' or ')' in the dummy arguments of SUBROUTINE S, found ";"`},
		{"|FUNCTION F", "h.f:1:17: error: expected '(' and the dummy arguments after FUNCTION F, found end of statement"},
		{"|FUNCTION F(X) Y", `h.f:1:21: error: unexpected "Y" after FUNCTION F(...)`},
		{"|PROGRAM", "h.f:1:14: error: expected the program name after PROGRAM, found end of statement"},
		{"|MODULE", "h.f:1:13: error: expected the module name after MODULE, found end of statement"},
		{"|REAL* X", `h.f:1:13: error: expected a length after *, found "X"`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			_, diags := Parse("h.f", []byte(fixed(tt.line, "|END")), Options{})
			require.NotEmpty(t, diags)
			assert.Equal(t, tt.want, diags[0].String())
		})
	}
}

func TestExprNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string // names, with "(" after one followed by '('
	}{
		{"A + B(I, J) * 2.5D0", []string{"A", "B(", "I", "J"}},
		{"X .EQ. 1 .AND. .NOT. FLAG", []string{"X", "FLAG"}},
		{"3.EQ.N .OR. .TRUE.", []string{"N"}},
		{"1.E5 + 2E-3 + .5 + 1.0_DP + 7_8 + Q", []string{"Q"}},
		{"'A, B' // S(1:N) // \"X\"", []string{"S(", "N"}},
		{"P%X + F(KEY=Y)", []string{"P", "F(", "Y"}},
		{"(A(I), I = 1, N)", []string{"A(", "I", "N"}},
		{"MAX(NUMPROC(), 2)", []string{"MAX(", "NUMPROC("}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			u := only(t, parseOK(t, "e.f90", free("x = "+tt.expr, "end"), Options{}))
			var got []string
			for _, n := range u.Stmts[0].Value.Names {
				name := n.Name
				if n.Call {
					name += "("
				}
				got = append(got, name)
				// Off and Pos point at the name as written.
				assert.True(t, strings.EqualFold(u.Stmts[0].Value.Text[n.Off:n.Off+len(n.Name)], n.Name))
				assert.Equal(t, 5+n.Off, n.Pos.Col)
			}
			assert.Equal(t, tt.want, got)
		})
	}
	// Fixed form: Hollerith constants are not names; offsets count the text without blanks.
	u := only(t, parseOK(t, "e.f", fixed("|CALL S(3HA,B, X Y)", "|END"), Options{}))
	require.Len(t, u.Stmts[0].Call.Args, 2)
	assert.Empty(t, u.Stmts[0].Call.Args[0].Names)
	assert.Equal(t, []Name{{Name: "XY", Pos: Pos{"e.f", 1, 21}, Off: 0}}, u.Stmts[0].Call.Args[1].Names)
}

func TestStmtFacts(t *testing.T) {
	src := fixed(
		"|SUBROUTINE S(A, N)",
		"|INTEGER, PARAMETER :: M = 3",
		"|REAL, ALLOCATABLE, SAVE :: W(:)",
		"|REAL A(N), X /1.0/",
		"|PARAMETER (K = 2, L = K*2)",
		"|DATA Y, Z(1) /1.0, 2.0/, (B(I), I = 1, 3) /3*0/",
		"|SAVE /BLK/, Y",
		"|EQUIVALENCE (C, D(2)), (E, F)",
		"|EXTERNAL G",
		"|ALLOCATABLE :: V(:, :)",
		"|OUTER: DO I = 1, N",
		"|IF (A(I) .GT. 0) THEN",
		"|A(I) = A(I) + X",
		"|ELSE IF (N .EQ. 1) THEN",
		"|GOTO 10",
		"|END IF",
		"|END DO OUTER",
		"|GO TO (10, 20), I",
		"|IF (X) 10, 20, 10",
		"10|READ (5, '(A)', END=20, ERR=30) Y, (Z(I), I = 1, N)",
		"20|PRINT 100, Y",
		"30|SELECT CASE (N + 1)",
		"|CASE DEFAULT",
		"|CALL T(*10, A)",
		"|END SELECT",
		"|WHERE (A .GT. 0) A = 0",
		"|RETURN 1",
		"100|FORMAT (F5.1)",
		"|END",
	)
	u := only(t, parseOK(t, "s.f", src, Options{}))
	st := u.Stmts
	assert.Equal(t, []string{"PARAMETER"}, st[1].Attrs)
	assert.True(t, st[1].Decl[0].Init)
	assert.Equal(t, []string{"ALLOCATABLE", "SAVE"}, st[2].Attrs)
	assert.False(t, st[3].Decl[0].Init)
	assert.True(t, st[3].Decl[1].Init)
	assert.Equal(t, []string{"K", "L"}, st[4].Names)
	assert.Equal(t, []string{"Y", "Z", "B"}, st[5].Names)
	assert.Equal(t, []string{"/BLK/", "Y"}, st[6].Names)
	assert.Equal(t, []string{"C", "D", "E", "F"}, st[7].Names)
	assert.Equal(t, []string{"G"}, st[8].Names)
	assert.Equal(t, KindAttribute, st[9].Kind)
	assert.Equal(t, []string{"ALLOCATABLE"}, st[9].Attrs)
	assert.Equal(t, "V", st[9].Decl[0].Name)
	assert.Equal(t, "OUTER", st[10].Construct)
	assert.Equal(t, "A(I).GT.0", st[11].Cond.Text)
	assert.Equal(t, "A(I)", st[12].Target.Text)
	assert.Equal(t, "A(I)+X", st[12].Value.Text)
	assert.Equal(t, "N.EQ.1", st[13].Cond.Text)
	assert.Equal(t, []int{10}, st[14].Targets)
	assert.Equal(t, "OUTER", st[16].Construct)
	assert.Equal(t, []int{10, 20}, st[17].Targets)
	assert.Equal(t, "I", st[17].Value.Text)
	assert.Equal(t, KindArithmeticIf, st[18].Kind)
	assert.Equal(t, []int{10, 20, 10}, st[18].Targets)
	io := st[19].IO
	require.NotNil(t, io)
	assert.Equal(t, "READ", io.Verb)
	unit, ok := io.Spec("UNIT")
	assert.True(t, ok)
	assert.Equal(t, "5", unit.Text)
	format, _ := io.Spec("FMT")
	assert.Equal(t, "'(A)'", format.Text)
	assert.Equal(t, []int{20, 30}, st[19].Targets)
	assert.Len(t, io.Items, 2)
	format, _ = st[20].IO.Spec("FMT")
	assert.Equal(t, "100", format.Text)
	assert.Equal(t, "N+1", st[21].Cond.Text)
	assert.Equal(t, KindCase, st[22].Kind)
	assert.Equal(t, []int{10}, st[23].Targets)
	assert.Equal(t, KindEndSelect, st[24].Kind)
	assert.Equal(t, KindOther, st[25].Kind)
	assert.Equal(t, []string{"WHERE", "A", "A"}, exprNames(st[25].Other))
	assert.Equal(t, "1", st[26].Value.Text)

	u = only(t, parseOK(t, "m.f90", free("program m", "use a", "use, intrinsic :: iso_c_binding, only: c_int", "use :: b, x => y", "end"), Options{}))
	for k, want := range []string{"A", "ISO_C_BINDING", "B"} {
		assert.Equal(t, KindUse, u.Stmts[k+1].Kind)
		assert.Equal(t, want, u.Stmts[k+1].Name)
	}
}

func exprNames(e Expr) []string {
	var out []string
	for _, n := range e.Names {
		out = append(out, n.Name)
	}
	return out
}
