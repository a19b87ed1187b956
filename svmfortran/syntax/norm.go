package syntax

import (
	"fmt"
	"strings"
)

// norm is a statement's text as the parser reads it: the blanks outside
// constants removed and, in u, the letters outside constants in upper case.
type norm struct {
	r    *rawStmt
	free bool
	s    []byte // significant bytes in their original spelling
	u    []byte // s in upper case outside constants
	lit  []bool // s[i] is part of a character or Hollerith constant
	at   []int  // s[i] is r.text[at[i]]
}

func newNorm(r *rawStmt, free bool) *norm {
	size := len(r.text)
	n := &norm{r: r, free: free,
		s: make([]byte, 0, size), u: make([]byte, 0, size), lit: make([]bool, 0, size), at: make([]int, 0, size)}
	for i, c := range r.text {
		lit := r.lit[i]
		if !lit && isBlank(c) {
			continue
		}
		u := c
		if !lit && c >= 'a' && c <= 'z' {
			u -= 'a' - 'A'
		}
		n.s = append(n.s, c)
		n.u = append(n.u, u)
		n.lit = append(n.lit, lit)
		n.at = append(n.at, i)
	}
	return n
}

// pos is the position of s[i], or just after the statement for i past it.
func (n *norm) pos(i int) Pos {
	if i >= 0 && i < len(n.s) {
		return n.r.posAt(n.at[i])
	}
	return n.r.end
}

// text is the original text of s[a:b]: in fixed form without blanks, in free
// form as written.
func (n *norm) text(a, b int) string {
	if a >= b {
		return ""
	}
	if n.free {
		return string(n.r.text[n.at[a] : n.at[b-1]+1])
	}
	return string(n.s[a:b])
}

// textFrom is the original text from s[a] to the end of the statement, in
// its original spelling.
func (n *norm) textFrom(a int) string {
	if a >= len(n.s) {
		return ""
	}
	return string(n.r.text[n.at[a]:])
}

func (n *norm) expr(a, b int) Expr {
	if a >= b {
		return Expr{}
	}
	return Expr{Text: n.text(a, b), Pos: n.pos(a), Names: n.names(a, b)}
}

// names lists the names in s[a:b], an expression: variables, arrays,
// functions and named constants. Character and Hollerith constants,
// numbers (1.5D0, 2E3, 7_8, 1.0_DP), dotted operators and logical
// constants (.EQ., .TRUE.), component names after '%' and the keywords of
// keyword arguments (UNIT= inside parentheses, an implied DO's I=) are
// not names.
func (n *norm) names(a, b int) []Name {
	var out []Name
	depth := 0
	for i := a; i < b; {
		if n.lit[i] {
			i++
			continue
		}
		switch c := n.u[i]; {
		case c >= 'A' && c <= 'Z':
			j := n.wordEnd(i, b)
			next := n.nextSig(j, b)
			keyword := depth > 0 && next == '=' && n.nextSig(j+1, b) != '=' && n.nextSig(j+1, b) != '>'
			component := i > a && !n.lit[i-1] && n.u[i-1] == '%'
			if !keyword && !component {
				off := i - a
				if n.free {
					off = n.at[i] - n.at[a]
				}
				out = append(out, Name{Name: string(n.u[i:j]), Pos: n.pos(i), Off: off, Call: next == '('})
			}
			i = j
		case isDigit(c):
			i = n.numberEnd(i, b)
		case c == '.':
			if i+1 < b && !n.lit[i+1] && isDigit(n.u[i+1]) {
				i = n.numberEnd(i, b)
			} else if k := n.operatorEnd(i, b); k > i {
				i = k
			} else {
				i++
			}
		case c == '(' || c == '[':
			depth++
			i++
		case c == ')' || c == ']':
			depth--
			i++
		default:
			i++
		}
	}
	return out
}

// wordEnd is the end of the name or keyword starting at s[i].
func (n *norm) wordEnd(i, b int) int {
	for i < b && !n.lit[i] && (isLetter(n.u[i]) || isDigit(n.u[i]) || n.u[i] == '_' || n.u[i] == '$') {
		i++
	}
	return i
}

// nextSig is the byte at s[i] outside constants, 0 at a constant or the end.
func (n *norm) nextSig(i, b int) byte {
	if i < b && !n.lit[i] {
		return n.u[i]
	}
	return 0
}

// operatorEnd is the end of the dotted operator or logical constant
// (.EQ., .TRUE., .MYOP.) starting at s[i], or i if there is none.
func (n *norm) operatorEnd(i, b int) int {
	j := i + 1
	for j < b && !n.lit[j] && isLetter(n.u[j]) {
		j++
	}
	if j == i+1 || j >= b || n.lit[j] || n.u[j] != '.' {
		return i
	}
	return j + 1
}

