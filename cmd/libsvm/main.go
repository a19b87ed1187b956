// Command libsvm is SVM's C library: built with -buildmode=c-archive into
// lib/libsvm.a, it gives C and Fortran programs the same client as the Go
// API (package dsm) through the calls of include/svm.h, the TreadMarks
// interface of include/Tmk.h, and the SVM-Fortran runtime of
// include/svm_fortran.h (and the Fortran module svm).
//
// The process's membership in its job is one package-level node: C programs
// have one job per process, and every call may come from any thread.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/include
#include <stdlib.h>
#include <string.h>
#include "svm.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/svmcluster/svm/dsm"
)

// A c-archive's main is never run.
func main() {}

var (
	// mu guards node and lastError; the node serializes its own calls.
	mu        sync.Mutex
	node      *dsm.Node
	lastError string
)

var errNotJoined = errors.New("not joined: call svm_init (or Tmk_startup) first")

// joined returns the process's node, or errNotJoined.
func joined() (*dsm.Node, error) {
	mu.Lock()
	defer mu.Unlock()
	if node == nil {
		return nil, errNotJoined
	}
	return node, nil
}

// status records err as the last error of call and returns the C result:
// 0 when err is nil, -1 otherwise.
func status(call string, err error) C.int {
	if err == nil {
		return 0
	}
	mu.Lock()
	lastError = message(call, err)
	mu.Unlock()
	return -1
}

// message is what a failed call reports: the call, then what was wrong
// (without package dsm's prefix: the call names the layer).
func message(call string, err error) string {
	return call + ": " + strings.TrimPrefix(err.Error(), "dsm: ")
}

// cBytes is the C memory [p, p+n) as a Go slice.
func cBytes(p unsafe.Pointer, n int) []byte { return unsafe.Slice((*byte)(p), n) }

// cInts copies a C int array.
func cInts(p *C.int, n C.int) ([]int, error) {
	if n < 0 || (n > 0 && p == nil) {
		return nil, fmt.Errorf("%d-element array at %p", n, p)
	}
	out := make([]int, n)
	for i, v := range unsafe.Slice(p, int(n)) {
		out[i] = int(v)
	}
	return out, nil
}

// lastErrorInto copies the last error message into buf, NUL-terminated.
func lastErrorInto(buf *C.char, n C.size_t) C.size_t {
	mu.Lock()
	msg := lastError
	mu.Unlock()
	if buf != nil && n > 0 {
		dst := cBytes(unsafe.Pointer(buf), int(n))
		k := copy(dst[:len(dst)-1], msg)
		dst[k] = 0
	}
	return C.size_t(len(msg))
}
