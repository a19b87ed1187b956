package syntax

import "strings"

// declarative reports whether a directive kind belongs to the
// specification part.
func declarative(k DirKind) bool {
	switch k {
	case DirProcessors, DirTemplate, DirDistribute, DirShared:
		return true
	}
	return false
}

// directive parses an SVM directive; the cursor is just after the
// sentinel. Keywords are matched with the blanks removed, so PSECTION END
// and PSECTIONEND are PSECTION_END's other spellings.
func (p *stmtParser) directive(c *cur, at Pos) *Directive {
	d := &Directive{Pos: at}
	if !c.more() {
		c.errf("missing directive after the SVM$ sentinel")
		return d
	}
	switch {
	case c.accept("PROCESSORS"):
		d.Kind = DirProcessors
		d.Decls = p.dirDecls(c, "PROCESSORS")
	case c.accept("TEMPLATE"):
		d.Kind = DirTemplate
		d.Decls = p.dirDecls(c, "TEMPLATE")
	case c.accept("CREATE"):
		d.Kind = DirCreate
		d.Decls = p.dirDecls(c, "CREATE")
	case c.accept("DESTROY"):
		d.Kind = DirDestroy
		d.Names = p.dirNames(c, "DESTROY", false)
	case c.accept("UNDEF"):
		d.Kind = DirUndef
		d.Names = p.dirNames(c, "UNDEF", false)
	case c.accept("DISTRIBUTE"):
		d.Kind = DirDistribute
		d.Dist = p.dist(c, "DISTRIBUTE")
	case c.accept("REDISTRIBUTE"):
		d.Kind = DirRedistribute
		d.Dist = p.dist(c, "REDISTRIBUTE")
	case c.accept("PDO"):
		d.Kind = DirPDO
		d.PDO = p.pdo(c)
		if d.PDO != nil {
			d.Names = d.PDO.Loops
		}
	case c.accept("PSECTION"):
		d.Kind = DirPSection
		if endMark(c) {
			d.Kind = DirPSectionEnd
		}
		c.expectEnd(d.Kind.String())
	case c.accept("SECTION"):
		d.Kind = DirSection
		if c.more() {
			if !c.accept("ON") {
				c.errf("expected ON or the end of the directive after SECTION, found %s", c.here())
				break
			}
			if d.On = c.name(); d.On == "" {
				c.errf("expected a processor arrangement after SECTION ON, found %s", c.here())
			}
			c.expectEnd("SECTION ON " + d.On)
		}
	case c.accept("EXCLUSIVE_REGION"):
		d.Kind = DirExclusiveRegion
		if endMark(c) {
			d.Kind = DirExclusiveRegionEnd
		}
		c.expectEnd(d.Kind.String())
	case c.accept("REPLICATED_REGION"):
		d.Kind = DirReplicatedRegion
		if endMark(c) {
			d.Kind = DirReplicatedRegionEnd
		}
		c.expectEnd(d.Kind.String())
	case c.accept("BARRIER"):
		d.Kind = DirBarrier
		c.expectEnd("BARRIER")
	case c.accept("CRITICAL"):
		// CRITICAL END reads CRITICALEND without its blank, so a critical
		// section cannot be called END... .
		d.Kind = DirCritical
		if endMark(c) {
			d.Kind = DirCriticalEnd
		}
		d.Name = c.name()
		c.expectEnd(d.Kind.String() + " " + d.Name)
	case c.accept("END"):
		c.accept("_")
		switch {
		case c.accept("PSECTION"):
			d.Kind = DirPSectionEnd
		case c.accept("EXCLUSIVE_REGION"):
			d.Kind = DirExclusiveRegionEnd
		case c.accept("REPLICATED_REGION"):
			d.Kind = DirReplicatedRegionEnd
		case c.accept("CRITICAL"):
			d.Kind = DirCriticalEnd
			d.Name = c.name()
		default:
			c.errf("expected PSECTION, EXCLUSIVE_REGION, REPLICATED_REGION or CRITICAL after END, found %s", c.here())
			return d
		}
		c.expectEnd("END " + strings.TrimSuffix(d.Kind.String(), "_END") + " " + d.Name)
	case c.accept("PAGE_LOCK"):
		d.Kind = DirPageLock
		d.Vars = p.dirVars(c, "PAGE_LOCK")
	case c.accept("PAGE_UNLOCK"):
		d.Kind = DirPageUnlock
		d.Vars = p.dirVars(c, "PAGE_UNLOCK")
	case c.accept("SHARED"):
		d.Kind = DirShared
		d.Names = p.dirNames(c, "SHARED", true)
	default:
		c.errf("unknown SVM directive %s", firstWord(c))
	}
	return d
}

