package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The differential tests of svmf build: each SVM-Fortran program in
// svmfortran/compile/testdata/programs, built with svmf build (without a
// warning) and run on 1, 2, 3 and 4 ranks, prints what the same source
// built with gfortran alone (svmf build -nodist) prints, which is also
// saved as NAME.out.

const programs = "../../svmfortran/compile/testdata/programs"

var tolerance = regexp.MustCompile(`(?m)^[Cc!*]\s*TOLERANCE\s+(\S+)`)

func TestSVMFortranPrograms(t *testing.T) {
	srcs, err := filepath.Glob(filepath.Join(programs, "*.f*"))
	require.NoError(t, err)
	require.NotEmpty(t, srcs)
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(src)
			require.NoError(t, err)
			want, err := os.ReadFile(filepath.Join(programs, name+".out"))
			require.NoError(t, err)
			tol := 0.0
			if m := tolerance.FindSubmatch(text); m != nil {
				tol, err = strconv.ParseFloat(string(m[1]), 64)
				require.NoError(t, err)
			}
			abs, err := filepath.Abs(src)
			require.NoError(t, err)
			dir := t.TempDir()

			r := svmf(t, dir, 2*time.Minute, "build", "-nodist", "-O2", "-fcray-pointer", "-o", "seq", abs)
			ok(t, r)
			seq := svmf(t, dir, time.Minute, "run", "-np", "1", "./seq")
			ok(t, seq)
			sameOutput(t, string(want), seq.stdout, 0, "gfortran alone")

			r = svmf(t, dir, 2*time.Minute, "build", "-O2", "-o", "par", abs)
			ok(t, r)
			assert.NotContains(t, r.stderr, ": warning: ", "svmf build warns about a program that is right")
			for _, np := range []string{"1", "2", "3", "4"} {
				r := svmf(t, dir, 2*time.Minute, "run", "-np", np, "./par")
				ok(t, r)
				sameOutput(t, string(want), r.stdout, tol, np+" ranks")
			}
		})
	}
}

// sameOutput compares outputs token by token: words exactly, numbers
// within the relative tolerance tol.
func sameOutput(t *testing.T, want, got string, tol float64, what string) {
	t.Helper()
	wl, gl := strings.Split(strings.TrimSpace(want), "\n"), strings.Split(strings.TrimSpace(got), "\n")
	if len(wl) != len(gl) {
		t.Fatalf("%s: %d lines, want %d\ngot:\n%s\nwant:\n%s", what, len(gl), len(wl), got, want)
	}
	for i := range wl {
		wf, gf := strings.Fields(wl[i]), strings.Fields(gl[i])
		if len(wf) != len(gf) {
			t.Fatalf("%s: line %d is %q, want %q", what, i+1, gl[i], wl[i])
		}
		for k := range wf {
			if wf[k] == gf[k] {
				continue
			}
			w, err1 := strconv.ParseFloat(strings.ReplaceAll(wf[k], "D", "E"), 64)
			g, err2 := strconv.ParseFloat(strings.ReplaceAll(gf[k], "D", "E"), 64)
			if tol == 0 || err1 != nil || err2 != nil || math.Abs(w-g) > tol*math.Max(math.Abs(w), 1e-300) {
				assert.Fail(t, "output differs", "%s: line %d is %q, want %q (tolerance %g)", what, i+1, gl[i], wl[i], tol)
				return
			}
		}
	}
}

