package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svmcluster/svm/internal/cli"
)

// The compiler wrappers, in the manner of mpicc and mpifort: svmf cc and
// svmf fc run gcc and gfortran with SVM's include path, Fortran module and
// libraries added. They are found relative to svmf's own executable, as an
// installed MPI's are: PREFIX/bin/svmf, PREFIX/include, PREFIX/lib.

const ccUsage = `usage: svmf cc [--show] [gcc arguments]
       svmf fc [--show] [gfortran arguments]

Compile and link a C (cc) or Fortran (fc) program against libsvm: the
arguments go to the compiler ($SVM_CC, default gcc; $SVM_FC, default
gfortran) with -I PREFIX/include added and, when linking, -no-pie (so
private addresses agree across ranks, as Tmk_distribute needs) and
-L PREFIX/lib -lsvm -lpthread (fc: -lsvmf first, and -fcray-pointer).
cc also keeps TreadMarks-era C building as gcc 12 builds it (K&R
definitions, implicit int and implicit declarations are warnings, as are
mixed pointer types) and makes storing an int in a pointer an error, so
an undeclared function's 64-bit pointer is never truncated silently.
--show prints the command instead of running it.
`

// oldC are cc's flags for TreadMarks-era C: what gcc 12 warns about, later
// gccs refuse unless told; and an int stored in a pointer, which on 64-bit
// machines truncates the pointer an undeclared function returns, refused
// in gcc's words. The program's own flags come after, and win.
var oldC = []string{
	"-Wno-error=implicit-function-declaration", "-Wno-error=implicit-int",
	"-Wno-error=incompatible-pointer-types", "-Werror=int-conversion",
}

// compileCommand runs the compiler for lang ("cc" or "fc").
func compileCommand(lang string, args []string, stdout, stderr io.Writer) (int, error) {
	show := false
	if len(args) > 0 && (args[0] == "--show" || args[0] == "-show") {
		show, args = true, args[1:]
	}
	if len(args) == 0 {
		return 2, fmt.Errorf("%s: no arguments: give the files to compile (svmf %s -h)", lang, lang)
	}
	if cli.IsHelp(args) {
		fmt.Fprint(stdout, ccUsage)
		return 0, nil
	}
	prefix, err := installPrefix()
	if err != nil {
		return 2, fmt.Errorf("%s: %w", lang, err)
	}
	argv, err := compilerArgs(lang, prefix, args)
	if err != nil {
		return 2, fmt.Errorf("%s: %w", lang, err)
	}
	if show {
		fmt.Fprintln(stdout, strings.Join(argv, " "))
		return 0, nil
	}
	return runCompiler(argv, stdout, stderr)
}

// compilerArgs returns the compiler's command line for args.
func compilerArgs(lang, prefix string, args []string) ([]string, error) {
	compiler, libs := compilerFor(lang), []string{"-lsvm", "-lpthread"}
	flags := []string{"-I" + filepath.Join(prefix, "include")}
	if lang == "cc" {
		flags = append(flags, oldC...)
	}
	if lang == "fc" {
		flags = append(flags, "-fcray-pointer")
		libs = append([]string{"-lsvmf"}, libs...)
		if _, err := os.Stat(filepath.Join(prefix, "include", "svm.mod")); err != nil {
			return nil, fmt.Errorf("the Fortran module is missing (%v): libsvm was built without gfortran; install gfortran and run make build", err)
		}
	}
	argv := append([]string{compiler}, flags...)
	argv = append(argv, args...)
	if links(args) {
		argv = append(argv, "-no-pie", "-L"+filepath.Join(prefix, "lib"))
		argv = append(argv, libs...)
	}
	return argv, nil
}

// compilerFor is the compiler of lang: $SVM_CC or gcc for cc, $SVM_FC or
// gfortran for fc.
func compilerFor(lang string) string {
	env, def := "SVM_CC", "gcc"
	if lang == "fc" {
		env, def = "SVM_FC", "gfortran"
	}
	if c := os.Getenv(env); c != "" {
		return c
	}
	return def
}

// links reports whether a compiler command line links (no -c, -S, -E, ...).
func links(args []string) bool {
	return !slices.ContainsFunc(args, func(a string) bool {
		return slices.Contains([]string{"-c", "-S", "-E", "-M", "-MM", "-fsyntax-only", "--version", "-v", "-dumpversion"}, a)
	})
}

// installPrefix finds the directory svmf is installed under: the parent of
// the directory of its executable, holding include/svm.h and lib/libsvm.a.
func installPrefix() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding svmf's own executable: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", fmt.Errorf("finding svmf's own executable: %w", err)
	}
	prefix := filepath.Dir(filepath.Dir(exe))
	for _, f := range []string{filepath.Join("include", "svm.h"), filepath.Join("lib", "libsvm.a")} {
		if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
			return "", fmt.Errorf("libsvm is not installed beside %s: %s is missing (make build, or make install PREFIX=DIR, installs it)", exe, filepath.Join(prefix, f))
		}
	}
	return prefix, nil
}
