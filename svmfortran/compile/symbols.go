package compile

import (
	"slices"
	"strings"

	"github.com/svmcluster/svm/svmfortran/syntax"
)

// symbols is what a unit's specification part says about its names, and
// what the generator concludes from it: which names are private variables
// (whose values the master may have to send to the other processors),
// arrays, constants and procedures.
type symbols struct {
	declared     map[string]bool           // in a type declaration, DIMENSION or COMMON
	dims         map[string][]syntax.Bound // array bounds
	types        map[string]string         // the declared type (syntax.Stmt.TypeSpec)
	characters   map[string]bool           // declared CHARACTER
	dummies      map[string]int            // dummy argument -> position (0-based)
	constants    map[string]bool           // PARAMETERs
	initialised  map[string]bool           // in DATA, or declared with a value
	equivalenced map[string]bool
	saved        map[string]bool
	allocatable  map[string]bool
	pointers     map[string]bool            // POINTER (Fortran 90)
	procedures   map[string]bool            // named by EXTERNAL or INTRINSIC
	externals    map[string]bool            // named by EXTERNAL: the program's own, even with an intrinsic's name
	commonVars   map[string][]syntax.Entity // COMMON block -> its variables, in order
	commonOf     map[string]string          // variable -> its COMMON block
	stmtFuncs    map[string]*syntax.Stmt    // statement function definitions
	hasUse       bool
	usedModules  []string        // the modules it uses
	moduleVars   map[string]bool // variables of the build's modules it uses
	// assigned holds the names the master may assign in exclusive mode
	// (in the unit's exclusive and dynamic code): assignment targets, DO
	// variables, input items, actual arguments, and the names of the
	// statements the parser does not take apart. Replicated code assigns
	// the same everywhere, and what a parallel loop assigns to private
	// data stays on each processor.
	assigned map[string]bool
}

func newSymbols(u *syntax.Unit) *symbols {
	sy := &symbols{
		declared: map[string]bool{}, dims: map[string][]syntax.Bound{}, types: map[string]string{},
		characters: map[string]bool{}, dummies: map[string]int{}, constants: map[string]bool{},
		initialised: map[string]bool{}, equivalenced: map[string]bool{}, saved: map[string]bool{},
		allocatable: map[string]bool{}, pointers: map[string]bool{}, procedures: map[string]bool{}, externals: map[string]bool{},
		commonVars: map[string][]syntax.Entity{}, commonOf: map[string]string{},
		stmtFuncs: map[string]*syntax.Stmt{}, assigned: map[string]bool{}, moduleVars: map[string]bool{},
	}
	for k, a := range u.Args {
		sy.dummies[a] = k
	}
	return sy
}

// declare records what a statement of the specification part declares.
func (sy *symbols) declare(s *syntax.Stmt) {
	switch s.Kind {
	case syntax.KindTypeDecl, syntax.KindDimension, syntax.KindAttribute:
		for _, e := range s.Decl {
			if s.Kind != syntax.KindAttribute {
				sy.declared[e.Name] = true
			}
			if len(e.Dims) > 0 {
				sy.dims[e.Name] = e.Dims
			}
			if e.Init {
				sy.initialised[e.Name] = true
			}
			if s.Kind == syntax.KindTypeDecl {
				sy.types[e.Name] = s.TypeSpec
				if strings.HasPrefix(s.TypeSpec, "CHARACTER") {
					sy.characters[e.Name] = true
				}
			}
			for _, a := range s.Attrs {
				switch a {
				case "PARAMETER":
					sy.constants[e.Name] = true
				case "SAVE":
					sy.saved[e.Name] = true
				case "ALLOCATABLE":
					sy.allocatable[e.Name] = true
				case "POINTER":
					sy.pointers[e.Name] = true
				case "EXTERNAL":
					sy.externals[e.Name] = true
					sy.procedures[e.Name] = true
				case "INTRINSIC":
					sy.procedures[e.Name] = true
				}
			}
		}
	case syntax.KindCommon:
		for _, b := range s.Common {
			sy.commonVars[b.Name] = append(sy.commonVars[b.Name], b.Vars...)
			for _, v := range b.Vars {
				sy.declared[v.Name] = true
				sy.commonOf[v.Name] = b.Name
				if len(v.Dims) > 0 {
					sy.dims[v.Name] = v.Dims
				}
			}
		}
	case syntax.KindParameter:
		for _, n := range s.Names {
			sy.constants[n] = true
		}
	case syntax.KindData:
		for _, n := range s.Names {
			sy.initialised[n] = true
		}
	case syntax.KindEquivalence:
		for _, n := range s.Names {
			sy.equivalenced[n] = true
		}
	case syntax.KindSave:
		for _, n := range s.Names {
			sy.saved[n] = true
		}
	case syntax.KindExternal, syntax.KindIntrinsic:
		for _, n := range s.Names {
			sy.procedures[n] = true
			if s.Kind == syntax.KindExternal {
				sy.externals[n] = true
			}
		}
	case syntax.KindUse:
		sy.hasUse = true
		sy.usedModules = append(sy.usedModules, s.Name)
	case syntax.KindAssignment:
		if s.Spec && len(s.Target.Names) > 0 {
			sy.stmtFuncs[s.Target.Names[0].Name] = s
		}
	}
}