// numberEnd is the end of the number starting at s[i]: digits, a
// fraction, an exponent (E, D or Q, with a sign) and a kind (_8, _DP). In
// 1.EQ.N the dot starts an operator, not a fraction.
func (n *norm) numberEnd(i, b int) int {
	digits := func(j int) int {
		for j < b && !n.lit[j] && isDigit(n.u[j]) {
			j++
		}
		return j
	}
	i = digits(i)
	if i < b && !n.lit[i] && n.u[i] == '.' && n.operatorEnd(i, b) == i {
		i = digits(i + 1)
	}
	if i < b && !n.lit[i] && (n.u[i] == 'E' || n.u[i] == 'D' || n.u[i] == 'Q') {
		j := i + 1
		if j < b && !n.lit[j] && (n.u[j] == '+' || n.u[j] == '-') {
			j++
		}
		if k := digits(j); k > j {
			i = k
		}
	}
	if i < b && !n.lit[i] && n.u[i] == '_' {
		i = n.wordEnd(i+1, b)
	}
	return i
}

// cur is a cursor over a statement. The first error it reports abandons
// the rest of the statement: the cursor moves to the end, so every loop
// over it stops, and later errors are dropped, so one mistake gives one
// message.
type cur struct {
	n      *norm
	i, end int
	d      *diags
	failed bool
}

func newCur(n *norm, d *diags) *cur {
	return &cur{n: n, end: len(n.s), d: d}
}

func (c *cur) more() bool { return c.i < c.end }

// peek is the byte at the cursor outside constants; 0 in a constant or at
// the end.
func (c *cur) peek() byte { return c.peekAt(c.i) }

func (c *cur) peekAt(i int) byte {
	if i < c.end && !c.n.lit[i] {
		return c.n.u[i]
	}
	return 0
}

// is reports whether the statement continues with s (upper case) outside
// constants.
func (c *cur) is(s string) bool {
	if c.end-c.i < len(s) {
		return false
	}
	for k := 0; k < len(s); k++ {
		if c.n.lit[c.i+k] || c.n.u[c.i+k] != s[k] {
			return false
		}
	}
	return true
}

// accept moves past s if the statement continues with it.
func (c *cur) accept(s string) bool {
	if c.is(s) {
		c.i += len(s)
		return true
	}
	return false
}

// name reads a name (a letter followed by letters, digits, '_' and '$') in
// upper case; "" if there is none.
func (c *cur) name() string {
	ch := c.peek()
	if ch < 'A' || ch > 'Z' {
		return ""
	}
	j := c.i
	for {
		ch := c.peekAt(j)
		if !(ch >= 'A' && ch <= 'Z' || isDigit(ch) || ch == '_' || ch == '$') {
			break
		}
		j++
	}
	s := string(c.n.u[c.i:j])
	c.i = j
	return s
}

// digits reads an unsigned integer of at most 9 digits; ok is false if
// there is none or it is longer.
func (c *cur) digits() (n int, ok bool) {
	j := c.i
	for isDigit(c.peekAt(j)) {
		j++
	}
	if j == c.i || j-c.i > 9 {
		return 0, false
	}
	for _, d := range c.n.u[c.i:j] {
		n = n*10 + int(d-'0')
	}
	c.i = j
	return n, true
}

// group returns the index just after the bracket matching the '(' or '['
// at j, or -1 if it is not closed in the statement.
func (c *cur) group(j int) int {
	depth := 0
	for ; j < c.end; j++ {
		switch c.peekAt(j) {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// expr reads an expression up to a byte of stops outside brackets and
// constants, an unmatched closing bracket or the end of the statement.
func (c *cur) expr(stops string) Expr {
	start := c.i
	depth := 0
loop:
	for ; c.i < c.end; c.i++ {
		ch := c.peek()
		if ch == 0 {
			continue
		}
		if depth == 0 && strings.IndexByte(stops, ch) >= 0 {
			break
		}
		switch ch {
		case '(', '[':
			depth++
		case ')', ']':
			if depth == 0 {
				break loop
			}
			depth--
		}
	}
	return c.n.expr(start, c.i)
}

// topLevel reports whether s occurs from the cursor on outside brackets and
// constants.
func (c *cur) topLevel(s string) bool {
	save := c.i
	defer func() { c.i = save }()
	depth := 0
	for ; c.i < c.end; c.i++ {
		switch c.peek() {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		default:
			if depth == 0 && c.is(s) {
				return true
			}
		}
	}
	return false
}

// pos is the position at the cursor.
func (c *cur) pos() Pos { return c.n.pos(c.i) }

// errf reports an error at the cursor and abandons the statement.
func (c *cur) errf(format string, args ...any) {
	c.errAt(c.pos(), format, args...)
}

func (c *cur) errAt(p Pos, format string, args ...any) {
	if !c.failed {
		c.d.errorf(p, format, args...)
	}
	c.failed = true
	c.i = c.end
}

// here describes what is at the cursor for an error message: the word,
// constant or character there as written.
func (c *cur) here() string {
	if !c.more() {
		return "end of statement"
	}
	t := c.n.r.text[c.n.at[c.i]:]
	lit := c.n.r.lit[c.n.at[c.i]:]
	j := 1
	switch {
	case lit[0]:
		for j < len(t) && j < 20 && lit[j] {
			j++
		}
	case isLetter(t[0]) || isDigit(t[0]):
		for j < len(t) && (isLetter(t[j]) || isDigit(t[j]) || t[j] == '_' || t[j] == '$') {
			j++
		}
	}
	return fmt.Sprintf("%q", t[:j])
}

// end reports unexpected text at the end of a statement.
func (c *cur) expectEnd(after string) {
	if c.more() {
		c.errf("unexpected %s after %s", c.here(), after)
	}
}
