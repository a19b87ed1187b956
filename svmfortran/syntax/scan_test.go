package syntax

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanned is what the scanner tests check of each statement.
type scanned struct {
	kind        StmtKind
	label       int
	text        string
	first, last int
}

func scan(ss []*Stmt) []scanned {
	var out []scanned
	for _, s := range ss {
		out = append(out, scanned{s.Kind, s.Label, s.Text, s.FirstLine, s.LastLine})
	}
	return out
}

// scanTests are whole units, so the statements include header and END.
var scanTests = []struct {
	name string
	form Form
	src  string
	want []scanned
}{
	{
		name: "fixed: comments, labels, continuation",
		form: FormFixed,
		src: fixed(
			"C a comment",
			"c another",
			"* and another",
			"! and one more",
			"",
			"|SUBROUTINE S(A,",
			"     +  B)",
			"C comment between continuation lines",
			"     1  ",
			"   10|CONTINUE",
			"|X = 1 ! trailing comment",
			"         ! an indented comment line",
			"|END",
		),
		want: []scanned{
			{KindSubroutine, 0, "SUBROUTINE S(A,  B)", 6, 9},
			{KindContinue, 10, "CONTINUE", 10, 10},
			{KindAssignment, 0, "X = 1", 11, 11},
			{KindEnd, 0, "END", 13, 13},
		},
	},
	{
		name: "fixed: columns beyond 72 are ignored",
		form: FormFixed,
		src: fixed(
			"|PROGRAM P",
			"|X = 1"+strings.Repeat(" ", 61)+"+ 2 ignored",
			"|END",
		),
		want: []scanned{
			{KindProgram, 0, "PROGRAM P", 1, 1},
			{KindAssignment, 0, "X = 1", 2, 2},
			{KindEnd, 0, "END", 3, 3},
		},
	},
	{
		name: "fixed: tab form",
		form: FormFixed,
		src:  "\tPROGRAM P\n10\tX = F(1,\n\t12)\n\tEND\n",
		want: []scanned{
			{KindProgram, 0, "PROGRAM P", 1, 1},
			{KindAssignment, 10, "X = F(1,2)", 2, 3},
			{KindEnd, 0, "END", 4, 4},
		},
	},
	{
		name: "fixed: tab-form comment lines between continuation lines",
		form: FormFixed,
		src:  "\tPROGRAM P\n\tCALL F(A,\n\t! comment\n\t\n\t1B)\n\tEND\n",
		want: []scanned{
			{KindProgram, 0, "PROGRAM P", 1, 1},
			{KindCall, 0, "CALL F(A,B)", 2, 5},
			{KindEnd, 0, "END", 6, 6},
		},
	},
	{
		name: "fixed: '!' and quotes in strings",
		form: FormFixed,
		src: fixed(
			"|PROGRAM P",
			"|PRINT *, 'Hello, world! It''s me' ! comment",
			`|PRINT *, "say ""hi""!"`,
			"|S = 'one line '",
			"     +//'and two!'",
			"|END",
		),
		want: []scanned{
			{KindProgram, 0, "PROGRAM P", 1, 1},
			{KindIO, 0, "PRINT *, 'Hello, world! It''s me'", 2, 2},
			{KindIO, 0, `PRINT *, "say ""hi""!"`, 3, 3},
			{KindAssignment, 0, "S = 'one line '//'and two!'", 4, 5},
			{KindEnd, 0, "END", 6, 6},
		},
	},
	{
		name: "fixed: a string continued across lines",
		form: FormFixed,
		src: fixed(
			"|PROGRAM P",
			"|PRINT *, 'a string! that",
			"     + goes on'",
			"|END",
		),
		want: []scanned{
			{KindProgram, 0, "PROGRAM P", 1, 1},
			{KindIO, 0, "PRINT *, 'a string! that goes on'", 2, 3},
			{KindEnd, 0, "END", 4, 4},
		},
	},
	{
		name: "fixed: Hollerith constants",
		form: FormFixed,
		src: fixed(
			"|PROGRAM P",
			"|CALL F(3HA!B, 5H'X'!Y)",
			"|DATA A /4H!!!!/, B/2*2H!!/",
			"100|FORMAT(1X, 6HRESULT, I5)",
			"|IF (C .EQ. 1H!) GOTO 100",
			"|REAL*8 H ! not a Hollerith constant",
			"|END",
		),
		want: []scanned{
			{KindProgram, 0, "PROGRAM P", 1, 1},
			{KindCall, 0, "CALL F(3HA!B, 5H'X'!Y)", 2, 2},
			{KindData, 0, "DATA A /4H!!!!/, B/2*2H!!/", 3, 3},
			{KindFormat, 100, "FORMAT(1X, 6HRESULT, I5)", 4, 4},
			{KindLogicalIf, 0, "IF (C .EQ. 1H!) GOTO 100", 5, 5},
			{KindTypeDecl, 0, "REAL*8 H", 6, 6},
			{KindEnd, 0, "END", 7, 7},
		},
	},
	{
		name: "fixed: blanks in keywords",
		form: FormFixed,
		src: fixed(
			"|PROGRAM P",
			"|DO 10 I = 1, N",
			"|DO10J=1,N",
			"|G O T O 10",
			"|GO TO 10",
			"10|CONTINUE",
			"|DO K = 1, N",
			"|END DO",
			"|DO K = 1, N",
			"|ENDDO",
			"|E N D",
		),
		want: []scanned{
			{KindProgram, 0, "PROGRAM P", 1, 1},
			{KindDo, 0, "DO 10 I = 1, N", 2, 2},
			{KindDo, 0, "DO10J=1,N", 3, 3},
			{KindGoto, 0, "G O T O 10", 4, 4},
			{KindGoto, 0, "GO TO 10", 5, 5},
			{KindContinue, 10, "CONTINUE", 6, 6},
			{KindDo, 0, "DO K = 1, N", 7, 7},
			{KindEndDo, 0, "END DO", 8, 8},
			{KindDo, 0, "DO K = 1, N", 9, 9},
			{KindEndDo, 0, "ENDDO", 10, 10},
			{KindEnd, 0, "E N D", 11, 11},
		},
	},
	{
		name: "fixed: CRLF line ends",
		form: FormFixed,
		src:  "      PROGRAM P\r\n      X = 1\r\n      END\r\n",
		want: []scanned{
			{KindProgram, 0, "PROGRAM P", 1, 1},
			{KindAssignment, 0, "X = 1", 2, 2},
			{KindEnd, 0, "END", 3, 3},
		},
	},
	{
		name: "fixed: directives off are comments",
		form: FormFixed,
		src: fixed(
			"|PROGRAM P",
			"CSVM$ BARRIER",
			"|END",
		),
		want: nil, // checked separately with Directives false
	},
	{
		name: "free: comments, continuation, semicolons, labels",
		form: FormFree,
		src: free(
			"! a comment",
			"program p   ! trailing comment",
			"  x = 1; y = 2 ;; z = 3",
			"  call f(a, &  ! comment after &",
			"         ! a comment line between",
			"",
			"         & b)",
			"  call g(a, &",
			"         c)",
			"10 continue",
			"  print *, 'a ! in a string; and a ; too', \"it's\"",
			"  s = 'a string &",
			"      &continued'",
			"end program p",
		),
		want: []scanned{
			{KindProgram, 0, "program p", 2, 2},
			{KindAssignment, 0, "x = 1", 3, 3},
			{KindAssignment, 0, "y = 2", 3, 3},
			{KindAssignment, 0, "z = 3", 3, 3},
			{KindCall, 0, "call f(a,  b)", 4, 7},
			{KindCall, 0, "call g(a,          c)", 8, 9},
			{KindContinue, 10, "continue", 10, 10},
			{KindIO, 0, "print *, 'a ! in a string; and a ; too', \"it's\"", 11, 11},
			{KindAssignment, 0, "s = 'a string continued'", 12, 13},
			{KindEnd, 0, "end program p", 14, 14},
		},
	},
	{
		name: "free: blanks and case in keywords",
		form: FormFree,
		src: free(
			"subroutine s",
			"  do i = 1, n",
			"  end do",
			"  DO I = 1, N",
			"  ENDDO",
			"  go to 10",
			"10 continue",
			"end subroutine",
		),
		want: []scanned{
			{KindSubroutine, 0, "subroutine s", 1, 1},
			{KindDo, 0, "do i = 1, n", 2, 2},
			{KindEndDo, 0, "end do", 3, 3},
			{KindDo, 0, "DO I = 1, N", 4, 4},
			{KindEndDo, 0, "ENDDO", 5, 5},
			{KindGoto, 0, "go to 10", 6, 6},
			{KindContinue, 10, "continue", 7, 7},
			{KindEnd, 0, "end subroutine", 8, 8},
		},
	},
}