// noteAssigned records the names a statement the master runs in
// exclusive mode may assign.
func (sy *symbols) noteAssigned(s *syntax.Stmt) {
	for _, n := range assignedBy(s) {
		sy.assigned[n] = true
	}
}

// assignedBy lists the variables a statement may assign: the target of an
// assignment, a DO variable, input items, IOSTAT= and the like, the actual
// arguments of a CALL (bare names and the arrays of elements), and every
// name of a statement the parser does not take apart.
func assignedBy(s *syntax.Stmt) []string {
	var out []string
	base := func(e syntax.Expr) {
		if len(e.Names) > 0 {
			out = append(out, e.Names[0].Name)
		}
	}
	switch s.Kind {
	case syntax.KindAssignment:
		base(s.Target)
	case syntax.KindDo:
		if s.Do != nil && s.Do.Var != "" {
			out = append(out, s.Do.Var)
		}
	case syntax.KindCall:
		if s.Call != nil {
			for _, a := range s.Call.Args {
				base(a)
			}
		}
	case syntax.KindIO:
		if s.IO.Verb == "READ" || s.IO.Verb == "INQUIRE" {
			for _, it := range s.IO.Items {
				for _, n := range it.Names {
					out = append(out, n.Name)
				}
			}
		}
		for _, sp := range s.IO.Specs {
			if s.IO.Verb == "INQUIRE" && sp.Key != "UNIT" && sp.Key != "FILE" || sp.Key == "IOSTAT" || sp.Key == "IOMSG" || sp.Key == "SIZE" {
				base(sp.Value)
			}
		}
	case syntax.KindLogicalIf:
		out = append(out, assignedBy(s.Inner)...)
	case syntax.KindOther:
		for _, n := range s.Other.Names {
			out = append(out, n.Name)
		}
	}
	return out
}

// nameKind is what a name in an expression is.
type nameKind int

const (
	variableName  nameKind = iota // a variable or array (an element or substring when called)
	constantName                  // a PARAMETER
	intrinsicName                 // an intrinsic function, NUMPROC or MYPROCSET
	stmtFuncName                  // a statement function of the unit
	functionName                  // a function of the program or a library
	procedureName                 // a procedure passed as an argument
)

// kind tells what a name of the unit's code is.
func (sy *symbols) kind(n syntax.Name) nameKind {
	switch {
	case sy.constants[n.Name]:
		return constantName
	case !n.Call && sy.procedures[n.Name]:
		return procedureName
	case !n.Call:
		return variableName
	case sy.dims[n.Name] != nil || sy.characters[n.Name] && sy.stmtFuncs[n.Name] == nil:
		return variableName
	case sy.stmtFuncs[n.Name] != nil:
		return stmtFuncName
	case svmIntrinsics[n.Name], intrinsics[n.Name] && !sy.externals[n.Name]:
		return intrinsicName
	}
	return functionName
}

// svmIntrinsics are SVM-Fortran's intrinsic functions (module svm).
var svmIntrinsics = map[string]bool{"NUMPROC": true, "MYPROCSET": true}

