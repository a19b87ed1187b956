package syntax

import (
	"slices"
	"strings"
)

// Limits on INCLUDE: how deep includes may nest, and how many files one
// Parse reads in all (which bounds the work for include trees that read the
// same files over and over).
const (
	maxIncludeDepth = 16
	maxIncludes     = 1000
)

// fixedWidth is the number of significant columns of a fixed-form line.
const fixedWidth = 72

// rawStmt is one statement as the scanner delivers it: continuation lines
// joined, comments removed, the label split off.
type rawStmt struct {
	file        string
	first, last int // physical lines
	label       int
	labelPos    Pos
	text        []byte    // after the label, trimmed
	pos         []lineCol // the position of each byte of text in file
	lit         []bool    // whether each byte of text is part of a character or Hollerith constant
	end         Pos       // just after the last byte of text
	dir         bool      // an SVM directive; text follows the sentinel
	dirPos      Pos       // the sentinel
	include     *includeInfo
}

// lineCol is a position in a known file. Statements keep one per byte, so
// they hold no pointers for the garbage collector to follow.
type lineCol struct{ line, col int }

// posAt is the position of text[i].
func (r *rawStmt) posAt(i int) Pos {
	return Pos{File: r.file, Line: r.pos[i].line, Col: r.pos[i].col}
}

// includeInfo is what an INCLUDE line brought in.
type includeInfo struct {
	name  string
	lines []string   // nil if the file could not be read
	stmts []*rawStmt // its statements
}

// scanner turns source files into statements. It keeps the state that
// spans the files of one Parse: the stack of files being included.
type scanner struct {
	d        *diags
	opts     *Options
	free     bool
	stack    []string // the files being scanned, outermost first
	included int      // INCLUDE files read so far
}

// fileScan is the scan of one file.
type fileScan struct {
	s     *scanner
	name  string
	lines []string
	out   []*rawStmt
	cur   *stmtBuf // the statement being assembled, nil if none
}

// scanFile splits src into lines and statements.
func (s *scanner) scanFile(name string, src []byte) ([]string, []*rawStmt) {
	f := &fileScan{s: s, name: name, lines: splitLines(src)}
	if s.free {
		f.free()
	} else {
		f.fixed()
	}
	return f.lines, f.out
}