func TestScan(t *testing.T) {
	for _, tt := range scanTests {
		if tt.want == nil {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			f := parseOK(t, "t", tt.src, Options{Form: tt.form, Directives: true})
			assert.Equal(t, tt.form, f.Form)
			assert.Equal(t, tt.want, scan(only(t, f).Stmts))
		})
	}
}

func TestScanKeepsLines(t *testing.T) {
	src := "      PROGRAM P\r\n\tX = 1   \n\n      END"
	f := parseOK(t, "p.f", src, Options{})
	assert.Equal(t, []string{"      PROGRAM P", "\tX = 1   ", "", "      END"}, f.Lines)
	f = parseOK(t, "p.f", "", Options{})
	assert.Empty(t, f.Lines)
	assert.Empty(t, f.Units)
}

func TestScanPositions(t *testing.T) {
	src := fixed(
		"|PROGRAM P",
		"   10 X = 1",
		"\tY = 2",
		"|CALL F(A,",
		"     +   B)",
		"|END",
	)
	u := only(t, parseOK(t, "p.f", src, Options{}))
	assert.Equal(t, Pos{"p.f", 1, 7}, u.Pos)
	assert.Equal(t, Pos{"p.f", 2, 7}, u.Stmts[1].Pos)
	assert.Equal(t, 10, u.Stmts[1].Label)
	assert.Equal(t, Pos{"p.f", 3, 2}, u.Stmts[2].Pos)
	call := u.Stmts[3]
	require.Equal(t, KindCall, call.Kind)
	assert.Equal(t, []Expr{
		{"A", Pos{"p.f", 4, 14}, []Name{{"A", Pos{"p.f", 4, 14}, 0, false}}},
		{"B", Pos{"p.f", 5, 10}, []Name{{"B", Pos{"p.f", 5, 10}, 0, false}}},
	}, call.Call.Args)

	u = only(t, parseOK(t, "p.f90", free("program p", "  x = 1; call f(a)", "end"), Options{}))
	assert.Equal(t, Pos{"p.f90", 2, 3}, u.Stmts[1].Pos)
	assert.Equal(t, Pos{"p.f90", 2, 10}, u.Stmts[2].Pos)
	assert.Equal(t, []Expr{{"a", Pos{"p.f90", 2, 17}, []Name{{"A", Pos{"p.f90", 2, 17}, 0, false}}}}, u.Stmts[2].Call.Args)
}