// TestBuildDriver: svmf build's options, its diagnostics, and gfortran's
// messages pointing at the user's source through the line markers.
func TestBuildDriver(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("main.f", `      PROGRAM MAIN
      INTEGER N, I
      PARAMETER (N = 8)
      REAL*8 A(N)
CSVM$ SHARED:: A
CSVM$ PDO (LOOPS(I))
      DO I = 1, N
         A(I) = I
      END DO
      CALL SHOW(A, N)
      END
`)
	write("show.f", `      SUBROUTINE SHOW(A, N)
      INTEGER N
      REAL*8 A(N)
CSVM$ EXCLUSIVE_REGION
      PRINT '(A,F6.1)', 'sum', SUM(A)
CSVM$ EXCLUSIVE_REGION_END
      END
`)
	// Separate compilation, then linking the objects.
	ok(t, svmf(t, dir, 2*time.Minute, "build", "-c", "main.f", "show.f"))
	for _, o := range []string{"main.o", "show.o"} {
		assert.FileExists(t, filepath.Join(dir, o))
	}
	ok(t, svmf(t, dir, 2*time.Minute, "build", "-o", "prog", "main.o", "show.o"))
	r := svmf(t, dir, time.Minute, "run", "-np", "3", "./prog")
	ok(t, r)
	assert.Equal(t, "sum  36.0\n", r.stdout)

	// -keep leaves the generated Fortran; options go to gfortran.
	ok(t, svmf(t, dir, 2*time.Minute, "build", "-keep", "-O1", "-Wall", "-o", "prog2", "main.f", "show.f"))
	gen, err := os.ReadFile(filepath.Join(dir, "main.svm.f"))
	require.NoError(t, err)
	assert.Contains(t, string(gen), "svm_pset_barrier")
	assert.Contains(t, string(gen), `# 8 "main.f"`)

	// -nodist: the sequential program, directives ignored.
	ok(t, svmf(t, dir, 2*time.Minute, "build", "-nodist", "-o", "seq", "main.f", "show.f"))
	out, err := exec.Command(filepath.Join(dir, "seq")).Output()
	require.NoError(t, err)
	assert.Equal(t, "sum  36.0\n", string(out))

	// SVM-Fortran errors: file:line:col, status 1, no program.
	write("bad.f", `      PROGRAM BAD
      INTEGER I
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(T(I))))
      DO I = 1, 4
      END DO
      END
`)
	r = svmf(t, dir, time.Minute, "build", "-o", "bad", "bad.f")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "bad.f:3:")
	assert.Contains(t, r.stderr, "error: template T is not declared in this unit")
	assert.NoFileExists(t, filepath.Join(dir, "bad"))

	// gfortran's own errors point at the user's source, not the generated file.
	write("typo.f", `      PROGRAM TYPO
      INTEGER I
      REAL*8 A(4)
CSVM$ SHARED:: A
CSVM$ PDO (LOOPS(I))
      DO I = 1, 4
         A(I) = I +
      END DO
      END
`)
	r = svmf(t, dir, time.Minute, "build", "-o", "typo", "typo.f")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "typo.f:7:")

	// Usage errors.
	r = svmf(t, dir, time.Minute, "build", "-o")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "-o needs a value")
	r = svmf(t, dir, time.Minute, "build", "-c", "-O2")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "no Fortran sources given")
}

// TestIntrinsicsLink: NUMPROC and MYPROCSET in any expression of a unit —
// an INCLUDE file, a statement function, an internal procedure, the
// declaration of an automatic array in a module procedure — build and link
// with svmf build, in units with no directive too.
func TestIntrinsicsLink(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("np.inc", "      NP = NUMPROC()\n")
	write("main.f", `      PROGRAM MAIN
      INTEGER NP, ME, K
      ME(K) = K + MYPROCSET()
      INCLUDE 'np.inc'
      IF (ME(0) .EQ. 0) PRINT *, 'np', NP
      CALL INNER
      CALL REPORT
      CONTAINS
      SUBROUTINE INNER
      IF (MYPROCSET() .EQ. 0) PRINT *, 'inner', NUMPROC()
      END SUBROUTINE
      END
`)
	write("counts.f90", `module counts
contains
  integer function width()
    integer :: w(numproc())
    width = size(w)
  end function
end module

subroutine report
  use counts
  if (myprocset() == 0) print *, 'width', width()
end subroutine
`)
	ok(t, svmf(t, dir, 2*time.Minute, "build", "-o", "prog", "counts.f90", "main.f"))
	r := svmf(t, dir, time.Minute, "run", "-np", "3", "./prog")
	ok(t, r)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	assert.Equal(t, []string{"np 3", "inner 3", "width 3"}, lines)
}

// TestReadmeSVMFortranExample: the SVM-Fortran program the README shows
// builds with svmf build and runs as shown.
func TestReadmeSVMFortranExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "```fortran\n      PROGRAM HELLO")
	require.GreaterOrEqual(t, start, 0, "the README has no SVM-Fortran example")
	end := strings.Index(text[start:], "      END\n")
	require.Greater(t, end, 0)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello.f"), []byte(text[start+len("```fortran\n"):start+end+len("      END\n")]), 0o644))
	ok(t, svmf(t, dir, 2*time.Minute, "build", "-O2", "-o", "hello", "hello.f"))
	r := svmf(t, dir, time.Minute, "run", "-np", "4", "./hello")
	ok(t, r)
	assert.Contains(t, r.stdout, "sum   500500.0")
}
