package syntax

import (
	"cmp"
	"fmt"
	"slices"
)

// Pos is a position in a source file. Line and Col are 1-based; Col counts
// bytes, so a tab is one column.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Severity says whether a diagnostic is an error or a warning.
type Severity int

const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// Diagnostic is an error or warning found in the source.
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	Msg      string
}

// String formats the diagnostic the way compilers do:
// "file:line:col: error: message".
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s", d.Pos, d.Severity, d.Msg)
}

// maxDiagnostics caps the diagnostics Parse returns; one more says that
// there were too many.
const maxDiagnostics = 100

// diags collects the diagnostics of one Parse.
type diags struct {
	main string // the parsed file, whose diagnostics sort first
	list []Diagnostic
}

func (d *diags) errorf(p Pos, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: p, Severity: Error, Msg: fmt.Sprintf(format, args...)})
}

func (d *diags) warnf(p Pos, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: p, Severity: Warning, Msg: fmt.Sprintf(format, args...)})
}

// result sorts the diagnostics by position (the parsed file's first, then
// INCLUDE files' by name), drops duplicates and applies the cap.
func (d *diags) result() []Diagnostic {
	list := slices.Clone(d.list)
	slices.SortStableFunc(list, func(a, b Diagnostic) int {
		am, bm := a.Pos.File != d.main, b.Pos.File != d.main
		if am != bm {
			if am {
				return 1
			}
			return -1
		}
		return cmp.Or(
			cmp.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	list = slices.Compact(list)
	if len(list) > maxDiagnostics {
		next := list[maxDiagnostics]
		list = append(list[:maxDiagnostics:maxDiagnostics], Diagnostic{
			Pos:      next.Pos,
			Severity: Error,
			Msg:      fmt.Sprintf("too many errors (%d more diagnostics not shown)", len(list)-maxDiagnostics),
		})
	}
	return list
}
