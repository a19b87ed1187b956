// Package svmfortran is the rank-local logic of the SVM-Fortran runtime
// (Berrendorf and Gerndt, "Compiling SVM-Fortran for the Intel Paragon
// XP/S", sections 3 and 4): processor arrangements, the tree of processor
// sets, templates with their life cycle and distributions, and the loop
// schedules built on them.
//
// Everything here is computed by one rank from what it knows locally, as the
// paper's runtime does: processor sets are kept in a per-rank Tree and
// entered and left without messages, and a distributed template keeps only
// the parameters (BLOCK, CYCLIC, GENERAL_BLOCK, MAP) or the rank's own block
// list (indirect, linked, recorded) that the rank needs to schedule its share
// of a loop. The package does no I/O, starts no goroutine and has no global
// state; exchanging data between ranks is the caller's job.
//
// Conventions:
//   - Template and loop indices are Fortran indices: any integer, bounds
//     lo:hi inclusive (Block). Dimension 0 is Fortran's first, innermost
//     index.
//   - Positions in a processor set are 0-based; position 0 is the master,
//     the processor for which MYPROCSET() returns 0. Job ranks are 0-based.
//   - Processor arrangement coordinates are 1-based and linearised
//     column-major (first coordinate fastest) to a 0-based arrangement index;
//     arrangement index i is position i of the processor set a template is
//     distributed over. Processors of the set beyond the arrangement's size
//     own nothing.
//
// The paper's CYCLIC owner test, p = MODULO(ceil((e-1)/l), P) + 1, is wrong
// for segment lengths l > 1; this package uses floor instead (see
// cyclicOwner).
package svmfortran
