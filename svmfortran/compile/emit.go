package compile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// emitter writes the generated file: original lines passed through, and
// generated statements, each run preceded by a line marker naming where it
// comes from, so gfortran reports positions in the user's source.
type emitter struct {
	form syntax.Form
	b    strings.Builder
	// at is the source position the next output line is attributed to by
	// the last marker (file and line), to skip redundant markers.
	atFile string
	atLine int
}

func (e *emitter) marker(file string, line int) {
	if file == e.atFile && line == e.atLine {
		return
	}
	fmt.Fprintf(&e.b, "# %d %s\n", line, strconv.Quote(file))
	e.atFile, e.atLine = file, line
}

// raw writes physical lines of file starting at line first, as they are.
func (e *emitter) raw(file string, first int, lines []string) {
	e.marker(file, first)
	for _, l := range lines {
		e.b.WriteString(l)
		e.b.WriteByte('\n')
		e.atLine++
	}
}

// stmt writes one generated statement with an optional label, attributed
// to pos. Long statements are fine: fixed form is compiled with
// -ffixed-line-length-none.
func (e *emitter) stmt(pos syntax.Pos, label int, text string) {
	e.marker(pos.File, pos.Line)
	l := ""
	if label != 0 {
		l = strconv.Itoa(label)
	}
	if e.form == syntax.FormFree {
		if l != "" {
			l += " "
		}
		e.b.WriteString(l + text + "\n")
	} else {
		fmt.Fprintf(&e.b, "%-5s %s\n", l, text)
	}
	// Every generated line of a construct points at the construct's line.
	e.atLine = -1
}

// gen writes generated statements, attributed to pos.
func (e *emitter) gen(pos syntax.Pos, stmts ...fstmt) {
	for _, l := range block(nil, stmts, 0) {
		e.stmt(pos, l.label, l.text)
	}
}

func (e *emitter) bytes() []byte { return []byte(e.b.String()) }
