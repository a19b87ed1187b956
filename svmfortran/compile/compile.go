// Package compile is the SVM-Fortran compiler's middle and back end: it
// checks the directives of parsed sources (package syntax) and generates
// Fortran that calls the SVM-Fortran runtime (module svm), as the paper's
// source-to-source compiler does. Ordinary statements pass through
// unchanged, with line markers so that gfortran's messages and gdb point at
// the original source.
//
// It works in three steps: each unit is analysed (its declarations, the
// tree of its executable part: tree.go), then the program (which
// subprograms run SVM code, how the build calls each: program.go), then
// each unit is written, construct by construct, with the dispatch code of
// exclusive mode (body.go, dispatch.go, directives.go). It never compiles
// a program into one that prints another answer than the sequential
// program without saying so: what it cannot make right is an error.
//
// The language is docs/svm-fortran.md. The driver (svmf build) reads the
// files, calls Compile and runs gfortran on what it returns.
package compile

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// Source is one file to compile.
type Source struct {
	Path string
	Text []byte
}

// Options control a compilation.
type Options struct {
	// ReadInclude reads the file an INCLUDE line names, from the
	// directory of the including file and then the include directories.
	ReadInclude func(from, name string) ([]byte, error)
}

// Output is the generated Fortran for one source.
type Output struct {
	Source string      // the source's path
	Name   string      // the generated file's base name: NAME.svm.f or NAME.svm.f90
	Form   syntax.Form // fixed or free, as the source
	Text   []byte
}

// maxDiagnostics caps the diagnostics of one compilation.
const maxDiagnostics = 100

// Compile checks and translates sources together: a subprogram defined in
// any of them that runs parallel constructs inherits the execution mode of
// its calls from the others (docs: Subprograms).
// It returns the outputs when there is no error, and every diagnostic,
// sorted, at most maxDiagnostics of them.
func Compile(sources []Source, opts Options) ([]Output, []syntax.Diagnostic) {
	var diags []syntax.Diagnostic
	var files []*syntax.File
	for _, src := range sources {
		path := src.Path
		f, ds := syntax.Parse(path, src.Text, syntax.Options{
			Form:       syntax.FormAuto,
			Directives: true,
			ReadInclude: func(name string) ([]byte, error) {
				if opts.ReadInclude == nil {
					return nil, fmt.Errorf("INCLUDE is not available")
				}
				return opts.ReadInclude(filepath.Dir(path), name)
			},
		})
		diags = append(diags, ds...)
		files = append(files, f)
	}
	prog := &program{units: map[string]*unitGen{}, modules: map[string]*unitGen{}}
	var gens []*fileGen
	for _, f := range files {
		gens = append(gens, newFileGen(f, prog))
	}
	for _, g := range gens {
		for _, ug := range g.units {
			ug.collect()
		}
	}
	prog.importModules(gens)
	for _, g := range gens {
		for _, ug := range g.units {
			ug.analyse()
		}
	}
	prog.analyse(gens)
	var outs []Output
	for i, g := range gens {
		text := g.generate()
		diags = append(diags, g.diags...)
		base := strings.TrimSuffix(filepath.Base(sources[i].Path), filepath.Ext(sources[i].Path))
		ext := ".svm.f"
		if g.file.Form == syntax.FormFree {
			ext = ".svm.f90"
		}
		outs = append(outs, Output{Source: sources[i].Path, Name: base + ext, Form: g.file.Form, Text: text})
	}
	diags = sortDiagnostics(diags)
	for _, d := range diags {
		if d.Severity == syntax.Error {
			return nil, diags
		}
	}
	return outs, diags
}

// sortDiagnostics orders diagnostics by position, drops exact duplicates
// and caps them.
func sortDiagnostics(diags []syntax.Diagnostic) []syntax.Diagnostic {
	slices.SortStableFunc(diags, func(a, b syntax.Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	diags = slices.CompactFunc(diags, func(a, b syntax.Diagnostic) bool { return a == b })
	if len(diags) > maxDiagnostics {
		last := diags[maxDiagnostics-1]
		diags = append(diags[:maxDiagnostics-1], syntax.Diagnostic{Pos: last.Pos, Severity: syntax.Error,
			Msg: fmt.Sprintf("too many diagnostics (%d); stopping", len(diags))})
	}
	return diags
}
