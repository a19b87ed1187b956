package syntax

import "fmt"

// Form is a source form.
type Form int

const (
	// FormAuto chooses the form by the file name's extension: .f90, .f95,
	// .f03 and .f08 (any case) are free form, everything else fixed form.
	FormAuto Form = iota
	FormFixed
	FormFree
)

func (f Form) String() string {
	switch f {
	case FormAuto:
		return "auto"
	case FormFixed:
		return "fixed"
	case FormFree:
		return "free"
	}
	return fmt.Sprintf("Form(%d)", int(f))
}

// File is one parsed source file.
type File struct {
	Name string
	Form Form // FormFixed or FormFree, never FormAuto
	// Lines are the file's physical lines as read, without their line
	// terminators ("\n" or "\r\n"). Stmt.FirstLine and LastLine index them
	// from 1.
	Lines []string
	Units []*Unit
}

// UnitKind is the kind of a program unit.
type UnitKind int

const (
	MainProgram UnitKind = iota
	Subroutine
	Function
	BlockData
	Module
)

func (k UnitKind) String() string {
	switch k {
	case MainProgram:
		return "PROGRAM"
	case Subroutine:
		return "SUBROUTINE"
	case Function:
		return "FUNCTION"
	case BlockData:
		return "BLOCK DATA"
	case Module:
		return "MODULE"
	}
	return fmt.Sprintf("UnitKind(%d)", int(k))
}

// Unit is one program unit.
type Unit struct {
	Kind UnitKind
	// Name is the unit's name in upper case; "" for an unnamed main program
	// or an unnamed BLOCK DATA.
	Name string
	// Args are the dummy arguments of a SUBROUTINE or FUNCTION in upper
	// case; "*" stands for an alternate return.
	Args []string
	Pos  Pos
	// Stmts are the unit's statements in order: the header first (none for
	// an unnamed main program), the END last (none if it is missing, which
	// is an error), directives in place. Procedures after CONTAINS and
	// interface bodies are included; see the package documentation.
	Stmts []*Stmt
}

// StmtKind is the kind of a statement.
type StmtKind int

const (
	KindOther StmtKind = iota
	KindProgram
	KindSubroutine
	KindFunction
	KindBlockData
	KindModule
	KindEnd // END of a program unit or procedure
	KindDo
	KindEndDo
	KindContinue
	KindCall
	KindCommon
	KindTypeDecl
	KindDimension
	KindParameter
	KindImplicit
	KindUse
	KindInclude
	KindReturn
	KindStop
	KindIO // READ, WRITE, PRINT, OPEN, CLOSE, INQUIRE, REWIND, BACKSPACE, ENDFILE
	KindFormat
	KindData
	KindEquivalence
	KindSave
	KindExternal
	KindIntrinsic
	KindIf        // block IF (...) THEN
	KindElseIf    // ELSE IF (...) THEN
	KindElse      // ELSE
	KindEndIf     // END IF
	KindLogicalIf // IF (...) stmt; Inner holds stmt
	KindGoto
	KindDirective
	KindContains
	KindAssignment
	KindEntry        // ENTRY name(args)
	KindSelectCase   // SELECT CASE (Cond)
	KindCase         // CASE (...) and CASE DEFAULT
	KindEndSelect    // END SELECT
	KindExit         // EXIT [Construct]
	KindCycle        // CYCLE [Construct]
	KindArithmeticIf // IF (Cond) l1, l2, l3
	KindAttribute    // ALLOCATABLE, POINTER, TARGET, ... :: names
)

var kindNames = [...]string{
	KindOther:        "other",
	KindProgram:      "PROGRAM",
	KindSubroutine:   "SUBROUTINE",
	KindFunction:     "FUNCTION",
	KindBlockData:    "BLOCK DATA",
	KindModule:       "MODULE",
	KindEnd:          "END",
	KindDo:           "DO",
	KindEndDo:        "END DO",
	KindContinue:     "CONTINUE",
	KindCall:         "CALL",
	KindCommon:       "COMMON",
	KindTypeDecl:     "type declaration",
	KindDimension:    "DIMENSION",
	KindParameter:    "PARAMETER",
	KindImplicit:     "IMPLICIT",
	KindUse:          "USE",
	KindInclude:      "INCLUDE",
	KindReturn:       "RETURN",
	KindStop:         "STOP",
	KindIO:           "I/O",
	KindFormat:       "FORMAT",
	KindData:         "DATA",
	KindEquivalence:  "EQUIVALENCE",
	KindSave:         "SAVE",
	KindExternal:     "EXTERNAL",
	KindIntrinsic:    "INTRINSIC",
	KindIf:           "IF THEN",
	KindElseIf:       "ELSE IF",
	KindElse:         "ELSE",
	KindEndIf:        "END IF",
	KindLogicalIf:    "logical IF",
	KindGoto:         "GO TO",
	KindDirective:    "directive",
	KindContains:     "CONTAINS",
	KindAssignment:   "assignment",
	KindEntry:        "ENTRY",
	KindSelectCase:   "SELECT CASE",
	KindCase:         "CASE",
	KindEndSelect:    "END SELECT",
	KindExit:         "EXIT",
	KindCycle:        "CYCLE",
	KindArithmeticIf: "arithmetic IF",
	KindAttribute:    "attribute",
}

