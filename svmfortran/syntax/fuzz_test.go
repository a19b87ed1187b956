package syntax

import (
	"errors"
	"testing"
	"time"
)

// fuzzIncludes is the INCLUDE file system of the fuzz test: a file, a
// cycle and a missing file (any other name).
var fuzzIncludes = map[string]string{
	"a.inc":  "      INTEGER N\n      COMMON /C/ N\n",
	"c1.inc": "      INCLUDE 'c2.inc'\n",
	"c2.inc": "      INCLUDE 'c1.inc'\n",
}

func fuzzRead(name string) ([]byte, error) {
	if s, ok := fuzzIncludes[name]; ok {
		return []byte(s), nil
	}
	return nil, errors.New("no such file")
}

func FuzzParse(f *testing.F) {
	seeds := []string{figure1, figure2, figure3, figure4, indirectExample, linkedExample}
	for _, tt := range scanTests {
		seeds = append(seeds, tt.src)
	}
	for _, tt := range directiveTests {
		seeds = append(seeds, fixed("|SUBROUTINE S", "CSVM$ "+tt.text, "|END"))
		seeds = append(seeds, free("subroutine s", "!SVM$ "+tt.text, "end"))
	}
	seeds = append(seeds,
		fixed("|SUBROUTINE S(A, B)", "|INCLUDE 'a.inc'", "|INCLUDE 'c1.inc'", "|INCLUDE 'none'",
			"|DO 10 I = 1, N", "|DO 10 J = 1, N", "10|CONTINUE", "|IF (X) THEN", "|ELSE", "|END IF", "|END"),
		free("module m", "contains", "subroutine s", "  do i = 1, n; end do", "end subroutine", "end module"),
		"\tX = 1\n\t1+ 2\n10\tEND\n",
	)
	for _, s := range seeds {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, src string, freeForm bool) {
		form := FormFixed
		if freeForm {
			form = FormFree
		}
		start := time.Now()
		file, diags := Parse("fuzz", []byte(src), Options{Form: form, Directives: true, ReadInclude: fuzzRead})
		// Bounded work: the parser is linear in its input (and a unit's DO
		// check quadratic at worst in its DO statements).
		if d := time.Since(start); d > time.Second+time.Duration(len(src))*10*time.Microsecond {
			t.Fatalf("Parse took %v for %d bytes", d, len(src))
		}
		if file == nil {
			t.Fatal("nil File")
		}
		if len(diags) > maxDiagnostics+1 {
			t.Fatalf("%d diagnostics", len(diags))
		}
		checkPositions(t, file, diags)
		for _, u := range file.Units {
			if fe := u.FirstExecutable(); fe < 0 || fe > len(u.Stmts) {
				t.Fatalf("FirstExecutable %d out of range", fe)
			}
			for i, s := range u.Stmts {
				if s.Kind == KindDo {
					if end, err := u.DoEnd(i); err == nil && (end <= i || end >= len(u.Stmts)) {
						t.Fatalf("DoEnd(%d) = %d", i, end)
					}
				}
			}
		}
	})
}

// checkPositions checks that every diagnostic and statement of f lies
// inside its file: a line that exists, a column at most one past its end.
func checkPositions(t *testing.T, f *File, diags []Diagnostic) {
	t.Helper()
	files := map[string][]string{f.Name: f.Lines}
	for name, src := range fuzzIncludes {
		files[name] = splitLines([]byte(src))
	}
	inFile := func(what string, p Pos) {
		t.Helper()
		lines, ok := files[p.File]
		if !ok {
			t.Fatalf("%s: position %v in an unknown file", what, p)
		}
		if p.Line < 1 || p.Line > len(lines) {
			t.Fatalf("%s: line %d of %v outside 1..%d", what, p.Line, p, len(lines))
		}
		if n := len(lines[p.Line-1]); p.Col < 1 || p.Col > n+1 {
			t.Fatalf("%s: column of %v outside 1..%d", what, p, n+1)
		}
	}
	for _, d := range diags {
		inFile(d.String(), d.Pos)
		if d.Msg == "" {
			t.Fatalf("%v: empty message", d.Pos)
		}
	}
	var walk func(ss []*Stmt)
	walk = func(ss []*Stmt) {
		for _, s := range ss {
			inFile("statement "+s.Text, s.Pos)
			if s.FirstLine < 1 || s.FirstLine > s.LastLine || s.LastLine > len(files[s.Pos.File]) {
				t.Fatalf("statement %q: lines %d-%d of %d", s.Text, s.FirstLine, s.LastLine, len(files[s.Pos.File]))
			}
			if s.Inner != nil {
				walk([]*Stmt{s.Inner})
			}
			walk(s.Included)
		}
	}
	for _, u := range f.Units {
		walk(u.Stmts)
	}
}
