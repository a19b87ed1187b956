package syntax

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The paper's figures, verbatim (Figure 4: the original code).
const (
	figure1 = `
CSVM$ PROCESSORS:: P(10),P1(10)

CSVM$ PSECTION
CSVM$ SECTION ON P
    CALL F()
CSVM$ SECTION ON P1
    CALL G()
CSVM$ PSECTION_END

`
	figure2 = `
CSVM$ PROCESSORS:: P(NUMPROC())

CSVM$ TEMPLATE:: NODES(17000)
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: NODES
CSVM$ TEMPLATE:: BOUNDARY_NODES(1000)
CSVM$ DISTRIBUTE (I) ONTO
CSVM$+ HOME(NODES(INDIRECT(I))): BOUNDARY_NODES

`
	figure3 = `
CSVM$ PROCESSORS:: P(NUMPROC())
CSVM$ TEMPLATE:: T(N)
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: T

C    -- direct scheduling --
CSVM$ PDO (LOOPS(I),STRATEGY(BLOCK))
DO I=1,N
    ...
ENDDO

C    -- predefined scheduling --
CSVM$ PDO (LOOPS(I),STRATEGY(ON_HOME(T(I))))
DO I=1,N
    ...
ENDDO

`
	figure4 = `PROGRAM dispatch
CSVM$ EXCLUSIVE_REGION
  i = 1
  CALL sub
  i = 2
CSVM$ EXCLUSIVE_REGION_END
END
`
	// The examples of indirect and linked distribution in section 4.
	indirectExample = `CSVM$ PROCESSORS:: P(N)
CSVM$ TEMPLATE:: T(N)
CSVM$ DISTRIBUTE (I) ONTO P(MAP(I)):: T
`
	linkedExample = `CSVM$ PROCESSORS:: P(3)
CSVM$ TEMPLATE:: T1(15), T2(5)
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: T1
CSVM$ DISTRIBUTE (I) ONTO HOME(T1(3*I)):: T1
`
)

// noPos clears the positions in a directive, for comparisons.
func noPos(d *Directive) Directive {
	out := *d
	out.Pos = Pos{}
	ents := func(es []Entity) []Entity {
		var r []Entity
		for _, e := range es {
			e.Pos = Pos{}
			var ds []Bound
			for _, b := range e.Dims {
				b.Lo, b.Hi = textOnly(b.Lo), textOnly(b.Hi)
				ds = append(ds, b)
			}
			e.Dims = ds
			r = append(r, e)
		}
		return r
	}
	exprs := func(es []Expr) []Expr {
		var r []Expr
		for _, e := range es {
			r = append(r, textOnly(e))
		}
		return r
	}
	out.Decls = ents(d.Decls)
	out.Vars = exprs(d.Vars)
	if d.Dist != nil {
		ds := *d.Dist
		ds.OntoArgs, ds.HomeArgs = exprs(ds.OntoArgs), exprs(ds.HomeArgs)
		ds.Formats = nil
		for _, f := range d.Dist.Formats {
			f.Arg = textOnly(f.Arg)
			ds.Formats = append(ds.Formats, f)
		}
		out.Dist = &ds
	}
	if d.PDO != nil {
		ps := *d.PDO
		ps.Chunk = textOnly(ps.Chunk)
		ps.Subscripts = exprs(ps.Subscripts)
		out.PDO = &ps
	}
	return out
}

func hi(texts ...string) []Bound {
	var out []Bound
	for _, t := range texts {
		out = append(out, Bound{Hi: Expr{Text: t}})
	}
	return out
}

func ex(texts ...string) []Expr {
	var out []Expr
	for _, t := range texts {
		out = append(out, Expr{Text: t})
	}
	return out
}