func (k StmtKind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("StmtKind(%d)", int(k))
}

// Stmt is one statement.
type Stmt struct {
	Kind StmtKind
	// Pos is the statement's first non-blank character after the label; for
	// a directive, the sentinel.
	Pos Pos
	// FirstLine and LastLine are the physical lines the statement occupies
	// (from its first line to its last continuation line, comment lines in
	// between included), 1-based, in the file Pos.File names: File.Lines for
	// the parsed file, the INCLUDE file's lines (Stmt.IncludedLines of the
	// INCLUDE statement) for an included statement. Statements separated by
	// ';' share their line.
	FirstLine, LastLine int
	Label               int // statement label, 0 if none
	// Text is the statement after the label with its continuation lines
	// joined and comments removed, in its original spelling; for a
	// directive, the text after the sentinel.
	Text string
	// Spec marks a statement that may appear in the specification part, so
	// it does not end it: declarations, COMMON, DIMENSION, PARAMETER,
	// IMPLICIT, USE, DATA, SAVE, EXTERNAL, INTRINSIC, EQUIVALENCE, the other
	// F90 attribute statements, derived type and interface blocks, statement
	// function definitions, the declarative directives (PROCESSORS,
	// TEMPLATE, DISTRIBUTE, SHARED) and INCLUDEs of only such statements.
	// FORMAT may stand anywhere; it is neither (Spec false) and
	// FirstExecutable skips it.
	Spec bool

	Do     *DoStmt       // KindDo
	Call   *CallStmt     // KindCall
	Common []CommonBlock // KindCommon
	// Decl: for KindTypeDecl and KindDimension, the declared names with their
	// array bounds (from the entity or a DIMENSION attribute).
	Decl []Entity
	// TypeSpec: for KindTypeDecl and a typed KindFunction, the type in upper
	// case without blanks except in DOUBLE PRECISION and DOUBLE COMPLEX:
	// "REAL*8", "DOUBLE PRECISION", "INTEGER", "REAL(8)", "CHARACTER*10",
	// "TYPE(POINT)".
	TypeSpec string
	Inner    *Stmt   // KindLogicalIf: the statement it guards
	Included []*Stmt // KindInclude: the statements of the included file
	// IncludedLines: for KindInclude, the physical lines of the included
	// file (nil if it could not be read), for a code generator that expands
	// the INCLUDE.
	IncludedLines []string
	Dir           *Directive // KindDirective
	// Name: for a unit or procedure header, KindEntry and KindEnd, the name
	// given (upper case, "" if none); for KindUse, the module; for
	// KindInclude, the file name as written.
	Name string
	// Construct is the construct name of a DO, IF THEN or SELECT CASE
	// (OUTER: DO ...), or the one an END DO, END IF, END SELECT, ELSE,
	// ELSE IF, CASE, EXIT or CYCLE names; upper case, "" if none.
	Construct string
	// Cond: for KindIf, KindElseIf, KindLogicalIf and KindArithmeticIf, the
	// condition inside the parentheses; for KindSelectCase, the selector.
	Cond Expr
	// Target and Value: for KindAssignment, the variable assigned (with
	// its subscripts) and the value. Value alone: RETURN's alternate
	// return, STOP's code, a computed GO TO's index.
	Target, Value Expr
	// Targets are the statement labels the statement may branch to: GO TO
	// (all three forms, when the labels are listed), an arithmetic IF, the
	// ERR=, END= and EOR= of an I/O statement, the alternate returns (*10)
	// of a CALL.
	Targets []int
	IO      *IOStmt // KindIO
	// Names: for KindParameter, the constants it defines; for KindData, the
	// variables (and arrays) it initialises; for KindSave, the variables
	// and the COMMON blocks ("/BLK/") it saves, none for a SAVE of
	// everything; for KindEquivalence, the variables in it; for
	// KindExternal and KindIntrinsic, the procedures it names; for
	// KindEntry, its dummy arguments.
	Names []string
	// Attrs: for KindTypeDecl, the attributes after the type (INTEGER,
	// PARAMETER, SAVE :: N = 1 gives PARAMETER and SAVE; INTENT(IN) gives
	// INTENT); for KindAttribute, its attribute. Upper case.
	Attrs []string
	// Other: for a statement the parser does not take apart (KindOther), the
	// whole statement as an expression, so that the names it mentions can be
	// seen; its keywords are among them.
	Other Expr
}