func TestScanFormByExtension(t *testing.T) {
	for name, want := range map[string]Form{
		"a.f": FormFixed, "a.for": FormFixed, "a.f77": FormFixed, "a.F": FormFixed,
		"a.f90": FormFree, "a.f95": FormFree, "a.F90": FormFree, "a.txt": FormFixed, "noext": FormFixed,
	} {
		f, _ := Parse(name, nil, Options{})
		assert.Equal(t, want, f.Form, name)
	}
	f, _ := Parse("a.f90", nil, Options{Form: FormFixed})
	assert.Equal(t, FormFixed, f.Form)
}

func TestScanLongLines(t *testing.T) {
	src := fixed("|PROGRAM P", "|X = 1"+strings.Repeat(" ", 61)+"+ 2", "|END")
	u := only(t, parseOK(t, "p.f", src, Options{LongLines: true}))
	assert.Equal(t, "X = 1"+strings.Repeat(" ", 61)+"+ 2", u.Stmts[1].Text)
}

func TestScanDirectivesOff(t *testing.T) {
	src := fixed(
		"|PROGRAM P",
		"CSVM$ BARRIER",
		"CSVM$+ NONSENSE",
		"|END",
	)
	u := only(t, parseOK(t, "p.f", src, Options{}))
	assert.Equal(t, []StmtKind{KindProgram, KindEnd}, kinds(u.Stmts))

	u = only(t, parseOK(t, "p.f90", free("program p", "!SVM$ barrier", "end"), Options{}))
	assert.Equal(t, []StmtKind{KindProgram, KindEnd}, kinds(u.Stmts))
}