// directiveTests are single directive lines after the sentinel.
var directiveTests = []struct {
	text string
	want Directive
}{
	{"PROCESSORS:: P(NUMPROC()), Q(2,4)", Directive{Kind: DirProcessors, Decls: []Entity{
		{Name: "P", Dims: hi("NUMPROC()")}, {Name: "Q", Dims: hi("2", "4")}}}},
	{"PROCESSORS P(8)", Directive{Kind: DirProcessors, Decls: []Entity{{Name: "P", Dims: hi("8")}}}},
	{"processors :: p(10), p1(10)", Directive{Kind: DirProcessors, Decls: []Entity{
		{Name: "P", Dims: hi("10")}, {Name: "P1", Dims: hi("10")}}}},
	{"TEMPLATE:: T(N), T2(0:M,N), T3(:,:)", Directive{Kind: DirTemplate, Decls: []Entity{
		{Name: "T", Dims: hi("N")},
		{Name: "T2", Dims: []Bound{{Lo: Expr{Text: "0"}, Hi: Expr{Text: "M"}}, {Hi: Expr{Text: "N"}}}},
		{Name: "T3", Dims: []Bound{{Hi: Expr{Text: ":"}}, {Hi: Expr{Text: ":"}}}}}}},
	{"TEMPLATE T(N)", Directive{Kind: DirTemplate, Decls: []Entity{{Name: "T", Dims: hi("N")}}}},
	{"CREATE T(N)", Directive{Kind: DirCreate, Decls: []Entity{{Name: "T", Dims: hi("N")}}}},
	{"CREATE:: T(N), T2(M,M)", Directive{Kind: DirCreate, Decls: []Entity{
		{Name: "T", Dims: hi("N")}, {Name: "T2", Dims: hi("M", "M")}}}},
	{"DESTROY T", Directive{Kind: DirDestroy, Names: []string{"T"}}},
	{"DESTROY T, T2", Directive{Kind: DirDestroy, Names: []string{"T", "T2"}}},
	{"UNDEF T", Directive{Kind: DirUndef, Names: []string{"T"}}},
	{"DISTRIBUTE (BLOCK) ONTO P:: NODES", Directive{Kind: DirDistribute, Dist: &DistSpec{
		Formats: []DistItem{{Format: DistBlock}}, Onto: "P", Targets: []string{"NODES"}}}},
	{"DISTRIBUTE (BLOCK, *) ONTO P :: T, T2", Directive{Kind: DirDistribute, Dist: &DistSpec{
		Formats: []DistItem{{Format: DistBlock}, {Format: DistCollapsed}}, Onto: "P", Targets: []string{"T", "T2"}}}},
	{"DISTRIBUTE (CYCLIC) ONTO P :: T", Directive{Kind: DirDistribute, Dist: &DistSpec{
		Formats: []DistItem{{Format: DistCyclic}}, Onto: "P", Targets: []string{"T"}}}},
	{"DISTRIBUTE (CYCLIC(3), GENERAL_BLOCK(SIZES)) ONTO Q :: T", Directive{Kind: DirDistribute, Dist: &DistSpec{
		Formats: []DistItem{{Format: DistCyclic, Arg: Expr{Text: "3"}}, {Format: DistGeneralBlock, Arg: Expr{Text: "SIZES"}}},
		Onto:    "Q", Targets: []string{"T"}}}},
	{"DISTRIBUTE (I) ONTO P(MAP(I)):: T", Directive{Kind: DirDistribute, Dist: &DistSpec{
		Formats: []DistItem{{Format: DistIndirect, Arg: Expr{Text: "I"}}}, Var: "I",
		Onto: "P", OntoArgs: ex("MAP(I)"), Targets: []string{"T"}}}},
	{"DISTRIBUTE (I) ONTO HOME(T1(3*I)) :: T2", Directive{Kind: DirDistribute, Dist: &DistSpec{
		Formats: []DistItem{{Format: DistLinked, Arg: Expr{Text: "I"}}}, Var: "I",
		Home: "T1", HomeArgs: ex("3*I"), Targets: []string{"T2"}}}},
	{"DISTRIBUTE (I) ONTO HOME(NODES(INDIRECT(I))): BOUNDARY_NODES", Directive{Kind: DirDistribute, Dist: &DistSpec{
		Formats: []DistItem{{Format: DistLinked, Arg: Expr{Text: "I"}}}, Var: "I",
		Home: "NODES", HomeArgs: ex("INDIRECT(I)"), Targets: []string{"BOUNDARY_NODES"}}}},
	{"REDISTRIBUTE (CYCLIC(K+1)) ONTO P :: T", Directive{Kind: DirRedistribute, Dist: &DistSpec{
		Formats: []DistItem{{Format: DistCyclic, Arg: Expr{Text: "K+1"}}}, Onto: "P", Targets: []string{"T"}}}},
	{"REDISTRIBUTE (J) ONTO P(OWNER(J)) :: T", Directive{Kind: DirRedistribute, Dist: &DistSpec{
		Formats: []DistItem{{Format: DistIndirect, Arg: Expr{Text: "J"}}}, Var: "J",
		Onto: "P", OntoArgs: ex("OWNER(J)"), Targets: []string{"T"}}}},
	{"PDO (LOOPS(I),STRATEGY(BLOCK))", Directive{Kind: DirPDO, Names: []string{"I"},
		PDO: &PDOSpec{Loops: []string{"I"}, Strategy: StratBlock}}},
	{"PDO (LOOPS(I, J))", Directive{Kind: DirPDO, Names: []string{"I", "J"},
		PDO: &PDOSpec{Loops: []string{"I", "J"}, Strategy: StratBlock}}},
	{"PDO (STRATEGY(CYCLIC), LOOPS(I))", Directive{Kind: DirPDO, Names: []string{"I"},
		PDO: &PDOSpec{Loops: []string{"I"}, Strategy: StratCyclic}}},
	{"PDO (LOOPS(I), STRATEGY(CYCLIC(4)))", Directive{Kind: DirPDO, Names: []string{"I"},
		PDO: &PDOSpec{Loops: []string{"I"}, Strategy: StratCyclic, Chunk: Expr{Text: "4"}}}},
	{"PDO (LOOPS(I,J),STRATEGY(ON_HOME(T(I+1,J))))", Directive{Kind: DirPDO, Names: []string{"I", "J"},
		PDO: &PDOSpec{Loops: []string{"I", "J"}, Strategy: StratOnHome, Template: "T", Subscripts: ex("I+1", "J")}}},
	{"PDO (LOOPS(I), STRATEGY(DYNAMIC))", Directive{Kind: DirPDO, Names: []string{"I"},
		PDO: &PDOSpec{Loops: []string{"I"}, Strategy: StratDynamic}}},
	{"PDO (LOOPS(I), STRATEGY(DYNAMIC(N/10)))", Directive{Kind: DirPDO, Names: []string{"I"},
		PDO: &PDOSpec{Loops: []string{"I"}, Strategy: StratDynamic, Chunk: Expr{Text: "N/10"}}}},
	{"PDO (LOOPS(I), STRATEGY(SEMI_DYNAMIC(T)))", Directive{Kind: DirPDO, Names: []string{"I"},
		PDO: &PDOSpec{Loops: []string{"I"}, Strategy: StratSemiDynamic, Template: "T"}}},
	{"PDO (LOOPS(I), STRATEGY(SEMI_DYNAMIC(T, 2)))", Directive{Kind: DirPDO, Names: []string{"I"},
		PDO: &PDOSpec{Loops: []string{"I"}, Strategy: StratSemiDynamic, Template: "T", Chunk: Expr{Text: "2"}}}},
	{"PSECTION", Directive{Kind: DirPSection}},
	{"SECTION", Directive{Kind: DirSection}},
	{"SECTION ON P1", Directive{Kind: DirSection, On: "P1"}},
	{"PSECTION_END", Directive{Kind: DirPSectionEnd}},
	{"PSECTION END", Directive{Kind: DirPSectionEnd}},
	{"END PSECTION", Directive{Kind: DirPSectionEnd}},
	{"EXCLUSIVE_REGION", Directive{Kind: DirExclusiveRegion}},
	{"EXCLUSIVE_REGION_END", Directive{Kind: DirExclusiveRegionEnd}},
	{"EXCLUSIVE_REGION END", Directive{Kind: DirExclusiveRegionEnd}},
	{"END EXCLUSIVE_REGION", Directive{Kind: DirExclusiveRegionEnd}},
	{"REPLICATED_REGION", Directive{Kind: DirReplicatedRegion}},
	{"REPLICATED_REGION_END", Directive{Kind: DirReplicatedRegionEnd}},
	{"REPLICATED_REGION END", Directive{Kind: DirReplicatedRegionEnd}},
	{"END REPLICATED_REGION", Directive{Kind: DirReplicatedRegionEnd}},
	{"BARRIER", Directive{Kind: DirBarrier}},
	{"CRITICAL", Directive{Kind: DirCritical}},
	{"CRITICAL UPDATE", Directive{Kind: DirCritical, Name: "UPDATE"}},
	{"CRITICAL_END", Directive{Kind: DirCriticalEnd}},
	{"CRITICAL_END UPDATE", Directive{Kind: DirCriticalEnd, Name: "UPDATE"}},
	{"END CRITICAL", Directive{Kind: DirCriticalEnd}},
	{"END CRITICAL UPDATE", Directive{Kind: DirCriticalEnd, Name: "UPDATE"}},
	{"PAGE_LOCK(A, B(3))", Directive{Kind: DirPageLock, Vars: ex("A", "B(3)")}},
	{"PAGE_UNLOCK(A, B(3))", Directive{Kind: DirPageUnlock, Vars: ex("A", "B(3)")}},
	{"SHARED :: A, B, /BLK/", Directive{Kind: DirShared, Names: []string{"A", "B", "/BLK/"}}},
	{"SHARED X", Directive{Kind: DirShared, Names: []string{"X"}}},
}

