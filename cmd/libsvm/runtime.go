package main

/*
#include <stdint.h>
#include "svm.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/svmcluster/svm/dsm"
	"github.com/svmcluster/svm/svmfortran"
	"github.com/svmcluster/svm/svmfortran/rt"
)

// The SVM-Fortran runtime of svm_fortran.h, on package rt. Its calls are
// what the compiler generates: a misuse ends the program with a message
// naming the call and what was wrong, as a Fortran run-time error does.

var fortranRuntime *rt.Runtime // guarded by mu

// nodeComm is the job as the runtime sees it: the process's node.
type nodeComm struct{ *dsm.Node }

func (c nodeComm) Malloc(size int) (uintptr, error) {
	a, err := c.Node.Malloc(size)
	return uintptr(a), err
}

func (c nodeComm) Free(a uintptr) error { return c.Node.Free(dsm.Addr(a)) }

func (c nodeComm) Store(a uintptr, b []byte) { copy(dsm.Slice[byte](dsm.Addr(a), len(b)), b) }

func (c nodeComm) Load(a uintptr, b []byte) { copy(b, dsm.Slice[byte](dsm.Addr(a), len(b))) }

// rts returns the process's runtime, made on first use, or ends the process.
func rts(call string) *rt.Runtime {
	n, err := joined()
	if err != nil {
		fatal(call, err)
	}
	mu.Lock()
	if fortranRuntime == nil {
		fortranRuntime, err = rt.New(nodeComm{n})
	}
	r := fortranRuntime
	mu.Unlock()
	if err != nil {
		fatal(call, err)
	}
	return r
}

// must ends the process when a runtime call failed.
func must(call string, err error) {
	if err != nil {
		fatal(call, err)
	}
}

func goString(p *C.char, n C.int) string {
	if p == nil || n <= 0 {
		return ""
	}
	return C.GoStringN(p, n)
}

// ints reads n C ints, or ends the process naming call.
func ints(call string, p *C.int, n int) []int {
	v, err := cInts(p, C.int(n))
	if err != nil {
		fatal(call, err)
	}
	return v
}

// templateRank is the rank of template t, for reading its coordinates.
func templateRank(call string, r *rt.Runtime, t C.int) int {
	tm, err := r.TemplateOf(int(t))
	if err != nil {
		fatal(call, err)
	}
	return tm.Rank()
}

func bounds(call string, rank int, lo, hi *C.int) []svmfortran.Block {
	l, h := ints(call, lo, rank), ints(call, hi, rank)
	b := make([]svmfortran.Block, rank)
	for i := range b {
		b[i] = svmfortran.Block{Lo: l[i], Hi: h[i]}
	}
	return b
}

//export svm_numproc
func svm_numproc() C.int { return C.int(rts("svm_numproc").NumProc()) }

//export svm_myprocset
func svm_myprocset() C.int { return C.int(rts("svm_myprocset").MyProcSet()) }

//export svm_processors
func svm_processors(name *C.char, namelen C.int, rank C.int, extents *C.int) C.int {
	const call = "svm_processors"
	r := rts(call)
	if rank < 1 || rank > svmfortran.MaxRank {
		fatal(call, fmt.Errorf("processor arrangement %s: rank %d, allowed 1..%d", goString(name, namelen), rank, svmfortran.MaxRank))
	}
	h, err := r.Processors(goString(name, namelen), ints(call, extents, int(rank)))
	must(call, err)
	return C.int(h)
}

//export svm_template
func svm_template(name *C.char, namelen C.int, rank C.int) C.int {
	h, err := rts("svm_template").Template(goString(name, namelen), int(rank))
	must("svm_template", err)
	return C.int(h)
}

//export svm_release_processors
func svm_release_processors(p C.int) {
	must("svm_release_processors", rts("svm_release_processors").ReleaseProcessors(int(p)))
}

//export svm_release_template
func svm_release_template(t C.int) {
	must("svm_release_template", rts("svm_release_template").ReleaseTemplate(int(t)))
}

//export svm_template_create
func svm_template_create(t C.int, lo, hi *C.int) {
	const call = "svm_template_create"
	r := rts(call)
	must(call, r.Create(int(t), bounds(call, templateRank(call, r, t), lo, hi)))
}

//export svm_template_define
func svm_template_define(t C.int, lo, hi *C.int) {
	const call = "svm_template_define"
	r := rts(call)
	must(call, r.Define(int(t), bounds(call, templateRank(call, r, t), lo, hi)))
}

//export svm_template_undef
func svm_template_undef(t C.int) { must("svm_template_undef", rts("svm_template_undef").Undef(int(t))) }

//export svm_template_destroy
func svm_template_destroy(t C.int) {
	must("svm_template_destroy", rts("svm_template_destroy").Destroy(int(t)))
}

// standardDists reads the per-dimension formats of svm_distribute.
func standardDists(call string, rank int, formats, segments, sizes *C.int) []svmfortran.Dist {
	fs, segs := ints(call, formats, rank), ints(call, segments, rank)
	dims := make([]svmfortran.Dist, rank)
	for d, f := range fs {
		dims[d] = svmfortran.Dist{Format: svmfortran.Format(f), Segment: segs[d]}
		switch svmfortran.Format(f) {
		case svmfortran.Collapsed, svmfortran.BlockFormat, svmfortran.Cyclic:
		case svmfortran.GeneralBlock:
			if sizes == nil {
				fatal(call, fmt.Errorf("dimension %d is GENERAL_BLOCK but no block sizes were given", d+1))
			}
		default:
			fatal(call, fmt.Errorf("dimension %d: format %d is not one of SVM_COLLAPSED, SVM_BLOCK, SVM_CYCLIC, SVM_GENERAL_BLOCK (indirect and linked have their own calls)", d+1, f))
		}
	}
	return dims
}

func distribute(call string, t, p C.int, formats, segments, sizes *C.int, redistribute bool) {
	r := rts(call)
	rank := templateRank(call, r, t)
	dims := standardDists(call, rank, formats, segments, sizes)
	if sizes != nil {
		onto, err := r.ArrangementOf(int(p))
		must(call, err)
		// The sizes of each GENERAL_BLOCK dimension, one per processor of
		// the arrangement dimension it maps to, follow those of the
		// earlier ones.
		var all []int
		k := 0 // arrangement dimension of template dimension d
		for d := range dims {
			if dims[d].Format == svmfortran.Collapsed {
				continue
			}
			if k >= onto.Rank() {
				fatal(call, fmt.Errorf("mismatched ranks: template dimension %d is distributed, but arrangement %s has %d dimensions", d+1, onto.Name, onto.Rank()))
			}
			if dims[d].Format == svmfortran.GeneralBlock {
				n := onto.Extents[k]
				all = ints(call, sizes, len(all)+n)
				dims[d].Sizes = all[len(all)-n:]
			}
			k++
		}
	}
	must(call, r.Distribute(int(t), int(p), dims, redistribute))
}

//export svm_distribute
func svm_distribute(t, p C.int, formats, segments, sizes *C.int) {
	distribute("svm_distribute", t, p, formats, segments, sizes, false)
}

//export svm_redistribute
func svm_redistribute(t, p C.int, formats, segments, sizes *C.int) {
	distribute("svm_redistribute", t, p, formats, segments, sizes, true)
}

//export svm_distribute_indirect
func svm_distribute_indirect(t, p C.int, mapping *C.int) {
	const call = "svm_distribute_indirect"
	r := rts(call)
	tm, err := r.TemplateOf(int(t))
	must(call, err)
	b := tm.Bounds()
	if len(b) != 1 {
		fatal(call, fmt.Errorf("template %s: an indirect distribution needs a rank-1 template with bounds (it is %s, rank %d)", tm.Name(), tm.State(), tm.Rank()))
	}
	dist := svmfortran.Dist{Format: svmfortran.Indirect, Map: ints(call, mapping, b[0].Len())}
	must(call, r.Distribute(int(t), int(p), []svmfortran.Dist{dist}, tm.State() == svmfortran.Defined))
}

//export svm_distribute_linked
func svm_distribute_linked(t, home C.int, targets *C.int) {
	const call = "svm_distribute_linked"
	r := rts(call)
	tm, err := r.TemplateOf(int(t))
	must(call, err)
	h, err := r.TemplateOf(int(home))
	must(call, err)
	b := tm.Bounds()
	if len(b) != 1 {
		fatal(call, fmt.Errorf("template %s: a linked distribution needs a rank-1 template with bounds (it is %s, rank %d)", tm.Name(), tm.State(), tm.Rank()))
	}
	flat := ints(call, targets, b[0].Len()*h.Rank())
	dist := svmfortran.Dist{Format: svmfortran.Linked, Home: h}
	for i := 0; i < len(flat); i += h.Rank() {
		dist.Targets = append(dist.Targets, flat[i:i+h.Rank()])
	}
	must(call, r.Distribute(int(t), 0, []svmfortran.Dist{dist}, tm.State() == svmfortran.Defined))
}

// templateBound returns a bound of dimension dim (1-based) of template t.
func templateBound(call string, t, dim C.int, upper bool) C.int {
	tm, err := rts(call).TemplateOf(int(t))
	must(call, err)
	b := tm.Bounds()
	if dim < 1 || int(dim) > len(b) {
		fatal(call, fmt.Errorf("template %s is %s with rank %d: it has no bounds in dimension %d", tm.Name(), tm.State(), tm.Rank(), dim))
	}
	if upper {
		return C.int(b[dim-1].Hi)
	}
	return C.int(b[dim-1].Lo)
}

//export svm_template_lbound
func svm_template_lbound(t, dim C.int) C.int {
	return templateBound("svm_template_lbound", t, dim, false)
}

//export svm_template_ubound
func svm_template_ubound(t, dim C.int) C.int {
	return templateBound("svm_template_ubound", t, dim, true)
}

//export svm_owner
func svm_owner(t C.int, coords *C.int) C.int {
	const call = "svm_owner"
	r := rts(call)
	o, err := r.Owner(int(t), ints(call, coords, templateRank(call, r, t)))
	must(call, err)
	return C.int(o)
}

//export svm_owns
func svm_owns(t C.int, coords *C.int) C.int {
	const call = "svm_owns"
	r := rts(call)
	o, err := r.Owns(int(t), ints(call, coords, templateRank(call, r, t)))
	must(call, err)
	if o {
		return 1
	}
	return 0
}

//export svm_pset_enter
func svm_pset_enter(positions *C.int, n C.int) C.int {
	const call = "svm_pset_enter"
	r := rts(call)
	in, err := r.Enter(ints(call, positions, int(n)))
	must(call, err)
	if in {
		return 1
	}
	return 0
}

//export svm_pset_leave
func svm_pset_leave() { must("svm_pset_leave", rts("svm_pset_leave").Leave()) }

//export svm_pset_barrier
func svm_pset_barrier() { must("svm_pset_barrier", rts("svm_pset_barrier").Barrier()) }

//export svm_sections_begin
func svm_sections_begin(n C.int, sizes *C.int, nsizes C.int) {
	const call = "svm_sections_begin"
	r := rts(call)
	var s []int
	if nsizes > 0 {
		s = ints(call, sizes, int(nsizes))
	}
	must(call, r.SectionsBegin(int(n), s))
}

//export svm_section_next
func svm_section_next() C.int {
	s, err := rts("svm_section_next").SectionNext()
	must("svm_section_next", err)
	return C.int(s)
}

//export svm_loop_begin
func svm_loop_begin(strategy, ndims C.int, lo, hi *C.int, chunk, t C.int, offsets *C.int) C.int {
	const call = "svm_loop_begin"
	r := rts(call)
	if ndims < 1 || ndims > svmfortran.MaxRank {
		fatal(call, fmt.Errorf("%d loop dimensions, allowed 1..%d", ndims, svmfortran.MaxRank))
	}
	var offs []int
	if offsets != nil {
		offs = ints(call, offsets, int(ndims))
	}
	h, err := r.LoopBegin(rt.Strategy(strategy), bounds(call, int(ndims), lo, hi), int(chunk), int(t), offs)
	must(call, err)
	return C.int(h)
}

//export svm_loop_next
func svm_loop_next(h C.int, lo, hi *C.int) C.int {
	const call = "svm_loop_next"
	if lo == nil || hi == nil {
		fatal(call, errors.New("lo or hi is NULL"))
	}
	box, ok, err := rts(call).LoopNext(int(h))
	must(call, err)
	if !ok {
		return 0
	}
	l, u := unsafe.Slice(lo, len(box)), unsafe.Slice(hi, len(box))
	for i, b := range box {
		l[i], u[i] = C.int(b.Lo), C.int(b.Hi)
	}
	return 1
}

//export svm_dispatch_send
func svm_dispatch_send(code C.int) {
	must("svm_dispatch_send", rts("svm_dispatch_send").DispatchSend(int(code)))
}

//export svm_dispatch_recv
func svm_dispatch_recv() C.int {
	code, err := rts("svm_dispatch_recv").DispatchRecv()
	must("svm_dispatch_recv", err)
	return C.int(code)
}

//export svm_dispatch_put
func svm_dispatch_put(p unsafe.Pointer, n C.size_t) {
	must("svm_dispatch_put", rts("svm_dispatch_put").DispatchPut(cBytes(p, int(n))))
}

//export svm_dispatch_get
func svm_dispatch_get(p unsafe.Pointer, n C.size_t) {
	must("svm_dispatch_get", rts("svm_dispatch_get").DispatchGet(cBytes(p, int(n))))
}

//export svm_critical_begin
func svm_critical_begin(name *C.char, n C.int) {
	must("svm_critical_begin", rts("svm_critical_begin").CriticalBegin(goString(name, n)))
}

//export svm_critical_end
func svm_critical_end(name *C.char, n C.int) {
	must("svm_critical_end", rts("svm_critical_end").CriticalEnd(goString(name, n)))
}

//export svm_page_lock
func svm_page_lock(p unsafe.Pointer, size C.size_t) {
	must("svm_page_lock", rts("svm_page_lock").PageLock(uintptr(p), int(size)))
}

//export svm_page_unlock
func svm_page_unlock(p unsafe.Pointer, size C.size_t) {
	must("svm_page_unlock", rts("svm_page_unlock").PageUnlock(uintptr(p), int(size)))
}

//export svm_shared_alloc
func svm_shared_alloc(size C.size_t) unsafe.Pointer {
	a, err := rts("svm_shared_alloc").SharedAlloc(int(size))
	must("svm_shared_alloc", err)
	var p unsafe.Pointer
	storeAddr(&p, dsm.Addr(a))
	return p
}

//export svm_shared_free
func svm_shared_free(p unsafe.Pointer) {
	must("svm_shared_free", rts("svm_shared_free").SharedFree(uintptr(p)))
}

//export svm_common
func svm_common(name *C.char, n C.int, size C.size_t) unsafe.Pointer {
	a, err := rts("svm_common").Common(goString(name, n), int(size))
	must("svm_common", err)
	var p unsafe.Pointer
	storeAddr(&p, dsm.Addr(a))
	return p
}

//export svm_commons_free
func svm_commons_free() { must("svm_commons_free", rts("svm_commons_free").FreeCommons()) }