// endMark accepts the _END (or, blanks removed, END) that turns a
// construct's directive into its end.
func endMark(c *cur) bool {
	return c.accept("_END") || c.accept("END")
}

// firstWord is the word at the cursor as written, for messages.
func firstWord(c *cur) string {
	t := c.n.r.text[c.n.at[c.i]:]
	j := 0
	for j < len(t) && (isLetter(t[j]) || isDigit(t[j]) || t[j] == '_' || t[j] == '$') {
		j++
	}
	if j == 0 {
		j = 1
	}
	return strings.ToUpper(string(t[:j]))
}

// dirDecls reads [::] NAME[(bounds)], ... for PROCESSORS, TEMPLATE and
// CREATE.
func (p *stmtParser) dirDecls(c *cur, what string) []Entity {
	c.accept("::")
	if !c.more() {
		c.errf("%s needs a name", what)
		return nil
	}
	return p.entities(c, nil, what+" directive", false)
}

// dirNames reads [::] NAME, ... for DESTROY and UNDEF, and with blocks
// also /COMMON/ block names for SHARED.
func (p *stmtParser) dirNames(c *cur, what string, blocks bool) []string {
	c.accept("::")
	if !c.more() {
		c.errf("%s needs a name", what)
		return nil
	}
	var out []string
	for {
		switch {
		case blocks && c.accept("/"):
			name := c.name()
			if name == "" {
				c.errf("expected a COMMON block name after '/' in %s, found %s", what, c.here())
				return out
			}
			if !c.accept("/") {
				c.errf("expected '/' after the COMMON block name %s, found %s", name, c.here())
				return out
			}
			out = append(out, "/"+name+"/")
		default:
			name := c.name()
			if name == "" {
				c.errf("expected a name in %s, found %s", what, c.here())
				return out
			}
			out = append(out, name)
		}
		if !c.more() {
			return out
		}
		if !c.accept(",") {
			c.errf("expected ',' or the end of the directive in %s, found %s", what, c.here())
			return out
		}
	}
}

// dirVars reads the (variables) of PAGE_LOCK and PAGE_UNLOCK.
func (p *stmtParser) dirVars(c *cur, what string) []Expr {
	if c.peek() != '(' {
		c.errf("expected '(' and the variables after %s, found %s", what, c.here())
		return nil
	}
	at := c.pos()
	vars := p.args(c, what+"(...)")
	if vars == nil && !c.failed {
		c.errAt(at, "%s needs at least one variable", what)
	}
	c.expectEnd(what + "(...)")
	return vars
}

