package compile

import (
	"fmt"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// The executable part of a unit as a tree: DO loops, IF and SELECT CASE
// blocks and the directive constructs, each holding the statements inside
// it. The generator walks the tree, so a construct knows what it encloses
// and what encloses it (the paper's recursive dispatch code generation).
// Building it finds the structural errors: a construct that is not closed,
// or that is closed inside a block that began inside it.

type nodeKind int

const (
	leafNode       nodeKind = iota // a statement, or a directive without an end
	doNode                         // body; end: END DO, or nil when the body's last statement ends the loop
	ifNode                         // parts: IF THEN, ELSE IF, ELSE; end: END IF
	selectNode                     // parts: CASE; end: END SELECT
	exclusiveNode                  // EXCLUSIVE_REGION: body; end: EXCLUSIVE_REGION_END
	replicatedNode                 // REPLICATED_REGION: body; end: REPLICATED_REGION_END
	criticalNode                   // CRITICAL: body; end: CRITICAL_END
	psectionNode                   // PSECTION: parts: SECTION; end: PSECTION_END
	pdoNode                        // PDO: body: the DO loop it schedules (none when it is missing)
)

// node is a statement with the statements it encloses.
type node struct {
	kind   nodeKind
	stmt   *syntax.Stmt // the statement, or the one that opens the block
	body   []*node
	parts  []*part
	end    *syntax.Stmt
	parent *node
	part   *part // the branch or section of parent that n is in
	// closed: the END was seen (or a misplaced one reported), so an
	// unclosed construct is reported once.
	closed bool
	// dispatching marks a DO, IF or SELECT CASE block that the waiting
	// processors follow into, in exclusive mode, because it holds a
	// construct they join (set by the generator).
	dispatching bool
}

// part is one branch of an IF or SELECT CASE block, or one section.
type part struct {
	stmt *syntax.Stmt // IF THEN, ELSE IF, ELSE, CASE or SECTION
	body []*node
}

// children are the nodes directly inside n.
func (n *node) children() []*node {
	out := n.body
	for _, p := range n.parts {
		out = append(out, p.body...)
	}
	return out
}

// walk calls f for n and every node inside it, outer first; f returns
// false to skip what is inside a node.
func walk(nodes []*node, f func(*node) bool) {
	for _, n := range nodes {
		if f(n) {
			walk(n.children(), f)
		}
	}
}

// statements calls f for every statement of the nodes, in order, END
// statements included.
func statements(nodes []*node, f func(*syntax.Stmt)) {
	for _, n := range nodes {
		f(n.stmt)
		if n.kind == ifNode || n.kind == selectNode || n.kind == psectionNode {
			for i, p := range n.parts {
				if i > 0 || n.kind != ifNode {
					f(p.stmt)
				}
				statements(p.body, f)
			}
		} else {
			statements(n.body, f)
		}
		if n.end != nil {
			f(n.end)
		}
	}
}

type treeBuilder struct {
	ug    *unitGen
	stmts []*syntax.Stmt
	ends  []int   // the end of each DO statement (syntax.DoEnds)
	open  []*node // the blocks and constructs being built, innermost last
	// labels maps each statement label of the executable part to the node
	// of its statement.
	labels map[int]*node
}

// buildTree builds the tree of the unit's executable part.
func (ug *unitGen) buildTree() []*node {
	b := &treeBuilder{ug: ug, stmts: ug.stmts, ends: syntax.DoEnds(ug.stmts), labels: map[int]*node{}}
	nodes, _ := b.list(ug.firstExec, ug.exit, nil, "")
	if end := ug.stmts[ug.exit]; end.Label != 0 {
		// A branch to the unit's END ends its code.
		b.labels[end.Label] = &node{kind: leafNode, stmt: end}
	}
	ug.labels = b.labels
	return nodes
}

// closer reports whether s ends or divides a block or construct.
func closer(s *syntax.Stmt) bool {
	switch s.Kind {
	case syntax.KindElseIf, syntax.KindElse, syntax.KindEndIf, syntax.KindCase, syntax.KindEndSelect:
		return true
	case syntax.KindDirective:
		switch s.Dir.Kind {
		case syntax.DirSection, syntax.DirPSectionEnd, syntax.DirExclusiveRegionEnd,
			syntax.DirReplicatedRegionEnd, syntax.DirCriticalEnd:
			return true
		}
	}
	return false
}

// closes reports whether s ends or divides a block or construct of kind k.
func closes(s *syntax.Stmt, k nodeKind) bool {
	switch s.Kind {
	case syntax.KindElseIf, syntax.KindElse, syntax.KindEndIf:
		return k == ifNode
	case syntax.KindCase, syntax.KindEndSelect:
		return k == selectNode
	}
	switch s.Dir.Kind {
	case syntax.DirSection, syntax.DirPSectionEnd:
		return k == psectionNode
	case syntax.DirExclusiveRegionEnd:
		return k == exclusiveNode
	case syntax.DirReplicatedRegionEnd:
		return k == replicatedNode
	}
	return k == criticalNode
}

// opener names what a closing statement needs open, for messages.
func opener(s *syntax.Stmt) string {
	switch s.Kind {
	case syntax.KindElseIf, syntax.KindElse, syntax.KindEndIf:
		return "IF (...) THEN block"
	case syntax.KindCase, syntax.KindEndSelect:
		return "SELECT CASE block"
	}
	switch s.Dir.Kind {
	case syntax.DirSection, syntax.DirPSectionEnd:
		return "PSECTION"
	case syntax.DirExclusiveRegionEnd:
		return "EXCLUSIVE_REGION"
	case syntax.DirReplicatedRegionEnd:
		return "REPLICATED_REGION"
	}
	return "CRITICAL section"
}

// list builds the nodes of statements [i, hi) inside the open node n (nil
// at the top), stopping at a statement that ends or divides n; it returns
// the nodes and the index of that statement (hi when there is none).
// Statements that end or divide other constructs are reported and skipped.
// what names the block that bounds n, for the message when n is not closed
// by hi.
func (b *treeBuilder) list(i, hi int, n *node, what string) ([]*node, int) {
	var out []*node
	for i < hi {
		s := b.stmts[i]
		if closer(s) {
			if n != nil && closes(s, n.kind) {
				return out, i
			}
			b.misplaced(s, n)
			i++
			continue
		}
		c, next := b.node(i, hi, n)
		out = append(out, c)
		i = next
	}
	if n != nil && n.kind != doNode && n.kind != pdoNode && !n.closed {
		n.closed = true
		if what == "" {
			b.ug.errorf(n.stmt.Pos, "%s is not closed (%s missing)", nodeName(n), endName(n))
		} else {
			b.ug.errorf(n.stmt.Pos, "%s is not closed inside %s (%s must come before its end)", nodeName(n), what, endName(n))
		}
	}
	return out, hi
}

// misplaced reports a statement that ends or divides a construct other
// than the innermost open one, n.
func (b *treeBuilder) misplaced(s *syntax.Stmt, n *node) {
	for k := len(b.open) - 1; k >= 0; k-- {
		outer := b.open[k]
		if !closes(s, outer.kind) {
			continue
		}
		switch {
		case s.Kind == syntax.KindElseIf, s.Kind == syntax.KindElse, s.Kind == syntax.KindCase,
			s.Kind == syntax.KindDirective && s.Dir.Kind == syntax.DirSection:
		default:
			outer.closed = true // reported here, not again as unclosed
		}
		if s.Kind == syntax.KindDirective && s.Dir.Kind == syntax.DirSection {
			b.ug.errorf(s.Pos, "SECTION inside the %s at line %d, which began in the previous section", nodeName(n), n.stmt.Pos.Line)
			return
		}
		b.ug.errorf(s.Pos, "%s inside the %s at line %d, which began inside the %s", stmtName(s), nodeName(n), n.stmt.Pos.Line, nodeName(outer))
		return
	}
	if s.Kind == syntax.KindDirective && s.Dir.Kind == syntax.DirSection {
		b.ug.errorf(s.Pos, "SECTION outside a PSECTION construct")
		return
	}
	b.ug.errorf(s.Pos, "%s without an open %s", stmtName(s), opener(s))
}

// node builds the node of statement i, and returns it with the index of
// the statement after it.
func (b *treeBuilder) node(i, hi int, parent *node) (*node, int) {
	s := b.stmts[i]
	n := &node{kind: leafNode, stmt: s, parent: parent}
	if s.Label != 0 {
		b.labels[s.Label] = n
	}
	b.open = append(b.open, n)
	defer func() { b.open = b.open[:len(b.open)-1] }()
	switch {
	case s.Kind == syntax.KindDo && s.Do != nil && b.ends[i] >= 0 && b.ends[i] < hi:
		n.kind = doNode
		end := b.ends[i]
		last := end + 1 // a labelled DO: its terminal statement is the body's last
		if b.stmts[end].Kind == syntax.KindEndDo {
			last, n.end = end, b.stmts[end]
			if n.end.Label != 0 {
				// A branch to END DO ends the iteration, inside the loop.
				b.labels[n.end.Label] = &node{kind: leafNode, stmt: n.end, parent: n}
			}
		}
		n.body, _ = b.list(i+1, last, n, "")
		return n, end + 1
	case s.Kind == syntax.KindIf, s.Kind == syntax.KindSelectCase:
		n.kind = ifNode
		if s.Kind == syntax.KindSelectCase {
			n.kind = selectNode
		}
		return n, b.parts(n, i, hi)
	case s.Kind == syntax.KindDirective:
		switch s.Dir.Kind {
		case syntax.DirExclusiveRegion, syntax.DirReplicatedRegion, syntax.DirCritical:
			n.kind = map[syntax.DirKind]nodeKind{syntax.DirExclusiveRegion: exclusiveNode,
				syntax.DirReplicatedRegion: replicatedNode, syntax.DirCritical: criticalNode}[s.Dir.Kind]
			body, stop := b.list(i+1, hi, n, b.enclosing())
			n.body = body
			if stop < hi {
				n.end, n.closed = b.stmts[stop], true
				b.checkEnd(n)
				return n, stop + 1
			}
			return n, hi
		case syntax.DirPSection:
			n.kind = psectionNode
			return n, b.parts(n, i, hi)
		case syntax.DirPDO:
			n.kind = pdoNode
			if i+1 < hi && b.stmts[i+1].Kind == syntax.KindDo {
				loop, next := b.node(i+1, hi, n)
				n.body = []*node{loop}
				return n, next
			}
		}
	}
	return n, i + 1
}

// parts builds the branches of an IF or SELECT CASE block, or the sections
// of a PSECTION, n opened by statement i; it returns the index after its
// end.
func (b *treeBuilder) parts(n *node, i, hi int) int {
	what := b.enclosing()
	if n.kind == ifNode {
		n.parts = []*part{{stmt: n.stmt}}
	}
	for next := i + 1; ; {
		body, stop := b.list(next, hi, n, what)
		if len(n.parts) == 0 {
			if len(body) > 0 {
				b.ug.errorf(body[0].stmt.Pos, "a statement between %s and its first %s", stmtName(n.stmt), map[nodeKind]string{selectNode: "CASE", psectionNode: "SECTION"}[n.kind])
			}
		} else {
			last := n.parts[len(n.parts)-1]
			for _, c := range body {
				c.part = last
			}
			last.body = append(last.body, body...)
		}
		if stop >= hi {
			return hi
		}
		s := b.stmts[stop]
		switch {
		case s.Kind == syntax.KindEndIf, s.Kind == syntax.KindEndSelect,
			s.Kind == syntax.KindDirective && s.Dir.Kind == syntax.DirPSectionEnd:
			n.end, n.closed = s, true
			if s.Label != 0 {
				// A branch to END IF goes to where the block ends: it
				// stands where the block does.
				b.labels[s.Label] = &node{kind: leafNode, stmt: s, parent: n}
			}
			return stop + 1
		}
		n.parts = append(n.parts, &part{stmt: s})
		next = stop + 1
	}
}

// enclosing describes the block that bounds the construct being opened,
// for the message when it is not closed.
func (b *treeBuilder) enclosing() string {
	for k := len(b.open) - 2; k >= 0; k-- {
		switch o := b.open[k]; o.kind {
		case doNode, ifNode, selectNode:
			return fmt.Sprintf("the %s at line %d", nodeName(o), o.stmt.Pos.Line)
		case psectionNode:
			return fmt.Sprintf("its section of the PSECTION at line %d", o.stmt.Pos.Line)
		}
	}
	return ""
}

// checkEnd checks a construct's closing directive against its opening.
func (b *treeBuilder) checkEnd(n *node) {
	if n.kind == criticalNode && n.end.Dir.Name != "" && n.end.Dir.Name != n.stmt.Dir.Name {
		name := n.stmt.Dir.Name
		if name == "" {
			name = "(unnamed)"
		}
		b.ug.errorf(n.end.Pos, "CRITICAL_END %s ends critical section %s", n.end.Dir.Name, name)
	}
}

// nodeName names a block or construct for messages.
func nodeName(n *node) string {
	return map[nodeKind]string{doNode: "DO loop", ifNode: "IF block", selectNode: "SELECT CASE block",
		exclusiveNode: "EXCLUSIVE_REGION", replicatedNode: "REPLICATED_REGION", criticalNode: "CRITICAL section",
		psectionNode: "PSECTION", pdoNode: "parallel loop"}[n.kind]
}

func endName(n *node) string {
	switch n.kind {
	case ifNode:
		return "END IF"
	case selectNode:
		return "END SELECT"
	}
	return n.stmt.Dir.Kind.String() + "_END"
}

// stmtName names a statement for messages: its directive, or its kind.
func stmtName(s *syntax.Stmt) string {
	if s.Kind == syntax.KindDirective {
		return s.Dir.Kind.String()
	}
	return s.Kind.String()
}
