package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The yardstick (-yardstick) sets SVM beside hand-written MPI and beside
// the sequential program: the same kernels run sequentially, as MPI jobs
// and as SVM jobs, and the TreadMarks suite at sizes that take seconds,
// plus the latency of barriers and locks. Its entries are below; the
// measurement is in yardrun.go and the report in yardreport.go.

// kind is how an entry of the yardstick is built and run.
type kind int

const (
	// cKernel is a kernel of bench/kernels written three ways:
	// NAME_seq.c built with gcc, NAME_svm.c with svmf cc, NAME_mpi.c with
	// mpicc. Each prints a result line with a checksum of its answer.
	cKernel kind = iota
	// fortranProgram is an SVM-Fortran source built with svmf build, and
	// with svmf build -nodist (gfortran alone) for the sequential
	// program; with an mpiSource, also that hand-written MPI program
	// built with mpifort. It prints its answers and no result line: its
	// time is the process's, from start to exit.
	fortranProgram
	// goProgram is a program of the Go suite in bench/, run with -seq
	// and as an svmf job.
	goProgram
	// svmSync and mpiSync are microbenchmarks of bench/kernels, one C
	// file each (barrier_svm.c, barrier_mpi.c, ...), run at every
	// synchronisation rank count; their result line counts operations.
	svmSync
	mpiSync
)

// entry is one row of the yardstick's tables.
type entry struct {
	// name is what -programs selects; so does each part of it before a
	// "/": "c" selects every C kernel, "c/sor" the SOR kernel.
	name  string
	title string
	kind  kind
	// source is the kernel's NAME (cKernel), the source file from the
	// module root (fortranProgram), the directory under bench/
	// (goProgram), or the C file's name without .c (svmSync, mpiSync).
	source      string
	full, quick string   // arguments
	job         []string // svmf run flags beyond -np
	// problem states the problem of a fortranProgram, as a format of its
	// arguments; the other programs state theirs in their result line.
	problem string
	// mpiSource is a fortranProgram's MPI version from the module root,
	// or "" if it has none.
	mpiSource string
	// short and quickShort, for a fortranProgram whose last argument is
	// its number of steps, are the arguments of a run of fewer steps: such
	// an entry is timed a step at a time, each of its runs being the short
	// command and then the full one, its time theirs apart over the steps
	// apart. A step's time leaves out the start, the setup and the end,
	// which are the same in both.
	short, quickShort string
}

// entries is the yardstick: the C kernels, the SVM-Fortran shallow-water
// program, the Go suite at its large sizes, then the synchronisation
// microbenchmarks.
var entries = yardstickEntries()

func yardstickEntries() []entry {
	shallow := entry{
		name: "fortran/shallow", title: "Shallow water (SVM-Fortran)", kind: fortranProgram,
		source: "svmfortran/compile/testdata/programs/shallow.f", full: "1024 50", quick: "64 4",
		problem:   "%[1]s × %[1]s grid, %[2]s steps, whole process",
		mpiSource: "bench/kernels/shallow_mpi.f",
	}
	// The same program and its MPI version, a step at a time.
	step := shallow
	step.name, step.title = "fortran/shallow-step", shallow.title+", a step"
	step.quick, step.short, step.quickShort = "64 40", "1024 10", "64 4"
	step.problem = "%[1]s × %[1]s grid: %[2]s steps less %[4]s, per step"
	es := []entry{
		{name: "c/sor", title: "Red-black SOR (C)", kind: cKernel, source: "sor", full: "1024 3072 200", quick: "64 128 4"},
		{name: "c/jacobi", title: "Jacobi 2-D (C)", kind: cKernel, source: "jacobi", full: "2048 2048 100", quick: "64 64 4"},
		{name: "c/is", title: "IS (C)", kind: cKernel, source: "is", full: "24 15 20", quick: "16 11 4"},
		shallow, step,
	}
	for _, p := range programs {
		if p.large == "" {
			continue
		}
		es = append(es, entry{
			name: strings.TrimSuffix("go/"+p.name+"/"+p.variant, "/"), title: p.title + " (Go)", kind: goProgram,
			source: p.name, full: p.large, quick: p.quick, job: strings.Fields(p.largeJob),
		})
	}
	return append(es,
		entry{name: "sync/barrier", title: "Tmk_barrier", kind: svmSync, source: "barrier_svm", full: "2000", quick: "20"},
		entry{name: "sync/mpi-barrier", title: "MPI_Barrier (reference)", kind: mpiSync, source: "barrier_mpi", full: "20000", quick: "20"},
		entry{name: "sync/lock", title: "Tmk_lock_acquire + release, uncontended", kind: svmSync, source: "lock_svm", full: "uncontended 2000", quick: "uncontended 20"},
		entry{name: "sync/lock-contended", title: "Tmk_lock_acquire + release, every rank on one lock", kind: svmSync, source: "lock_svm", full: "contended 500", quick: "contended 10"},
	)
}