// IOStmt is an I/O statement.
type IOStmt struct {
	Verb string // READ, WRITE, PRINT, OPEN, CLOSE, INQUIRE, REWIND, BACKSPACE, ENDFILE, FLUSH, WAIT
	// Specs is the control list, each item with its keyword; an item
	// without keyword gets the one its place implies (UNIT, then FMT):
	// WRITE (6, 100) and READ 100 give UNIT=6, FMT=100 and FMT=100.
	Specs []IOSpec
	Items []Expr // the input or output list
}

// IOSpec is one item of an I/O control list.
type IOSpec struct {
	Key   string // upper case
	Value Expr
}

// Spec returns the value of the control list item key ("UNIT", "FMT",
// ...), and whether there is one.
func (io *IOStmt) Spec(key string) (Expr, bool) {
	for _, s := range io.Specs {
		if s.Key == key {
			return s.Value, true
		}
	}
	return Expr{}, false
}

// DoStmt is a DO statement.
type DoStmt struct {
	TermLabel int    // DO 10 I = ...: 10; 0 for a block DO
	Var       string // upper case; "" for DO WHILE, a bare DO and DO CONCURRENT
	Lo, Hi    Expr
	Step      Expr // empty if absent
	While     bool
	Cond      Expr // DO WHILE (Cond); for DO CONCURRENT, the header in parentheses
}

// CallStmt is a CALL statement.
type CallStmt struct {
	Name string // upper case
	Args []Expr
}

// CommonBlock is one block of a COMMON statement.
type CommonBlock struct {
	Name string // upper case, "" for blank COMMON
	Vars []Entity
}

// Entity is a declared name.
type Entity struct {
	Name string  // upper case
	Dims []Bound // nil: scalar
	Pos  Pos
	Init bool // declared with an initial value (= e or /values/)
}

// Bound is one dimension's bounds, lo:hi.
type Bound struct {
	// Lo empty means 1. Hi.Text "*" is an assumed size, ":" a deferred or
	// assumed shape (or, in a TEMPLATE, a shape given later).
	Lo, Hi Expr
}

// Expr is an expression kept as text.
type Expr struct {
	// Text is the expression as written (in fixed form with the blanks
	// outside character constants removed), usable verbatim in generated
	// Fortran. "" means absent.
	Text  string
	Pos   Pos    // zero when absent
	Names []Name // the names in it, in order
}

// Name is a name an expression refers to: a variable, an array, a function
// or a named constant (keywords, constants and operators are not names).
type Name struct {
	Name string // upper case
	Pos  Pos
	Off  int  // where it starts in Expr.Text, in bytes
	Call bool // followed by '(': an array element or section, a substring or a function reference
}

// DirKind is the kind of an SVM directive.
type DirKind int

const (
	DirProcessors DirKind = iota
	DirTemplate
	DirCreate
	DirDestroy
	DirUndef
	DirDistribute
	DirRedistribute
	DirPDO
	DirPSection
	DirSection
	DirPSectionEnd
	DirExclusiveRegion
	DirExclusiveRegionEnd
	DirReplicatedRegion
	DirReplicatedRegionEnd
	DirBarrier
	DirCritical
	DirCriticalEnd
	DirPageLock
	DirPageUnlock
	DirShared
)

var dirNames = [...]string{
	DirProcessors:          "PROCESSORS",
	DirTemplate:            "TEMPLATE",
	DirCreate:              "CREATE",
	DirDestroy:             "DESTROY",
	DirUndef:               "UNDEF",
	DirDistribute:          "DISTRIBUTE",
	DirRedistribute:        "REDISTRIBUTE",
	DirPDO:                 "PDO",
	DirPSection:            "PSECTION",
	DirSection:             "SECTION",
	DirPSectionEnd:         "PSECTION_END",
	DirExclusiveRegion:     "EXCLUSIVE_REGION",
	DirExclusiveRegionEnd:  "EXCLUSIVE_REGION_END",
	DirReplicatedRegion:    "REPLICATED_REGION",
	DirReplicatedRegionEnd: "REPLICATED_REGION_END",
	DirBarrier:             "BARRIER",
	DirCritical:            "CRITICAL",
	DirCriticalEnd:         "CRITICAL_END",
	DirPageLock:            "PAGE_LOCK",
	DirPageUnlock:          "PAGE_UNLOCK",
	DirShared:              "SHARED",
}