// intrinsics are the intrinsic functions of Fortran 77 and 90 (and common
// later ones): a call of one reads nothing but its arguments.
var intrinsics = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`
		ABS ACHAR ACOS ACOSH ADJUSTL ADJUSTR AIMAG AINT ALL ALLOCATED ALOG ALOG10 AMAX0 AMAX1 AMIN0 AMIN1
		AMOD ANINT ANY ASIN ASINH ASSOCIATED ATAN ATAN2 ATANH BIT_SIZE BTEST CABS CCOS CEILING CEXP CHAR
		CLOG CMPLX CONJG COS COSH COUNT CSHIFT CSIN CSQRT DABS DACOS DASIN DATAN DATAN2 DBLE DCMPLX DCONJG
		DCOS DCOSH DDIM DEXP DFLOAT DIGITS DIM DIMAG DINT DLOG DLOG10 DMAX1 DMIN1 DMOD DNINT DOT_PRODUCT
		DPROD DREAL DSIGN DSIN DSINH DSQRT DTAN DTANH EOSHIFT EPSILON ERF ERFC EXP EXPONENT FLOAT FLOOR
		FRACTION HUGE IABS IACHAR IAND IBCLR IBITS IBSET ICHAR IDIM IDINT IDNINT IEOR IFIX INDEX INT
		INT2 INT8 IOR ISHFT ISHFTC ISIGN IS_CONTIGUOUS KIND LBOUND LEN LEN_TRIM LGE LGT LLE LLT LOC LOG
		LOG10 LOGICAL MATMUL MAX MAX0 MAX1 MAXEXPONENT MAXLOC MAXVAL MERGE MIN MIN0 MIN1 MINEXPONENT
		MINLOC MINVAL MOD MODULO NEAREST NINT NORM2 NOT NULL PACK POPCNT PRECISION PRESENT PRODUCT
		RADIX RANGE REAL REPEAT RESHAPE RRSPACING SCALE SCAN SELECTED_INT_KIND SELECTED_REAL_KIND
		SET_EXPONENT SHAPE SHIFTL SHIFTR SIGN SIN SINH SIZE SNGL SPACING SPREAD SQRT STORAGE_SIZE SUM
		TAN TANH TINY TRANSFER TRANSPOSE TRIM UBOUND UNPACK VERIFY
	`) {
		m[n] = true
	}
	return m
}()

// sendable says whether the master's value of variable name can be sent
// to the other processors, and if not, why and what to do instead.
func (sy *symbols) sendable(name string) (bool, string) {
	dims := sy.dims[name]
	_, dummy := sy.dummies[name]
	switch {
	case sy.pointers[name]:
		return false, "it is a POINTER; make its target SHARED"
	case strings.HasPrefix(sy.types[name], "TYPE(") || strings.HasPrefix(sy.types[name], "CLASS("):
		return false, "it has a derived type, which the compiler does not copy between processors; make it SHARED"
	case len(dims) > 0 && dims[len(dims)-1].Hi.Text == "*":
		return false, "it is an assumed-size array, whose size the compiler does not know; declare its extent, as in " + name + "(N)"
	case slices.ContainsFunc(dims, func(b syntax.Bound) bool { return b.Hi.Text == ":" }) && dummy:
		return false, "it is an assumed-shape array, which need not be contiguous; declare it with explicit bounds, as in " + name + "(N)"
	case slices.ContainsFunc(dims, func(b syntax.Bound) bool { return b.Hi.Text == ":" }) && !sy.allocatable[name]:
		return false, "it has a deferred shape; make it ALLOCATABLE or SHARED"
	}
	return true, ""
}

// fromModule reports whether name, a variable of the unit's code, may come
// from a module: a variable of a module of the build it uses, or a name it
// does not declare when it uses a module the build does not compile.
func (sy *symbols) fromModule(name string) bool {
	_, dummy := sy.dummies[name]
	return sy.moduleVars[name] || sy.hasUse && !sy.declared[name] && !dummy && !sy.constants[name]
}

// importModule makes what module m declares known in the unit: its
// constants, its variables with their shapes and types, unless the unit
// declares the name itself.
func (sy *symbols) importModule(m *symbols) {
	for name := range m.declared {
		if sy.declared[name] || m.procedures[name] {
			continue
		}
		if m.constants[name] {
			sy.constants[name] = true
			continue
		}
		sy.moduleVars[name] = true
		for _, facts := range []struct{ to, from map[string]bool }{
			{sy.characters, m.characters}, {sy.allocatable, m.allocatable}, {sy.pointers, m.pointers},
		} {
			facts.to[name] = facts.from[name]
		}
		if d := m.dims[name]; d != nil {
			sy.dims[name] = d
		}
		sy.types[name] = m.types[name]
	}
	for name := range m.constants {
		if !sy.declared[name] {
			sy.constants[name] = true
		}
	}
	for name := range m.moduleVars {
		if !sy.declared[name] {
			sy.moduleVars[name] = true
		}
	}
}