// names are the names -programs selects the entry by: its name and every
// part of it before a "/".
func (e entry) names() []string {
	var names []string
	for i, c := range e.name {
		if c == '/' {
			names = append(names, e.name[:i])
		}
	}
	return append(names, e.name)
}

// isSync reports whether the entry is a microbenchmark.
func (e entry) isSync() bool { return e.kind == svmSync || e.kind == mpiSync }

// program is the program name the entry's result lines carry.
func (e entry) program() string {
	name, _, _ := strings.Cut(e.source, "_")
	return name
}

// args returns the entry's arguments at the full or the quick size.
func (e entry) args(quick bool) []string {
	if quick {
		return strings.Fields(e.quick)
	}
	return strings.Fields(e.full)
}

// shortArgs returns the arguments of the entry's short run at the full or
// the quick size; none unless it is timed a step at a time.
func (e entry) shortArgs(quick bool) []string {
	if quick {
		return strings.Fields(e.quickShort)
	}
	return strings.Fields(e.short)
}

// stepsApart is how many more steps the full run takes than the short
// one at the full or the quick size: the difference of their last
// arguments.
func (e entry) stepsApart(quick bool) (int, error) {
	full, short := e.args(quick), e.shortArgs(quick)
	if len(full) == 0 || len(short) == 0 {
		return 0, fmt.Errorf("%s: no arguments of a short run", e.name)
	}
	long, err1 := strconv.Atoi(full[len(full)-1])
	few, err2 := strconv.Atoi(short[len(short)-1])
	if err1 != nil || err2 != nil || long <= few {
		return 0, fmt.Errorf("%s: the last arguments, %q and %q, are not step counts with the full run's the larger", e.name, full[len(full)-1], short[len(short)-1])
	}
	return long - few, nil
}

// way is how a program runs: alone, as an MPI job, or as an SVM job.
type way int

const (
	sequential way = iota
	mpiJob
	svmJob
	// copies is the sequential program run as several processes at once,
	// each the whole problem: what the machine allows n cores to do side
	// by side (its memory bandwidth, shared caches and clock shared among
	// them) with no parallel overhead at all. n times the sequential time
	// over theirs is the speedup no parallel program of n ranks can pass,
	// unless a rank's share of the data fits its core's caches better than
	// the whole does.
	copies
)

func (w way) String() string {
	return [...]string{"sequential", "MPI", "SVM", "copies"}[w]
}

// suffix names the way in the C kernels' files (sor_seq.c, built as
// sor-seq) and in their result lines.
func (w way) suffix() string {
	return [...]string{"seq", "mpi", "svm", "seq"}[w]
}

// layout is where the yardstick's programs are: the installed layout's
// prefix (bin/svmf, lib/, include/), with the programs built into
// bin/yardstick under it.
type layout struct {
	root   string // the module's root, where the sources are and builds run
	prefix string
}

func (l layout) svmf() string { return filepath.Join(l.prefix, "bin", "svmf") }

// exe is the path of a built program.
func (l layout) exe(name string) string { return filepath.Join(l.prefix, "bin", "yardstick", name) }

// binary is the program that runs the entry in a way.
func (l layout) binary(e entry, w way) string {
	switch e.kind {
	case cKernel:
		return l.exe(e.source + "-" + w.suffix())
	case fortranProgram:
		base := strings.TrimSuffix(filepath.Base(e.source), filepath.Ext(e.source))
		switch w {
		case sequential, copies:
			return l.exe(base + "-seq")
		case mpiJob:
			return l.exe(base + "-mpi")
		}
		return l.exe(base)
	case goProgram:
		return l.exe(e.source)
	}
	return l.exe(strings.ReplaceAll(e.source, "_", "-"))
}

// cFlags build every C kernel and Fortran program, whichever way it runs
// (gcc and gfortran take the same). The hot loops start
// on a 64-byte boundary in all three programs: where the linker happens to
// put them otherwise moves a kernel's time by up to 15 % on this machine,
// more than the differences being measured.
var cFlags = []string{"-O2", "-falign-loops=64"}

// step is one build command, writing out.
type step struct {
	out  string
	argv []string
}