func TestDirectives(t *testing.T) {
	for _, tt := range directiveTests {
		t.Run(tt.text, func(t *testing.T) {
			for _, src := range []struct{ name, text string }{
				{"s.f", fixed("|SUBROUTINE S", "CSVM$ "+tt.text, "|END")},
				{"s.f", fixed("|SUBROUTINE S", "csvm$ "+tt.text, "|END")},
				{"s.f", fixed("|SUBROUTINE S", "*SVM$ "+tt.text, "|END")},
				{"s.f", fixed("|SUBROUTINE S", "!svm$ "+tt.text, "|END")},
				{"s.f90", free("subroutine s", "  !SVM$ "+tt.text, "end")},
				{"s.f90", free("subroutine s", "!svm$ "+tt.text+" ! a comment", "end")},
			} {
				u := only(t, parseOK(t, src.name, src.text, withDirectives))
				require.Len(t, u.Stmts, 3, src.text)
				s := u.Stmts[1]
				require.Equal(t, KindDirective, s.Kind)
				require.NotNil(t, s.Dir)
				assert.Equal(t, tt.want, noPos(s.Dir), src.text)
				assert.Equal(t, s.Pos, s.Dir.Pos)
				assert.Equal(t, declarative(tt.want.Kind), s.Spec)
			}
		})
	}
}

