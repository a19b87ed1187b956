package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svmcluster/svm/internal/cli"
	"github.com/svmcluster/svm/svmfortran/compile"
	"github.com/svmcluster/svm/svmfortran/syntax"
)

const buildUsage = `usage: svmf build [-o OUT] [-c] [-keep] [-nodist] [gfortran options...] FILES...

Compile SVM-Fortran sources (docs/svm-fortran.md) into a program that runs
with svmf run: the directives become calls to the SVM-Fortran runtime, and
gfortran ($SVM_FC) builds the result against libsvm. Fixed-form sources end
in .f, .for, .f77 or .ftn; free-form in .f90, .f95, .f03, .f08. Other files
(objects, libraries) and options svmf build does not know go to gfortran.

  -o OUT    the program (or, with -c and one source, the object) to write
  -c        compile to objects (NAME.o), do not link
  -keep     keep the generated Fortran beside each source (NAME.svm.f or NAME.svm.f90)
  -nodist   ignore the directives: build the sequential program with gfortran alone
`

// gfortranValueOptions are gfortran options whose value is the next argument.
var gfortranValueOptions = []string{"-I", "-L", "-J", "-l", "-D", "-U", "-x", "-include", "-MF", "-MT", "-MQ", "-idirafter", "-isystem", "-iquote"}

type buildArgs struct {
	out                   string
	compileOnly, keep, nd bool
	sources, pass         []string
	objects               int // other files: objects and libraries to link
	includeDirs           []string
}

func parseBuildArgs(args []string) (buildArgs, error) {
	var b buildArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", a)
			}
			i++
			return args[i], nil
		}
		switch {
		case a == "-o":
			v, err := value()
			if err != nil {
				return b, err
			}
			b.out = v
		case a == "-c":
			b.compileOnly = true
		case a == "-keep":
			b.keep = true
		case a == "-nodist":
			b.nd = true
		case slices.Contains(gfortranValueOptions, a):
			v, err := value()
			if err != nil {
				return b, err
			}
			if a == "-I" {
				b.includeDirs = append(b.includeDirs, v)
			}
			b.pass = append(b.pass, a, v)
		case strings.HasPrefix(a, "-I") && len(a) > 2:
			b.includeDirs = append(b.includeDirs, a[2:])
			b.pass = append(b.pass, a)
		case strings.HasPrefix(a, "-"):
			b.pass = append(b.pass, a)
		case isSVMSource(a):
			b.sources = append(b.sources, a)
		default:
			b.pass = append(b.pass, a)
			b.objects++
		}
	}
	if len(b.sources) == 0 && (b.objects == 0 || b.compileOnly) {
		return b, errors.New("no Fortran sources given (.f, .for, .f77, .ftn, .f90, .f95, .f03, .f08)")
	}
	if b.compileOnly && b.out != "" && len(b.sources) > 1 {
		return b, errors.New("-c with -o compiles one source; give one, or leave out -o")
	}
	return b, nil
}

func isSVMSource(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".f", ".for", ".f77", ".ftn", ".f90", ".f95", ".f03", ".f08":
		return filepath.Ext(name) == strings.ToLower(filepath.Ext(name)) // .F, .F90: preprocessor sources, left to gfortran
	}
	return false
}

// buildCommand is svmf build.
func buildCommand(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		return 2, errors.New("build: no arguments: give the sources to compile (svmf build -h)")
	}
	if cli.IsHelp(args) {
		fmt.Fprint(stdout, buildUsage)
		return 0, nil
	}
	b, err := parseBuildArgs(args)
	if err != nil {
		return 2, fmt.Errorf("build: %w", err)
	}
	if b.nd {
		return runCompiler(sequentialArgs(b), stdout, stderr)
	}
	prefix, err := installPrefix()
	if err != nil {
		return 2, fmt.Errorf("build: %w", err)
	}
	var sources []compile.Source
	for _, path := range b.sources {
		text, err := os.ReadFile(path)
		if err != nil {
			return 2, fmt.Errorf("build: %w", err)
		}
		sources = append(sources, compile.Source{Path: path, Text: text})
	}
	outs, diags := compile.Compile(sources, compile.Options{ReadInclude: func(from, name string) ([]byte, error) {
		for _, dir := range append([]string{from}, b.includeDirs...) {
			if text, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				return text, nil
			}
		}
		return nil, fmt.Errorf("cannot find %s (looked in %s)", name, strings.Join(append([]string{from}, b.includeDirs...), ", "))
	}})
	errs := 0
	for _, d := range diags {
		fmt.Fprintln(stderr, d.String())
		if d.Severity == syntax.Error {
			errs++
		}
	}
	if errs > 0 {
		return 1, fmt.Errorf("build: %d error(s)", errs)
	}
	dir, err := os.MkdirTemp("", "svmf-build-")
	if err != nil {
		return 2, fmt.Errorf("build: %w", err)
	}
	defer os.RemoveAll(dir)
	var generated []string
	for _, o := range outs {
		path := filepath.Join(dir, o.Name)
		if b.keep {
			path = filepath.Join(filepath.Dir(o.Source), o.Name)
		}
		if err := os.WriteFile(path, o.Text, 0o644); err != nil {
			return 2, fmt.Errorf("build: %w", err)
		}
		generated = append(generated, path)
	}
	flags := append([]string{"-ffixed-line-length-none", "-ffree-line-length-none"}, b.pass...)
	if !b.compileOnly {
		argv := append(flags, generated...)
		if b.out != "" {
			argv = append(argv, "-o", b.out)
		}
		full, err := compilerArgs("fc", prefix, argv)
		if err != nil {
			return 2, fmt.Errorf("build: %w", err)
		}
		return runCompiler(full, stdout, stderr)
	}
	for i, g := range generated {
		obj := b.out
		if obj == "" {
			src := b.sources[i]
			obj = strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)) + ".o"
		}
		full, err := compilerArgs("fc", prefix, append(append(slices.Clone(flags), "-c", g), "-o", obj))
		if err != nil {
			return 2, fmt.Errorf("build: %w", err)
		}
		if code, err := runCompiler(full, stdout, stderr); code != 0 || err != nil {
			return code, err
		}
	}
	return 0, nil
}

// sequentialArgs is the gfortran command of -nodist: the sources as they
// are, the directives comments.
func sequentialArgs(b buildArgs) []string {
	argv := append([]string{compilerFor("fc")}, b.pass...)
	if b.compileOnly {
		argv = append(argv, "-c")
	}
	argv = append(argv, b.sources...)
	if b.out != "" {
		argv = append(argv, "-o", b.out)
	}
	return argv
}

// runCompiler runs argv, its output to ours; the compiler's status is ours.
func runCompiler(argv []string, stdout, stderr io.Writer) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), nil
		}
		return 2, fmt.Errorf("%s: %w", argv[0], err)
	}
	return 0, nil
}
