package compile

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

var update = flag.Bool("update", false, "rewrite the golden files of the generated code")

func readInclude(from, name string) ([]byte, error) { return os.ReadFile(filepath.Join(from, name)) }

// TestGolden compiles each testdata/golden source and compares the
// generated Fortran with NAME.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	srcs, err := filepath.Glob("testdata/golden/*.f*")
	require.NoError(t, err)
	srcs = slices.DeleteFunc(srcs, func(s string) bool { return strings.HasSuffix(s, ".golden") })
	require.NotEmpty(t, srcs)
	for _, src := range srcs {
		t.Run(filepath.Base(src), func(t *testing.T) {
			text, err := os.ReadFile(src)
			require.NoError(t, err)
			outs, diags := Compile([]Source{{Path: src, Text: text}}, Options{ReadInclude: readInclude})
			for _, d := range diags {
				require.NotEqual(t, syntax.Error, d.Severity, "%s", d)
			}
			require.Len(t, outs, 1)
			golden := src + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, outs[0].Text, 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./svmfortran/compile -run TestGolden -update")
			assert.Equal(t, string(want), string(outs[0].Text))
		})
	}
}

var expectation = regexp.MustCompile(`!\s*(ERROR|WARNING)\s+"([^"]*)"`)

// TestDiagnostics compiles each testdata/errors source, whose lines say
// what they must produce: ! ERROR "text" or ! WARNING "text" at the end of
// the line. Every diagnostic must be expected, and every expectation met.
func TestDiagnostics(t *testing.T) {
	srcs, err := filepath.Glob("testdata/errors/*.f*")
	require.NoError(t, err)
	require.NotEmpty(t, srcs)
	for _, src := range srcs {
		t.Run(filepath.Base(src), func(t *testing.T) {
			text, err := os.ReadFile(src)
			require.NoError(t, err)
			type want struct {
				line     int
				severity string
				text     string
			}
			var wants []want
			for i, l := range strings.Split(string(text), "\n") {
				for _, m := range expectation.FindAllStringSubmatch(l, -1) {
					wants = append(wants, want{i + 1, strings.ToLower(m[1]), m[2]})
				}
			}
			_, diags := Compile([]Source{{Path: src, Text: text}}, Options{ReadInclude: readInclude})
			met := make([]bool, len(wants))
			for _, d := range diags {
				s := d.String()
				k := slices.IndexFunc(wants, func(w want) bool {
					return w.line == d.Pos.Line && strings.Contains(s, w.severity+": ") && strings.Contains(d.Msg, w.text)
				})
				if k < 0 {
					t.Errorf("unexpected diagnostic: %s", s)
					continue
				}
				met[k] = true
				assert.Regexp(t, `^`+regexp.QuoteMeta(src)+`:\d+:\d+: (error|warning): `, s)
			}
			for k, w := range wants {
				if !met[k] {
					t.Errorf("%s:%d: expected %s containing %q; got none", src, w.line, w.severity, w.text)
				}
			}
		})
	}
}

func TestDiagnosticsAreSortedAndCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("      PROGRAM MANY\n")
	for i := range 150 {
		fmt.Fprintf(&b, "CSVM$ DISTRIBUTE (BLOCK) ONTO P%d:: T%d\n", i, i)
	}
	b.WriteString("      END\n")
	_, diags := Compile([]Source{{Path: "many.f", Text: []byte(b.String())}}, Options{})
	require.Len(t, diags, maxDiagnostics)
	assert.Contains(t, diags[len(diags)-1].Msg, "too many diagnostics")
	assert.True(t, slices.IsSortedFunc(diags[:len(diags)-1], func(a, b syntax.Diagnostic) int { return a.Pos.Line - b.Pos.Line }))
}

// expr parses a free-form expression.
func expr(t *testing.T, text string) syntax.Expr {
	t.Helper()
	f, diags := syntax.Parse("x.f90", []byte("x = "+text+"\nend\n"), syntax.Options{})
	require.Empty(t, diags)
	return f.Units[0].Stmts[0].Value
}

func TestExpressionHelpers(t *testing.T) {
	assert.Equal(t, "MAP(svm_i)+'I'", indexed(expr(t, "MAP(I)+'I'"), "I"))
	assert.Equal(t, "A(svm_i, 1E3) + IJ", indexed(expr(t, "A(i, 1E3) + IJ"), "I"))
	for text, want := range map[string][2]string{"I": {"I", "0"}, "j+1": {"J", "+1"}, "K - 12": {"K", "-12"}} {
		v, off, ok := subscript(expr(t, text))
		assert.True(t, ok, text)
		assert.Equal(t, want, [2]string{v, off}, text)
	}
	for _, bad := range []string{"2*I", "I+J", "I+N", "(I)", "F(I)"} {
		_, _, ok := subscript(expr(t, bad))
		assert.False(t, ok, bad)
	}
}

// FuzzCompile: no source makes the compiler panic, and every diagnostic
// has a position in the file.
func FuzzCompile(f *testing.F) {
	for _, dir := range []string{"testdata/golden", "testdata/errors", "testdata/programs"} {
		srcs, _ := filepath.Glob(filepath.Join(dir, "*.f*"))
		for _, src := range srcs {
			if strings.HasSuffix(src, ".golden") {
				continue
			}
			text, err := os.ReadFile(src)
			if err == nil {
				f.Add(filepath.Ext(src) == ".f90", text)
			}
		}
	}
	f.Fuzz(func(t *testing.T, free bool, text []byte) {
		name := "fuzz.f"
		if free {
			name = "fuzz.f90"
		}
		start := time.Now()
		_, diags := Compile([]Source{{Path: name, Text: text}}, Options{})
		if took, limit := time.Since(start), time.Second+time.Duration(len(text))*20*time.Microsecond; took > limit {
			t.Fatalf("compiling %d bytes took %v (limit %v)", len(text), took, limit)
		}
		lines := strings.Count(string(text), "\n") + 1
		for _, d := range diags {
			if d.Pos.File == name && (d.Pos.Line < 1 || d.Pos.Line > lines) {
				t.Fatalf("diagnostic outside the file (%d lines): %s", lines, d)
			}
		}
	})
}