// In fixed form blanks do not count, so a directive may be spelled without
// them or with blanks inside its words.
func TestDirectiveBlanks(t *testing.T) {
	for _, text := range []string{
		"DISTRIBUTE(BLOCK)ONTOP::T",
		"DIS TRI BUTE ( BLO CK ) ON TO P : : T",
	} {
		u := only(t, parseOK(t, "s.f", fixed("|SUBROUTINE S", "CSVM$ "+text, "|END"), withDirectives))
		assert.Equal(t, Directive{Kind: DirDistribute, Dist: &DistSpec{
			Formats: []DistItem{{Format: DistBlock}}, Onto: "P", Targets: []string{"T"}}}, noPos(u.Stmts[1].Dir))
	}
}

func TestDirectivePositions(t *testing.T) {
	src := fixed(
		"|SUBROUTINE S",
		"CSVM$ PROCESSORS:: P(4)",
		"CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(T(I+1))))",
		"|END",
	)
	u := only(t, parseOK(t, "s.f", src, withDirectives))
	p := u.Stmts[1].Dir
	assert.Equal(t, Pos{"s.f", 2, 1}, p.Pos)
	assert.Equal(t, Pos{"s.f", 2, 20}, p.Decls[0].Pos)
	assert.Equal(t, Pos{"s.f", 2, 22}, p.Decls[0].Dims[0].Hi.Pos)
	assert.Equal(t, Pos{"s.f", 3, 41}, u.Stmts[2].Dir.PDO.Subscripts[0].Pos)
	assert.Equal(t, "PDO (LOOPS(I), STRATEGY(ON_HOME(T(I+1))))", u.Stmts[2].Text)

	u = only(t, parseOK(t, "s.f90", free("subroutine s", "  !SVM$ barrier", "end"), withDirectives))
	assert.Equal(t, Pos{"s.f90", 2, 3}, u.Stmts[1].Pos)
}