// mustSend reports whether a private variable of the unit may hold a value
// on the master that the others lack: a scalar dummy argument, a COMMON or
// module variable (the caller, or another unit, may have set it in
// exclusive mode), or a variable the unit assigns in exclusive mode. A dummy array
// the unit does not assign so is the caller's to send (it knows whether
// the array is private, and its size: argumentReads). A name the unit
// never assigns and does not declare is a local variable nobody sets, or,
// with USE, a module's entity that may be a constant: it is not sent.
func (sy *symbols) mustSend(name string) bool {
	_, dummy := sy.dummies[name]
	switch {
	case dummy && sy.dims[name] == nil, sy.commonOf[name] != "", sy.moduleVars[name]:
		return true
	}
	return sy.assigned[name]
}

// exprs lists the expressions of a statement.
func exprs(s *syntax.Stmt) []syntax.Expr {
	var out []syntax.Expr
	switch s.Kind {
	case syntax.KindAssignment:
		out = append(out, s.Target, s.Value)
	case syntax.KindDo:
		if s.Do != nil {
			out = append(out, s.Do.Lo, s.Do.Hi, s.Do.Step, s.Do.Cond)
		}
	case syntax.KindIf, syntax.KindElseIf, syntax.KindArithmeticIf, syntax.KindSelectCase:
		out = append(out, s.Cond)
	case syntax.KindLogicalIf:
		out = append(append(out, s.Cond), exprs(s.Inner)...)
	case syntax.KindCall:
		if s.Call != nil {
			out = append(out, s.Call.Args...)
		}
	case syntax.KindIO:
		for _, sp := range s.IO.Specs {
			out = append(out, sp.Value)
		}
		out = append(out, s.IO.Items...)
	case syntax.KindGoto, syntax.KindReturn, syntax.KindStop:
		out = append(out, s.Value)
	case syntax.KindOther:
		out = append(out, s.Other)
	case syntax.KindTypeDecl, syntax.KindDimension, syntax.KindAttribute:
		for _, e := range s.Decl {
			out = append(out, boundExprs(e.Dims)...)
		}
	case syntax.KindCommon:
		for _, b := range s.Common {
			for _, e := range b.Vars {
				out = append(out, boundExprs(e.Dims)...)
			}
		}
	case syntax.KindDirective:
		out = append(out, directiveExprs(s.Dir)...)
	}
	return out
}

func boundExprs(dims []syntax.Bound) []syntax.Expr {
	var out []syntax.Expr
	for _, d := range dims {
		out = append(out, d.Lo, d.Hi)
	}
	return out
}

// directiveExprs lists the expressions of a directive. Those of an
// indirect or linked distribution name its dummy index.
func directiveExprs(d *syntax.Directive) []syntax.Expr {
	var out []syntax.Expr
	for _, e := range d.Decls {
		out = append(out, boundExprs(e.Dims)...)
	}
	if d.Dist != nil {
		for _, f := range d.Dist.Formats {
			if f.Format != syntax.DistIndirect && f.Format != syntax.DistLinked {
				out = append(out, f.Arg)
			}
		}
		out = append(append(out, d.Dist.OntoArgs...), d.Dist.HomeArgs...)
	}
	if d.PDO != nil {
		out = append(append(out, d.PDO.Chunk), d.PDO.Subscripts...)
	}
	return append(out, d.Vars...)
}

// stmtNames lists the names of a statement's expressions.
func stmtNames(s *syntax.Stmt) []syntax.Name {
	var out []syntax.Name
	for _, e := range exprs(s) {
		out = append(out, e.Names...)
	}
	return out
}

// directiveNames lists the names of a directive's expressions, without the
// dummy index of an indirect or linked distribution.
func directiveNames(d *syntax.Directive) []syntax.Name {
	var out []syntax.Name
	for _, e := range directiveExprs(d) {
		for _, n := range e.Names {
			if d.Dist == nil || n.Name != d.Dist.Var {
				out = append(out, n)
			}
		}
	}
	return out
}

// readNames lists the names a statement reads: all of its names but the
// variable an assignment or an input item assigns (the subscripts of an
// element it assigns are read).
func readNames(s *syntax.Stmt) []syntax.Name {
	switch s.Kind {
	case syntax.KindAssignment:
		return append(slices.Clone(s.Target.Names[1:]), s.Value.Names...)
	case syntax.KindLogicalIf:
		return append(slices.Clone(s.Cond.Names), readNames(s.Inner)...)
	case syntax.KindIO:
		if s.IO.Verb == "READ" {
			var out []syntax.Name
			for _, sp := range s.IO.Specs {
				out = append(out, sp.Value.Names...)
			}
			for _, it := range s.IO.Items {
				if len(it.Names) > 0 {
					out = append(out, it.Names[1:]...)
				}
			}
			return out
		}
	case syntax.KindDirective:
		return directiveNames(s.Dir)
	}
	return stmtNames(s)
}