func (k DirKind) String() string {
	if k >= 0 && int(k) < len(dirNames) {
		return dirNames[k]
	}
	return fmt.Sprintf("DirKind(%d)", int(k))
}

// Directive is an SVM-Fortran directive. A directive in error holds what
// could be parsed of it; the Kind of an unknown directive means nothing.
type Directive struct {
	Kind DirKind
	Pos  Pos // the sentinel
	// Decls: PROCESSORS, TEMPLATE and CREATE, the declared arrangements or
	// templates with their bounds.
	Decls []Entity
	// Names: DESTROY and UNDEF, the templates; SHARED, the variables and
	// COMMON blocks (with their slashes: "/BLK/"); PDO, its LOOPS.
	Names []string
	Dist  *DistSpec // DISTRIBUTE and REDISTRIBUTE
	PDO   *PDOSpec
	On    string // SECTION ON P: the arrangement, "" if none
	Name  string // CRITICAL [name], CRITICAL_END [name]: upper case, "" if none
	Vars  []Expr // PAGE_LOCK(...) and PAGE_UNLOCK(...): the variables
}

// DistFormat is the distribution format of one template dimension.
type DistFormat int

const (
	DistBlock DistFormat = iota
	DistCyclic
	DistGeneralBlock
	DistCollapsed // *
	DistIndirect  // DISTRIBUTE (I) ONTO P(MAP(I))
	DistLinked    // DISTRIBUTE (I) ONTO HOME(T(F(I)))
)

var distNames = [...]string{
	DistBlock:        "BLOCK",
	DistCyclic:       "CYCLIC",
	DistGeneralBlock: "GENERAL_BLOCK",
	DistCollapsed:    "*",
	DistIndirect:     "indirect",
	DistLinked:       "linked",
}

func (f DistFormat) String() string {
	if f >= 0 && int(f) < len(distNames) {
		return distNames[f]
	}
	return fmt.Sprintf("DistFormat(%d)", int(f))
}

// DistSpec is the distribution of a DISTRIBUTE or REDISTRIBUTE directive.
type DistSpec struct {
	// Formats has one item per template dimension: (BLOCK, *) gives
	// BLOCK and collapsed. For an indirect or linked distribution it holds
	// the single dummy index, Format DistIndirect or DistLinked, with the
	// index as Arg.
	Formats []DistItem
	Var     string // indirect and linked: the dummy index in upper case
	Onto    string // ONTO P: the arrangement in upper case; "" for HOME
	// OntoArgs: indirect, ONTO P(MAP(I)) gives ["MAP(I)"].
	OntoArgs []Expr
	Home     string // linked, ONTO HOME(T1(3*I)): "T1"
	HomeArgs []Expr // ["3*I"]
	Targets  []string
}

// DistItem is the format of one dimension.
type DistItem struct {
	Format DistFormat
	// Arg is CYCLIC's segment length (empty: 1), GENERAL_BLOCK's array of
	// block sizes, or the dummy index of an indirect or linked distribution.
	Arg Expr
}

// Strategy is a PDO loop scheduling strategy.
type Strategy int

const (
	StratBlock Strategy = iota
	StratCyclic
	StratOnHome
	StratDynamic
	StratSemiDynamic
)

var stratNames = [...]string{
	StratBlock:       "BLOCK",
	StratCyclic:      "CYCLIC",
	StratOnHome:      "ON_HOME",
	StratDynamic:     "DYNAMIC",
	StratSemiDynamic: "SEMI_DYNAMIC",
}

func (s Strategy) String() string {
	if s >= 0 && int(s) < len(stratNames) {
		return stratNames[s]
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// PDOSpec is the schedule of a PDO directive.
type PDOSpec struct {
	Loops    []string // LOOPS(I, J): upper case, as written
	Strategy Strategy // StratBlock if no STRATEGY clause is given
	// Chunk is CYCLIC's, DYNAMIC's or SEMI_DYNAMIC's chunk size, empty if
	// absent.
	Chunk Expr
	// Template: ON_HOME(T(I+1, J)) and SEMI_DYNAMIC(T, c) give "T".
	Template string
	// Subscripts: ON_HOME(T(I+1, J)) gives ["I+1", "J"].
	Subscripts []Expr
}