func TestDirectiveContinuation(t *testing.T) {
	want := Directive{Kind: DirDistribute, Dist: &DistSpec{
		Formats: []DistItem{{Format: DistCyclic, Arg: Expr{Text: "2"}}}, Onto: "P", Targets: []string{"T", "T2"}}}
	for _, src := range []struct{ name, text string }{
		{"s.f", fixed("|SUBROUTINE S", "CSVM$ DISTRIBUTE (CYCLIC(2))", "C a comment", "CSVM$+ ONTO P ::", "CSVM$1 T, T2", "|END")},
		{"s.f", fixed("|SUBROUTINE S", "CSVM$ DISTRIBUTE (CYC", "*SVM$&LIC(2)) ONTO P :: T, T2", "|END")},
		{"s.f90", free("subroutine s", "!SVM$ DISTRIBUTE (CYCLIC(2)) & ! comment", "!SVM$& ONTO P :: &", "  !SVM$ & T, T2", "end")},
		{"s.f90", free("subroutine s", "!SVM$ DISTRIBUTE (CYCLIC(2)) &", "", "! comment", "!SVM$ ONTO P :: T, T2", "end")},
	} {
		u := only(t, parseOK(t, src.name, src.text, withDirectives))
		require.Len(t, u.Stmts, 3, src.text)
		assert.Equal(t, want, noPos(u.Stmts[1].Dir), src.text)
		assert.Equal(t, 2, u.Stmts[1].FirstLine)
	}
}