// splitLines splits src at line feeds, dropping a carriage return before
// each and the empty line after a final line feed.
func splitLines(src []byte) []string {
	if len(src) == 0 {
		return nil
	}
	text := strings.TrimSuffix(string(src), "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// stmtBuf assembles a statement byte by byte, tracking character and
// Hollerith constants across continuation lines, since a '!' in a constant
// does not start a comment.
type stmtBuf struct {
	raw      *rawStmt
	quote    byte // inside a character constant opened with this quote
	closed   byte // a constant just closed with this quote; a second one continues it
	quotePos Pos  // where the open constant starts
	holl     int  // Hollerith characters still to come
	// sig1 and sig2 are the last two non-blank bytes added, most recent
	// first; they decide whether digits may start a Hollerith constant.
	sig1, sig2 byte
	hint       int // the length of the first line
}

// inLiteral reports whether c, the next byte, is part of a constant.
func (b *stmtBuf) inLiteral(c byte) bool {
	return b.holl > 0 || b.quote != 0 || (b.closed != 0 && c == b.closed)
}

func (b *stmtBuf) add(c byte, p Pos) {
	closed := b.closed
	b.closed = 0
	lit := true
	switch {
	case b.holl > 0:
		b.holl--
	case b.quote != 0:
		if c == b.quote {
			b.quote, b.closed = 0, c
		}
	case closed != 0 && c == closed:
		b.quote = c // a doubled quote: the constant goes on
	case c == '\'' || c == '"':
		b.quote, b.quotePos = c, p
	default:
		lit = false
	}
	b.push(c, p, lit)
}

func (b *stmtBuf) push(c byte, p Pos, lit bool) {
	r := b.raw
	if r.text == nil {
		// Most statements fit on their first line: size the buffers for
		// it, within reason.
		n := min(b.hint, 256)
		r.text, r.pos, r.lit = make([]byte, 0, n), make([]lineCol, 0, n), make([]bool, 0, n)
	}
	r.text = append(r.text, c)
	r.pos = append(r.pos, lineCol{p.Line, p.Col})
	r.lit = append(r.lit, lit)
	if c != ' ' && c != '\t' {
		b.sig2, b.sig1 = b.sig1, c
	}
}

// hollerithAt reports the Hollerith constant starting at s[0], a digit
// outside any constant: n is the number of characters it holds and w the
// width of its nH prefix; w is 0 if there is none. A count follows '(',
// ',', '/', '=', a repeat count's '*' or the dot closing an operator such as
// .EQ.; anywhere else digits followed by H are a number and a name (as in
// REAL*8 H, where blanks do not count).
func (b *stmtBuf) hollerithAt(s string) (n, w int) {
	switch {
	case strings.IndexByte("(,/=", b.sig1) >= 0:
	case b.sig1 == '*' && isDigit(b.sig2):
	case b.sig1 == '.' && isLetter(b.sig2):
	default:
		return 0, 0
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		if i == 5 {
			return 0, 0 // no one writes a longer Hollerith constant
		}
		n = n*10 + int(s[i]-'0')
		i++
	}
	if n == 0 || i == len(s) || (s[i] != 'H' && s[i] != 'h') {
		return 0, 0
	}
	return n, i + 1
}

// start begins a new statement on line ln.
func (f *fileScan) start(ln int) *stmtBuf {
	f.cur = &stmtBuf{raw: &rawStmt{file: f.name, first: ln, last: ln}, hint: len(f.lines[ln-1])}
	return f.cur
}

// flush finishes the statement being assembled.
func (f *fileScan) flush() {
	b := f.cur
	if b == nil {
		return
	}
	f.cur = nil
	r := b.raw
	if b.quote != 0 {
		f.s.d.errorf(b.quotePos, "unterminated character constant")
	}
	trim(r)
	if f.s.free && !r.dir {
		f.freeLabel(r)
	}
	if len(r.text) == 0 {
		if r.label != 0 {
			f.s.d.errorf(r.labelPos, "statement label %d is not followed by a statement", r.label)
		}
		if !r.dir {
			return
		}
		r.end = Pos{File: f.name, Line: r.dirPos.Line, Col: r.dirPos.Col + len("!SVM$")}
	} else {
		last := r.posAt(len(r.pos) - 1)
		r.end = Pos{File: last.File, Line: last.Line, Col: last.Col + 1}
	}
	if !r.dir {
		if name, ok := includeName(r, f.s.free); ok {
			f.include(r, name)
		}
	}
	f.out = append(f.out, r)
}

// trim drops the blanks around a statement's text.
func trim(r *rawStmt) {
	i, j := 0, len(r.text)
	for i < j && !r.lit[i] && isBlank(r.text[i]) {
		i++
	}
	for j > i && !r.lit[j-1] && isBlank(r.text[j-1]) {
		j--
	}
	r.text, r.pos, r.lit = r.text[i:j], r.pos[i:j], r.lit[i:j]
}

// freeLabel splits a free-form statement label off the text: digits
// followed by a blank (or nothing).
func (f *fileScan) freeLabel(r *rawStmt) {
	i := 0
	for i < len(r.text) && !r.lit[i] && isDigit(r.text[i]) {
		i++
	}
	if i == 0 || (i < len(r.text) && !isBlank(r.text[i])) {
		return
	}
	r.labelPos = r.posAt(0)
	r.label = f.labelValue(string(r.text[:i]), r.labelPos)
	r.text, r.pos, r.lit = r.text[i:], r.pos[i:], r.lit[i:]
	trim(r)
}

// labelValue converts the digits of a statement label.
func (f *fileScan) labelValue(digits string, p Pos) int {
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 5 {
		f.s.d.errorf(p, "statement label %s has more than 5 digits", digits)
		return 0
	}
	if digits == "" {
		f.s.d.errorf(p, "statement label 0 is not allowed")
		return 0
	}
	n := 0
	for i := 0; i < len(digits); i++ {
		n = n*10 + int(digits[i]-'0')
	}
	return n
}

// includeName recognises an INCLUDE line: INCLUDE followed by one
// character constant and nothing else.
func includeName(r *rawStmt, free bool) (string, bool) {
	if r.text[0] != 'I' && r.text[0] != 'i' {
		return "", false
	}
	n := newNorm(r, free)
	const kw = "INCLUDE"
	if len(n.s) < len(kw)+2 || string(n.u[:len(kw)]) != kw || slices.Contains(n.lit[:len(kw)], true) {
		return "", false
	}
	for _, l := range n.lit[len(kw):] {
		if !l {
			return "", false
		}
	}
	q := n.s[len(kw)]
	body := n.s[len(kw)+1:]
	if len(body) == 0 || body[len(body)-1] != q {
		return "", false // unterminated; reported already
	}
	body = body[:len(body)-1]
	return strings.ReplaceAll(string(body), string([]byte{q, q}), string(q)), true
}

// include reads and scans an INCLUDE file in place.
func (f *fileScan) include(r *rawStmt, name string) {
	s := f.s
	r.include = &includeInfo{name: name}
	p := r.posAt(0)
	if r.label != 0 {
		s.d.errorf(r.labelPos, "an INCLUDE line cannot have a label")
	}
	switch {
	case s.opts.ReadInclude == nil:
		s.d.errorf(p, "INCLUDE %q: INCLUDE lines are not allowed here (no include reader)", name)
		return
	case slices.Contains(s.stack, name):
		s.d.errorf(p, "INCLUDE %q: include cycle %s", name, strings.Join(append(slices.Clone(s.stack), name), " -> "))
		return
	case len(s.stack) > maxIncludeDepth:
		s.d.errorf(p, "INCLUDE %q: INCLUDE files nested more than %d deep", name, maxIncludeDepth)
		return
	case s.included >= maxIncludes:
		s.d.errorf(p, "INCLUDE %q: more than %d INCLUDE files read", name, maxIncludes)
		return
	}
	s.included++
	src, err := s.opts.ReadInclude(name)
	if err != nil {
		s.d.errorf(p, "cannot read INCLUDE file %q: %v", name, err)
		return
	}
	s.stack = append(s.stack, name)
	lines, stmts := s.scanFile(name, src)
	s.stack = s.stack[:len(s.stack)-1]
	if lines == nil {
		lines = []string{}
	}
	r.include.lines, r.include.stmts = lines, stmts
}

// isSentinel reports whether a fixed-form line's columns 1-5 are a directive
// sentinel: CSVM$, *SVM$ or !SVM$ in any case.
func isSentinel(s string) bool {
	if len(s) < 5 {
		return false
	}
	switch s[0] {
	case 'C', 'c', '*', '!':
	default:
		return false
	}
	return strings.EqualFold(s[1:5], "SVM$")
}

// fixed scans fixed source form.
func (f *fileScan) fixed() {
	for i, line := range f.lines {
		f.fixedLine(line, i+1)
	}
	f.flush()
}

func (f *fileScan) fixedLine(line string, ln int) {
	d := f.s.d
	limit := len(line)
	if !f.s.opts.LongLines && limit > fixedWidth {
		limit = fixedWidth
	}
	if isSentinel(line) {
		if f.s.opts.Directives {
			f.fixedDirective(line, ln, limit)
		}
		return // a comment when directives are off
	}
	body := line[:limit]
	if strings.TrimLeft(body, " \t") == "" {
		return
	}
	switch body[0] {
	case 'C', 'c', '*', '!':
		return
	}
	pos := func(i int) Pos { return Pos{File: f.name, Line: ln, Col: i + 1} }

	// Tab form: a tab in columns 1-6 after blanks or label digits ends the
	// label field; a digit 1-9 after it marks a continuation, anything else
	// starts the statement. The tab stands for columns up to 6, so the
	// significant width after it is 66 bytes.
	if t := strings.IndexByte(body[:min(6, len(body))], '\t'); t >= 0 && strings.Trim(body[:t], " 0123456789") == "" {
		if !f.s.opts.LongLines {
			limit = min(len(line), t+1+fixedWidth-6)
		}
		body = line[:limit]
		from := t + 1
		if from < len(body) && body[from] >= '1' && body[from] <= '9' {
			f.fixedContinuation(body, ln, body[:t], from+1, pos(from))
			return
		}
		if rest := strings.TrimLeft(body[from:], " \t"); rest == "" || rest[0] == '!' {
			return // a comment line
		}
		f.fixedInitial(body, ln, body[:t], from)
		return
	}

	first := strings.IndexFunc(body, func(r rune) bool { return r != ' ' })
	if body[first] == '!' && first != 5 {
		return // a comment line
	}
	field := body[:min(5, len(body))]
	if strings.Trim(field, " 0123456789") != "" {
		// A statement in the label field, as in listings that do not indent
		// to column 7: take it from where it starts, after any label digits.
		i := first
		for i < len(body) && isDigit(body[i]) {
			i++
		}
		start := i
		for start < len(body) && isBlank(body[start]) {
			start++
		}
		d.warnf(pos(start), "statement starts in column %d, inside the label field; fixed-form statements start in column 7", start+1)
		f.fixedInitial(body, ln, body[first:i], start)
		return
	}
	col6 := byte(' ')
	if len(body) > 5 {
		col6 = body[5]
	}
	if col6 != ' ' && col6 != '0' {
		f.fixedContinuation(body, ln, field, 6, pos(5))
		return
	}
	f.fixedInitial(body, ln, field, 6)
}

// fixedInitial starts a statement whose label field is field and whose text
// starts at body[from].
func (f *fileScan) fixedInitial(body string, ln int, field string, from int) {
	f.flush()
	b := f.start(ln)
	if digits := strings.ReplaceAll(field, " ", ""); digits != "" {
		col := strings.IndexFunc(body, func(r rune) bool { return r != ' ' })
		b.raw.labelPos = Pos{File: f.name, Line: ln, Col: col + 1}
		b.raw.label = f.labelValue(digits, b.raw.labelPos)
	}
	f.fixedSegment(body, from, ln)
}

// fixedContinuation continues the statement being assembled with
// body[from:]; at is the continuation mark.
func (f *fileScan) fixedContinuation(body string, ln int, field string, from int, at Pos) {
	d := f.s.d
	switch {
	case f.cur == nil:
		d.errorf(at, "continuation line without a statement to continue")
		return
	case f.cur.raw.dir:
		d.errorf(at, "continuation line after a directive; a directive continues on a line starting with CSVM$ and a mark in column 6")
		return
	}
	if strings.TrimSpace(field) != "" {
		d.errorf(Pos{File: f.name, Line: ln, Col: 1}, "a continuation line cannot have a label")
	}
	f.cur.raw.last = ln
	f.fixedSegment(body, from, ln)
}

// fixedDirective handles a line starting with a directive sentinel.
func (f *fileScan) fixedDirective(line string, ln, limit int) {
	body := line[:limit]
	col6 := byte(' ')
	if len(body) > 5 {
		col6 = body[5]
	}
	at := Pos{File: f.name, Line: ln, Col: 6}
	if col6 != ' ' && col6 != '0' && col6 != '\t' {
		if f.cur == nil || !f.cur.raw.dir {
			f.s.d.errorf(at, "directive continuation line (column 6 is %q) without a directive to continue; column 6 of a directive's first line must be blank", col6)
			return
		}
		f.cur.raw.last = ln
		f.fixedSegment(body, 6, ln)
		return
	}
	f.flush()
	b := f.start(ln)
	b.raw.dir = true
	b.raw.dirPos = Pos{File: f.name, Line: ln, Col: 1}
	f.fixedSegment(body, 6, ln)
}

// fixedSegment adds line[from:] to the statement, up to a comment.
func (f *fileScan) fixedSegment(line string, from, ln int) {
	b := f.cur
	for i := from; i < len(line); i++ {
		c := line[i]
		p := Pos{File: f.name, Line: ln, Col: i + 1}
		if !b.inLiteral(c) {
			if c == '!' {
				return
			}
			if isDigit(c) {
				if n, w := b.hollerithAt(line[i:]); w > 0 {
					for k := range w {
						b.push(line[i+k], Pos{File: f.name, Line: ln, Col: i + k + 1}, true)
					}
					b.holl = n
					i += w - 1
					continue
				}
			}
		}
		b.add(c, p)
	}
}

// free scans free source form.
func (f *fileScan) free() {
	d := f.s.d
	cont := false // the last line ended with &
	for idx, line := range f.lines {
		ln := idx + 1
		i := skipBlanks(line, 0)
		at := Pos{File: f.name, Line: ln, Col: i + 1}
		if f.s.opts.Directives && len(line)-i >= 5 && strings.EqualFold(line[i:i+5], "!SVM$") {
			j := skipBlanks(line, i+5)
			amp := j < len(line) && line[j] == '&'
			switch {
			case cont && f.cur.raw.dir:
				f.cur.raw.last = ln
			default:
				if cont {
					d.errorf(at, "statement continued with & is followed by a directive line")
				} else if amp {
					d.errorf(at, "directive continuation line without a directive continued with &")
				}
				f.flush()
				b := f.start(ln)
				b.raw.dir = true
				b.raw.dirPos = at
			}
			from := i + 5
			if amp {
				from = j + 1
			}
			cont = f.freeSegment(line, from, ln, true)
			if !cont {
				f.flush()
			}
			continue
		}
		if i == len(line) || line[i] == '!' {
			continue // blank and comment lines may stand between continued lines
		}
		from := 0
		if cont && f.cur.raw.dir {
			d.errorf(at, "directive continued with & must go on in a line starting with !SVM$")
			f.flush()
			cont = false
		}
		if cont {
			f.cur.raw.last = ln
			if line[i] == '&' {
				from = i + 1
			}
		} else {
			f.flush()
			f.start(ln)
		}
		cont = f.freeSegment(line, from, ln, false)
		if !cont {
			f.flush()
		}
	}
	if cont {
		last := len(f.lines)
		d.errorf(Pos{File: f.name, Line: last, Col: len(f.lines[last-1]) + 1}, "the file ends in a statement continued with &")
	}
	f.flush()
}

// freeSegment adds line[from:] to the statement, up to a comment, and
// splits statements at ';' (except in directives). It reports whether the
// line ends with a continuation mark.
func (f *fileScan) freeSegment(line string, from, ln int, dir bool) bool {
	for i := from; i < len(line); i++ {
		b := f.cur
		c := line[i]
		if b.inLiteral(c) {
			if c == '&' && strings.TrimLeft(line[i+1:], " \t") == "" {
				return true
			}
		} else {
			switch c {
			case '!':
				return false
			case '&':
				rest := strings.TrimLeft(line[i+1:], " \t")
				if rest == "" || rest[0] == '!' {
					return true
				}
			case ';':
				if !dir {
					f.flush()
					f.start(ln)
					continue
				}
			}
		}
		b.add(c, Pos{File: f.name, Line: ln, Col: i + 1})
	}
	return false
}

func skipBlanks(s string, i int) int {
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return i
}

func isBlank(c byte) bool  { return c == ' ' || c == '\t' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
