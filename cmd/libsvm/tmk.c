// The TreadMarks globals live in C: a program's `extern unsigned Tmk_proc_id`
// must name a C object, which Go cannot export.
unsigned Tmk_proc_id, Tmk_nprocs;