func TestDirectiveFigures(t *testing.T) {
	t.Run("figure 1", func(t *testing.T) {
		u := only(t, parseOK(t, "fig1.f", figure1+"      END\n", withDirectives))
		require.Equal(t, []StmtKind{KindDirective, KindDirective, KindDirective, KindCall, KindDirective, KindCall, KindDirective, KindEnd}, kinds(u.Stmts))
		assert.Equal(t, []Entity{{Name: "P", Dims: hi("10")}, {Name: "P1", Dims: hi("10")}}, noPos(u.Stmts[0].Dir).Decls)
		assert.Equal(t, DirPSection, u.Stmts[1].Dir.Kind)
		assert.Equal(t, Directive{Kind: DirSection, On: "P"}, noPos(u.Stmts[2].Dir))
		assert.Equal(t, "F", u.Stmts[3].Call.Name)
		assert.Equal(t, Directive{Kind: DirSection, On: "P1"}, noPos(u.Stmts[4].Dir))
		assert.Equal(t, DirPSectionEnd, u.Stmts[6].Dir.Kind)
		assert.Equal(t, 0, u.FirstExecutable()-1, "PSECTION is executable")
	})
	t.Run("figure 2", func(t *testing.T) {
		u := only(t, parseOK(t, "fig2.f", figure2+"      END\n", withDirectives))
		require.Len(t, u.Stmts, 6)
		assert.Equal(t, Directive{Kind: DirDistribute, Dist: &DistSpec{
			Formats: []DistItem{{Format: DistBlock}}, Onto: "P", Targets: []string{"NODES"}}}, noPos(u.Stmts[2].Dir))
		link := u.Stmts[4]
		assert.Equal(t, 7, link.FirstLine)
		assert.Equal(t, 8, link.LastLine)
		assert.Equal(t, "DISTRIBUTE (I) ONTO HOME(NODES(INDIRECT(I))): BOUNDARY_NODES", link.Text)
		assert.Equal(t, Directive{Kind: DirDistribute, Dist: &DistSpec{
			Formats: []DistItem{{Format: DistLinked, Arg: Expr{Text: "I"}}}, Var: "I",
			Home: "NODES", HomeArgs: ex("INDIRECT(I)"), Targets: []string{"BOUNDARY_NODES"}}}, noPos(link.Dir))
		assert.Equal(t, Pos{"fig2.f", 8, 19}, link.Dir.Dist.HomeArgs[0].Pos)
		assert.Equal(t, 5, u.FirstExecutable(), "all of Figure 2 is specification")
	})
	t.Run("figure 3", func(t *testing.T) {
		u := only(t, parseOK(t, "fig3.f", figure3+"      END\n", withDirectives))
		require.Equal(t, []StmtKind{KindDirective, KindDirective, KindDirective,
			KindDirective, KindDo, KindOther, KindEndDo,
			KindDirective, KindDo, KindOther, KindEndDo, KindEnd}, kinds(u.Stmts))
		assert.Equal(t, &PDOSpec{Loops: []string{"I"}, Strategy: StratBlock}, u.Stmts[3].Dir.PDO)
		assert.Equal(t, PDOSpec{Loops: []string{"I"}, Strategy: StratOnHome, Template: "T", Subscripts: ex("I")}, *noPos(u.Stmts[7].Dir).PDO)
		for _, i := range []int{4, 8} {
			end, err := u.DoEnd(i)
			require.NoError(t, err)
			assert.Equal(t, i+2, end)
			assert.Equal(t, "I", u.Stmts[i].Do.Var)
		}
		assert.Equal(t, 3, u.FirstExecutable())
	})
	t.Run("figure 4", func(t *testing.T) {
		u := only(t, parseOK(t, "fig4.f", figure4, withDirectives))
		assert.Equal(t, MainProgram, u.Kind)
		assert.Equal(t, "DISPATCH", u.Name)
		require.Equal(t, []StmtKind{KindProgram, KindDirective, KindAssignment, KindCall, KindAssignment, KindDirective, KindEnd}, kinds(u.Stmts))
		assert.Equal(t, DirExclusiveRegion, u.Stmts[1].Dir.Kind)
		assert.Equal(t, DirExclusiveRegionEnd, u.Stmts[5].Dir.Kind)
		assert.Equal(t, "SUB", u.Stmts[3].Call.Name)
		assert.Equal(t, 1, u.FirstExecutable())
	})
	t.Run("indirect and linked", func(t *testing.T) {
		u := only(t, parseOK(t, "ind.f", indirectExample+"      END\n", withDirectives))
		assert.Equal(t, &DistSpec{Formats: []DistItem{{Format: DistIndirect, Arg: Expr{Text: "I"}}}, Var: "I",
			Onto: "P", OntoArgs: ex("MAP(I)"), Targets: []string{"T"}}, noPos(u.Stmts[2].Dir).Dist)
		u = only(t, parseOK(t, "link.f", linkedExample+"      END\n", withDirectives))
		assert.Equal(t, []string{"T1", "T2"}, names(u.Stmts[1].Dir.Decls))
		assert.Equal(t, &DistSpec{Formats: []DistItem{{Format: DistLinked, Arg: Expr{Text: "I"}}}, Var: "I",
			Home: "T1", HomeArgs: ex("3*I"), Targets: []string{"T1"}}, noPos(u.Stmts[3].Dir).Dist)
	})
}

