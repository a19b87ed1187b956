// Package syntax is the scanner and parser of the SVM-Fortran compiler
// (svmf build): it reads one Fortran 77/90 source file with SVM-Fortran
// directives (Berrendorf and Gerndt, "Compiling SVM-Fortran for the Intel
// Paragon XP/S", sections 3 and 4) and returns its program units as a list of
// statements per unit, each with its physical line range, so that a code
// generator can copy every statement it does not rewrite through unchanged.
//
// Parse is the entry point. It does no I/O of its own: INCLUDE lines are read
// through Options.ReadInclude. It never stops at the first error; it
// recovers at the next statement and returns every diagnostic, sorted by
// position and capped at 100.
//
// The parser understands the statements the SVM-Fortran code generator has
// to know (program unit headers and ENDs, DO loops and their ends, block and
// logical IFs, SELECT CASE, branches, CALL, I/O, assignments, COMMON,
// declarations and their attributes, ...) and every SVM directive, and
// hands the generator typed facts about them: construct names, conditions,
// branch targets, I/O control lists, the names PARAMETER, DATA, SAVE and
// EQUIVALENCE declare. Every other statement is KindOther and only passes
// through. Expressions are not parsed into trees: they are kept as text
// (Expr), split at the right commas and colons, to be copied into the
// generated Fortran, with the names they refer to (Expr.Names: variables,
// arrays, functions and named constants, found by a scanner that knows
// constants, dotted operators and keyword arguments).
//
// Fixed and free source form are supported. The scanner works on whole
// statements: continuation lines are joined, comments dropped, and a label
// split off. To classify a statement the parser ignores blanks outside
// character constants in both forms (in fixed form they are insignificant;
// in free form this only makes the parser lenient), so GO TO and GOTO,
// END DO and ENDDO, DO 10 I = 1, N and DO10I=1,N are the same statement.
// Which statement it is follows the classical rules: a statement of the form
// v = e or v(...) = e (with no comma at the top level of e) is an assignment
// whatever v is called, so DO10I=1.5 assigns to DO10I.
//
// Decisions worth knowing:
//   - A fixed-form line whose label field (columns 1-5) holds a letter is
//     taken as a statement starting where it starts, with a warning. This
//     accepts listings, such as the figures of the paper, whose statements
//     are not indented to column 7.
//   - Hollerith constants (nHxxx) are recognised in fixed form only, where
//     the digits follow '(', ',', '/', '=', a repeat count's '*' or the
//     closing dot of an operator such as .EQ.; elsewhere (REAL*8 H) digits
//     followed by H are a number and a name.
//   - A typed FUNCTION header (REAL FUNCTION F(X)) is told from a
//     declaration (REAL FUNCTIONF(X)) by the blank in free form and, in
//     fixed form, by where it stands: only where a program unit or a
//     procedure may start.
//   - A statement function definition, NAME(args) = expr in the
//     specification part where NAME is not an array declared earlier (and no
//     USE could have brought one in) and the args are names, is a
//     KindAssignment with Spec set; any other assignment is executable.
//   - DISTRIBUTE, like PROCESSORS, TEMPLATE and SHARED, is a specification
//     directive (Spec set); REDISTRIBUTE and the other directives are
//     executable.
//   - CRITICAL END, PSECTION END and the like lose their blank in fixed
//     form, so a critical section cannot be named END... .
//   - Internal and module procedures (after CONTAINS) and interface bodies
//     stay inside the Unit of their host: their headers and ENDs appear in
//     the host's Stmts, after the KindContains statement or inside the
//     INTERFACE block. Statements inside INTERFACE blocks and derived type
//     definitions have Spec set; a CONTAINS inside a type definition is
//     KindOther.
//   - SVM directives before the first program unit are errors; other
//     statements there start a main program without PROGRAM statement.
//   - INCLUDE files are scanned in the form of the including file, with
//     positions in the included file. They may hold any statements except
//     those that start or end program units or procedures (outside interface
//     blocks) and CONTAINS. Includes nest at most 16 deep, and one Parse
//     reads at most 1000 INCLUDE files.
package syntax