// A statement continued after a disabled directive line continues across
// it, since the line is a comment.
func TestScanContinuationAcrossDisabledDirective(t *testing.T) {
	src := fixed("|PROGRAM P", "|CALL F(A,", "CSVM$ BARRIER", "     +B)", "|END")
	u := only(t, parseOK(t, "p.f", src, Options{}))
	assert.Equal(t, "CALL F(A,B)", u.Stmts[1].Text)
	assert.Equal(t, 2, u.Stmts[1].FirstLine)
	assert.Equal(t, 4, u.Stmts[1].LastLine)
}

func TestScanErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		src  string
		want string
	}{
		{"continuation without statement", "a.f", fixed("     +X = 1", "|END"),
			"a.f:1:6: error: continuation line without a statement to continue"},
		{"unterminated string", "a.f", fixed("|PRINT *, 'abc", "|END"),
			"a.f:1:16: error: unterminated character constant"},
		{"label without statement", "a.f", fixed("   10", "|END"),
			"a.f:1:4: error: statement label 10 is not followed by a statement"},
		{"continuation with label", "a.f", fixed("|X = 1", "   10+ + 2", "|END"),
			"a.f:2:1: error: a continuation line cannot have a label"},
		{"free: unterminated string", "a.f90", free("print *, 'abc", "end"),
			"a.f90:1:10: error: unterminated character constant"},
		{"free: & at the end of the file", "a.f90", free("end", "x = &"),
			"a.f90:2:6: error: the file ends in a statement continued with &"},
		{"free: long label", "a.f90", free("123456 continue", "end"),
			"a.f90:1:1: error: statement label 123456 has more than 5 digits"},
		{"free: label 0", "a.f90", free("0 continue", "end"),
			"a.f90:1:1: error: statement label 0 is not allowed"},
		{"directive continuation without directive", "a.f", fixed("CSVM$+ BARRIER", "|END"),
			"a.f:1:6: error: directive continuation line (column 6 is '+') without a directive to continue; column 6 of a directive's first line must be blank"},
		{"normal continuation after directive", "a.f", fixed("CSVM$ PROCESSORS:: P(4,", "     + 4)", "|END"),
			"a.f:2:6: error: continuation line after a directive; a directive continues on a line starting with CSVM$ and a mark in column 6"},
		{"free: directive continued by a normal line", "a.f90", free("!SVM$ processors :: p(4, &", "4)", "end"),
			"a.f90:2:1: error: directive continued with & must go on in a line starting with !SVM$"},
		{"free: statement continued by a directive", "a.f90", free("x = 1 + &", "!SVM$ barrier", "end"),
			"a.f90:2:1: error: statement continued with & is followed by a directive line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Parse(tt.file, []byte(tt.src), withDirectives)
			assert.Contains(t, strs(diags), tt.want)
		})
	}
}

func TestScanLabelFieldWarning(t *testing.T) {
	f, diags := Parse("a.f", []byte("X = 1\n  10  CONTINUE\n      END\n"), Options{})
	require.Equal(t, []string{
		"a.f:1:1: warning: statement starts in column 1, inside the label field; fixed-form statements start in column 7",
	}, strs(diags))
	u := only(t, f)
	assert.Equal(t, []scanned{
		{KindAssignment, 0, "X = 1", 1, 1},
		{KindContinue, 10, "CONTINUE", 2, 2},
		{KindEnd, 0, "END", 3, 3},
	}, scan(u.Stmts))
}