func TestDirectiveErrors(t *testing.T) {
	tests := []struct {
		text string
		want string // the error, for the directive on line 2 of a fixed-form file
	}{
		{"FOO", "s.f:2:7: error: unknown SVM directive FOO"},
		{"distrib (BLOCK) ONTO P :: T", "s.f:2:7: error: unknown SVM directive DISTRIB"},
		{"", "s.f:2:6: error: missing directive after the SVM$ sentinel"},
		{"DISTRIBUTE (BLOCK) P :: T", `s.f:2:26: error: expected ONTO after the distribution formats, found "P"`},
		{"DISTRIBUTE BLOCK ONTO P :: T", `s.f:2:18: error: expected '(' and the distribution formats after DISTRIBUTE, found "BLOCK"`},
		{"DISTRIBUTE (BLOCK) ONTO P T", "s.f:2:34: error: expected :: and the templates to distribute, found end of statement"}, // ONTO PT
		{"DISTRIBUTE (BLOCK) ONTO :: T", `s.f:2:31: error: expected a processor arrangement or HOME after ONTO, found ":"`},
		{"DISTRIBUTE (BLOCK ONTO P :: T", `s.f:2:32: error: expected ',' or ')' in the distribution formats, found ":"`}, // (BLOCKONTOP::
		{"DISTRIBUTE (BLOCKS) ONTO P :: T", "s.f:2:19: error: unknown distribution format BLOCKS (expected BLOCK, CYCLIC, GENERAL_BLOCK or *; a dummy index needs ONTO P(map) or ONTO HOME(...))"},
		{"DISTRIBUTE (GENERAL_BLOCK) ONTO P :: T", `s.f:2:32: error: expected '(' and the array of block sizes after GENERAL_BLOCK, found ")"`},
		{"DISTRIBUTE (I, J) ONTO P(MAP(I)) :: T", "s.f:2:19: error: an indirect or linked distribution has a single dummy index, as in DISTRIBUTE (I) ONTO P(MAP(I))"},
		{"DISTRIBUTE (I) ONTO HOME(T1) :: T", `s.f:2:34: error: expected '(' and the subscripts of T1 in HOME(...), found ")"`},
		{"DISTRIBUTE (BLOCK) ONTO P :: ", "s.f:2:35: error: DISTRIBUTE needs a name"},
		{"PDO (STRATEGY(BLOCK))", "s.f:2:11: error: PDO needs a LOOPS clause naming the parallel loop's variable"},
		{"PDO LOOPS(I)", `s.f:2:11: error: expected '(' and the PDO clauses (LOOPS, STRATEGY) after PDO, found "LOOPS"`},
		{"PDO (LOOPS(I), SCHEDULE(BLOCK))", "s.f:2:22: error: unknown PDO clause SCHEDULE (expected LOOPS or STRATEGY)"},
		{"PDO (LOOPS(I), STRATEGY(GUIDED))", "s.f:2:31: error: unknown loop strategy GUIDED (expected BLOCK, CYCLIC, ON_HOME, DYNAMIC or SEMI_DYNAMIC)"},
		{"PDO (LOOPS(I), LOOPS(J))", "s.f:2:22: error: duplicate LOOPS clause"},
		{"PDO (LOOPS(I), STRATEGY(ON_HOME(T)))", `s.f:2:40: error: expected '(' and the subscripts of T in ON_HOME(...), found ")"`},
		{"PDO (LOOPS(I), STRATEGY(CYCLIC(2))", "s.f:2:41: error: expected ',' or ')' after the PDO clause, found end of statement"},
		{"PDO (LOOPS(I), STRATEGY(SEMI_DYNAMIC))", `s.f:2:43: error: expected '(' and a template after SEMI_DYNAMIC, found ")"`},
		{"PDO (LOOPS(I), STRATEGY(SEMI_DYNAMIC(T,)))", `s.f:2:46: error: expected a chunk size in SEMI_DYNAMIC(T, ...), found ")"`},
		{"PDO (LOOPS(I), STRATEGY(CYCLIC()))", `s.f:2:38: error: expected an expression in CYCLIC(...), found ")"`},
		{"PDO (LOOPS(I), STRATEGY())", `s.f:2:31: error: expected a loop strategy (BLOCK, CYCLIC, ON_HOME, DYNAMIC or SEMI_DYNAMIC), found ")"`},
		{"PDO (LOOPS(I), STRATEGY(ON_HOME(T(I)))", "s.f:2:45: error: expected ',' or ')' after the PDO clause, found end of statement"},
		{"PDO (LOOPS(), STRATEGY(BLOCK))", `s.f:2:18: error: expected a loop variable in LOOPS(...), found ")"`},
		{"SECTION P", `s.f:2:15: error: expected ON or the end of the directive after SECTION, found "P"`},
		{"PSECTION P", `s.f:2:16: error: unexpected "P" after PSECTION`},
		{"BARRIER 1", `s.f:2:15: error: unexpected "1" after BARRIER`},
		{"END FOO", `s.f:2:11: error: expected PSECTION, EXCLUSIVE_REGION, REPLICATED_REGION or CRITICAL after END, found "FOO"`},
		{"PAGE_LOCK", "s.f:2:16: error: expected '(' and the variables after PAGE_LOCK, found end of statement"},
		{"PAGE_LOCK()", "s.f:2:16: error: PAGE_LOCK needs at least one variable"},
		{"SHARED :: A, /B", "s.f:2:22: error: expected '/' after the COMMON block name B, found end of statement"},
		{"PROCESSORS:: P(4", "s.f:2:23: error: expected ',' or ')' in the array bounds, found end of statement"},
		{"TEMPLATE", "s.f:2:15: error: TEMPLATE needs a name"},
		{"DESTROY T; T2", `s.f:2:16: error: expected ',' or the end of the directive in DESTROY, found ";"`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			src := fixed("|SUBROUTINE S", "CSVM$ "+tt.text, "|END")
			f, diags := Parse("s.f", []byte(src), withDirectives)
			assert.Equal(t, []string{tt.want}, strs(diags))
			// The directive is kept, so the code generator sees it.
			u := only(t, f)
			require.Len(t, u.Stmts, 3)
			assert.Equal(t, KindDirective, u.Stmts[1].Kind)
		})
	}
}