// dist parses the rest of DISTRIBUTE and REDISTRIBUTE:
//
//	(formats) ONTO P :: T, ...
//	(I) ONTO P(MAP(I)) :: T
//	(I) ONTO HOME(T1(3*I)) :: T2
//
// The paper also writes a single ':' for '::'.
func (p *stmtParser) dist(c *cur, what string) *DistSpec {
	ds := &DistSpec{}
	if c.peek() != '(' {
		c.errf("expected '(' and the distribution formats after %s, found %s", what, c.here())
		return ds
	}
	c.i++
	type item struct {
		DistItem
		name string // a plain name: the dummy index of an indirect or linked distribution
		pos  Pos
	}
	var items []item
	for {
		it := item{pos: c.pos()}
		switch name := c.name(); name {
		case "":
			if !c.accept("*") {
				c.errf("expected a distribution format (BLOCK, CYCLIC, GENERAL_BLOCK or *), found %s", c.here())
				return ds
			}
			it.Format = DistCollapsed
		case "BLOCK":
			it.Format = DistBlock
		case "CYCLIC":
			it.Format = DistCyclic
			if c.peek() == '(' {
				it.Arg = p.parenExpr(c, "CYCLIC")
			}
		case "GENERAL_BLOCK":
			it.Format = DistGeneralBlock
			if c.peek() != '(' {
				c.errf("expected '(' and the array of block sizes after GENERAL_BLOCK, found %s", c.here())
				return ds
			}
			it.Arg = p.parenExpr(c, "GENERAL_BLOCK")
		default:
			it.name = name
		}
		items = append(items, it)
		if c.accept(",") {
			continue
		}
		if c.accept(")") {
			break
		}
		c.errf("expected ',' or ')' in the distribution formats, found %s", c.here())
		return ds
	}
	if !c.accept("ONTO") {
		c.errf("expected ONTO after the distribution formats, found %s", c.here())
		return ds
	}
	mapped := DistBlock // stays DistBlock for a standard distribution
	if c.is("HOME(") {
		c.i += len("HOME(")
		mapped = DistLinked
		if ds.Home = c.name(); ds.Home == "" {
			c.errf("expected a template name in HOME(...), found %s", c.here())
			return ds
		}
		if c.peek() != '(' {
			c.errf("expected '(' and the subscripts of %s in HOME(...), found %s", ds.Home, c.here())
			return ds
		}
		ds.HomeArgs = p.args(c, "the subscripts of "+ds.Home)
		if !c.accept(")") {
			c.errf("expected ')' to close HOME(...), found %s", c.here())
			return ds
		}
	} else {
		if ds.Onto = c.name(); ds.Onto == "" {
			c.errf("expected a processor arrangement or HOME after ONTO, found %s", c.here())
			return ds
		}
		if c.peek() == '(' {
			mapped = DistIndirect
			ds.OntoArgs = p.args(c, "the processor subscripts of "+ds.Onto)
		}
	}
	if !c.accept("::") && !c.accept(":") {
		c.errf("expected :: and the templates to distribute, found %s", c.here())
		return ds
	}
	ds.Targets = p.dirNames(c, what, false)
	if c.failed {
		return ds
	}
	if mapped != DistBlock {
		if len(items) != 1 || items[0].name == "" {
			c.errAt(items[0].pos, "an indirect or linked distribution has a single dummy index, as in %s (I) ONTO P(MAP(I))", what)
			return ds
		}
		it := items[0]
		ds.Var = it.name
		ds.Formats = []DistItem{{Format: mapped, Arg: Expr{Text: it.name, Pos: it.pos}}}
		return ds
	}
	for _, it := range items {
		if it.name != "" {
			c.errAt(it.pos, "unknown distribution format %s (expected BLOCK, CYCLIC, GENERAL_BLOCK or *; a dummy index needs ONTO P(map) or ONTO HOME(...))", it.name)
			return ds
		}
		ds.Formats = append(ds.Formats, it.DistItem)
	}
	return ds
}

// parenExpr reads (e) and returns e.
func (p *stmtParser) parenExpr(c *cur, what string) Expr {
	c.i++ // (
	e := c.expr("")
	if e.Text == "" {
		c.errf("expected an expression in %s(...), found %s", what, c.here())
		return e
	}
	if !c.accept(")") {
		c.errf("expected ')' after %s(%s, found %s", what, e.Text, c.here())
	}
	return e
}