// steps are the commands that build the entry's programs for the ways it
// runs in, run from the module's root.
func (l layout) steps(e entry, ways []way) []step {
	var steps []step
	add := func(w way, tool []string, args ...string) {
		out := l.binary(e, w)
		steps = append(steps, step{out: out, argv: append(append(slices.Clone(tool), "-o", out), args...)})
	}
	for _, w := range ways {
		if w == copies {
			continue // the sequential program's
		}
		switch e.kind {
		case cKernel, svmSync, mpiSync:
			src := filepath.Join("bench", "kernels", e.source+".c")
			if e.kind == cKernel {
				src = filepath.Join("bench", "kernels", e.source+"_"+w.suffix()+".c")
			}
			compiler := map[way][]string{sequential: {"gcc"}, mpiJob: {"mpicc"}, svmJob: {l.svmf(), "cc"}}[w]
			add(w, compiler, append(slices.Clone(cFlags), src)...)
		case fortranProgram:
			switch w {
			case sequential:
				add(w, []string{l.svmf(), "build"}, append(append([]string{"-nodist"}, cFlags...), e.source)...)
			case mpiJob:
				add(w, []string{e.mpiCompiler()}, append(slices.Clone(cFlags), e.mpiSource)...)
			default:
				add(w, []string{l.svmf(), "build"}, append(slices.Clone(cFlags), e.source)...)
			}
		case goProgram:
			add(w, []string{"go", "build"}, "./bench/"+e.source)
		}
	}
	return steps
}

// ways are the ways the entry runs in, in the order of a round. The
// kernels in C and Fortran also run as copies of their sequential program;
// the Go suite's, which take seconds each, do not.
func (e entry) ways() []way {
	switch e.kind {
	case cKernel:
		return []way{sequential, copies, mpiJob, svmJob}
	case svmSync:
		return []way{svmJob}
	case mpiSync:
		return []way{mpiJob}
	case fortranProgram:
		if e.mpiSource != "" {
			return []way{sequential, copies, mpiJob, svmJob}
		}
		return []way{sequential, copies, svmJob}
	}
	return []way{sequential, svmJob}
}

// mpiCompiler is the compiler of the entry's MPI program: mpifort for a
// Fortran program, mpicc for the C files.
func (e entry) mpiCompiler() string {
	if e.kind == fortranProgram {
		return "mpifort"
	}
	return "mpicc"
}

// command is the command line of the entry's program in a way at ranks.
func (l layout) command(e entry, w way, ranks int, quick bool) []string {
	return append(l.launch(e, w, ranks), e.args(quick)...)
}

// shortCommand is the command line of the entry's short run in a way at
// ranks; nil unless the entry is timed a step at a time.
func (l layout) shortCommand(e entry, w way, ranks int, quick bool) []string {
	if e.short == "" {
		return nil
	}
	return append(l.launch(e, w, ranks), e.shortArgs(quick)...)
}

// launch is the entry's command line in a way at ranks, without the
// program's arguments.
func (l layout) launch(e entry, w way, ranks int) []string {
	var argv []string
	switch w {
	case sequential, copies:
		argv = []string{l.binary(e, w)}
		if e.kind == goProgram {
			argv = append(argv, "-seq")
		}
	case mpiJob:
		argv = append(mpirun(), "-np", strconv.Itoa(ranks), l.binary(e, w))
	case svmJob:
		argv = append(append([]string{l.svmf(), "run", "-np", strconv.Itoa(ranks)}, e.job...), l.binary(e, w))
	}
	return argv
}

// mpirun is Open MPI's launcher as the yardstick runs it: more ranks than
// cores allowed and no binding (the ranks share this machine's few cores
// with each other, as SVM's do), the shared-memory transport (vader)
// instead of TCP, and as root if need be.
func mpirun() []string {
	argv := []string{"mpirun"}
	if os.Geteuid() == 0 {
		argv = append(argv, "--allow-run-as-root")
	}
	return append(argv, "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader")
}

// mpiMissing says why MPI programs built with compiler (mpicc, mpifort)
// cannot be built or run here, or "" if they can.
func mpiMissing(compiler string) string {
	for _, tool := range []string{compiler, "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("%s not found (scripts/setup installs Debian's openmpi-bin and libopenmpi-dev when run as root)", tool)
		}
	}
	return ""
}

// display is a command line for people: paths under the module's root
// relative to it.
func (l layout) display(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		if rel, ok := strings.CutPrefix(a, l.root+string(filepath.Separator)); ok {
			a = rel
		}
		words[i] = a
	}
	return strings.Join(words, " ")
}