// Free form reports the same columns relative to the line.
func TestDirectiveErrorColumnFree(t *testing.T) {
	src := free("subroutine s", "  !SVM$ distribute (block) onto p t2", "end")
	_, diags := Parse("s.f90", []byte(src), withDirectives)
	assert.Equal(t, []string{"s.f90:2:37: error: expected :: and the templates to distribute, found end of statement"}, strs(diags))

	src = free("subroutine s", "  !SVM$ pdo (loops(i), strategy(fancy))", "end")
	_, diags = Parse("s.f90", []byte(src), withDirectives)
	assert.Equal(t, []string{"s.f90:2:33: error: unknown loop strategy FANCY (expected BLOCK, CYCLIC, ON_HOME, DYNAMIC or SEMI_DYNAMIC)"}, strs(diags))
}

// Directives before the first unit are errors, not a main program.
func TestDirectiveOutsideUnit(t *testing.T) {
	src := fixed("CSVM$ BARRIER", "|SUBROUTINE S", "|END")
	f, diags := Parse("s.f", []byte(src), withDirectives)
	assert.Equal(t, []string{"s.f:1:1: error: SVM directive outside a program unit; directives belong after a PROGRAM, SUBROUTINE or FUNCTION statement"}, strs(diags))
	assert.Equal(t, "S", only(t, f).Name)
}