// pdo parses the rest of PDO: (LOOPS(I, J), STRATEGY(s)) with the clauses
// in any order; STRATEGY defaults to BLOCK.
func (p *stmtParser) pdo(c *cur) *PDOSpec {
	ps := &PDOSpec{}
	at := c.pos()
	if c.peek() != '(' {
		c.errf("expected '(' and the PDO clauses (LOOPS, STRATEGY) after PDO, found %s", c.here())
		return ps
	}
	c.i++
	loops, strategy := false, false
	for {
		clause := c.pos()
		switch name := c.name(); name {
		case "LOOPS":
			if loops {
				c.errAt(clause, "duplicate LOOPS clause")
				return ps
			}
			loops = true
			if c.peek() != '(' {
				c.errf("expected '(' and the loop variables after LOOPS, found %s", c.here())
				return ps
			}
			c.i++
			for {
				v := c.name()
				if v == "" {
					c.errf("expected a loop variable in LOOPS(...), found %s", c.here())
					return ps
				}
				ps.Loops = append(ps.Loops, v)
				if c.accept(")") {
					break
				}
				if !c.accept(",") {
					c.errf("expected ',' or ')' in LOOPS(...), found %s", c.here())
					return ps
				}
			}
		case "STRATEGY":
			if strategy {
				c.errAt(clause, "duplicate STRATEGY clause")
				return ps
			}
			strategy = true
			if c.peek() != '(' {
				c.errf("expected '(' and a strategy after STRATEGY, found %s", c.here())
				return ps
			}
			c.i++
			p.strategy(c, ps)
			if !c.failed && !c.accept(")") {
				c.errf("expected ')' after the strategy, found %s", c.here())
			}
			if c.failed {
				return ps
			}
		case "":
			c.errf("expected a PDO clause (LOOPS or STRATEGY), found %s", c.here())
			return ps
		default:
			c.errAt(clause, "unknown PDO clause %s (expected LOOPS or STRATEGY)", name)
			return ps
		}
		if c.accept(",") {
			continue
		}
		if c.accept(")") {
			break
		}
		c.errf("expected ',' or ')' after the PDO clause, found %s", c.here())
		return ps
	}
	if !loops {
		c.errAt(at, "PDO needs a LOOPS clause naming the parallel loop's variable")
		return ps
	}
	c.expectEnd("PDO (...)")
	return ps
}

// strategy reads BLOCK, CYCLIC[(c)], ON_HOME(T(subscripts)),
// DYNAMIC[(c)] or SEMI_DYNAMIC(T[, c]).
func (p *stmtParser) strategy(c *cur, ps *PDOSpec) {
	at := c.pos()
	switch name := c.name(); name {
	case "":
		c.errf("expected a loop strategy (BLOCK, CYCLIC, ON_HOME, DYNAMIC or SEMI_DYNAMIC), found %s", c.here())
	case "BLOCK":
		ps.Strategy = StratBlock
	case "CYCLIC", "DYNAMIC":
		ps.Strategy = StratCyclic
		if name == "DYNAMIC" {
			ps.Strategy = StratDynamic
		}
		if c.peek() == '(' {
			ps.Chunk = p.parenExpr(c, name)
		}
	case "ON_HOME":
		ps.Strategy = StratOnHome
		if !c.accept("(") {
			c.errf("expected '(' and a template element after ON_HOME, found %s", c.here())
			return
		}
		if ps.Template = c.name(); ps.Template == "" {
			c.errf("expected a template name in ON_HOME(...), found %s", c.here())
			return
		}
		if c.peek() != '(' {
			c.errf("expected '(' and the subscripts of %s in ON_HOME(...), found %s", ps.Template, c.here())
			return
		}
		ps.Subscripts = p.args(c, "the subscripts of "+ps.Template)
		if !c.failed && !c.accept(")") {
			c.errf("expected ')' to close ON_HOME(...), found %s", c.here())
		}
	case "SEMI_DYNAMIC":
		ps.Strategy = StratSemiDynamic
		if !c.accept("(") {
			c.errf("expected '(' and a template after SEMI_DYNAMIC, found %s", c.here())
			return
		}
		if ps.Template = c.name(); ps.Template == "" {
			c.errf("expected a template name in SEMI_DYNAMIC(...), found %s", c.here())
			return
		}
		if c.accept(",") {
			if ps.Chunk = c.expr(""); ps.Chunk.Text == "" {
				c.errf("expected a chunk size in SEMI_DYNAMIC(%s, ...), found %s", ps.Template, c.here())
				return
			}
		}
		if !c.accept(")") {
			c.errf("expected ')' to close SEMI_DYNAMIC(...), found %s", c.here())
		}
	default:
		c.errAt(at, "unknown loop strategy %s (expected BLOCK, CYCLIC, ON_HOME, DYNAMIC or SEMI_DYNAMIC)", name)
	}
}
