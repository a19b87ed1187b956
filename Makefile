# SVM: run `make demo` for the main job and `make test` for the tests.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go

# The pure packages: no I/O, run under the race detector.
PURE := ./diff/... ./protocol/... ./lrc/... ./lock/... ./barrier/... ./dsm/rank/... ./svmfortran/...
SEEDS ?= 100000
FUZZTIME ?= 60s

.PHONY: all setup build install lint test demo sim bench soak fuzz clean

all: build

setup:
	@scripts/setup

BENCHES := sor is ep tsp qsort water barnes fft

# bin/svmf and bin/svmd, lib/libsvm.a (and libsvmf.a), include/ (svm.h,
# svm_fortran.h, Tmk.h, the Fortran module svm.mod), and the benchmarks.
build: setup
	$(GO) build ./...
	scripts/install-layout .
	for b in $(BENCHES); do $(GO) build -o bin/$$b ./bench/$$b || exit 1; done

# The same layout under PREFIX (bin/, lib/, include/), like an installed MPI.
install: setup
	@if [ -z "$(PREFIX)" ]; then echo "make install: give the directory: make install PREFIX=/opt/svm"; exit 2; fi
	scripts/install-layout "$(PREFIX)"

lint:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

# Unit, property and scenario tests, fuzz seed corpora, 2000 simulated
# random programs, jobs of real processes, clusters of svmd processes; then
# the race detector on the pure packages, on 200 simulated programs, on the
# engine serving jobs and on svmd's links and frame handling. The first
# run prints each package's result, every failure's whole output, and at
# the end the tests that skipped and why (internal/testsummary).
test: setup lint
	set -o pipefail; $(GO) test -json ./... 2>&1 | $(GO) run ./internal/testsummary
	$(GO) test -race $(PURE) ./dsm/engine/...
	$(GO) test -race ./dsm/sim -run 'TestRandomPrograms$$' -sim.seeds=200
	$(GO) test -race ./dsm -run 'TestJobs|TestBands'
	$(GO) test -race ./dsm/daemon -run 'TestLink|TestParse|TestPlace|TestStop|TestReadSecret|TestSpec|FuzzHandle'

# The main job: red-black SOR on 4 ranks, checked against a sequential run;
# then the same across two svmd nodes on this machine; then the SVM-Fortran
# shallow-water program built with svmf build, on 4 ranks beside the
# gfortran-only build.
demo: build
	bin/sor -seq -iter 50
	bin/svmf run -np 4 bin/sor -iter 50
	scripts/demo-cluster
	scripts/demo-shallow

# The protocol simulator running SOR at TreadMarks' size on 8 ranks, with
# the counts beside TreadMarks' published ones.
sim: build
	bin/svmf sim sor

# The TreadMarks suite at full size on 1, 2, 4 and 8 ranks (table and
# charts in bench/results/), the microbenchmarks beside this machine's
# socket round trips, then the yardstick: the same kernels sequential, in
# hand-written MPI and as SVM jobs, and barrier and lock latency, in one
# table (bench/results/yardstick.md; go run ./bench/harness -h for subsets).
bench: setup
	$(GO) run ./bench/harness
	$(GO) test -run='^$$' -bench=. -benchmem ./diff/ ./protocol/ ./dsm/ ./dsm/daemon/
	$(GO) run ./bench/harness -yardstick

# A long soak of the simulator: SEEDS random programs of 24 phases.
soak: setup
	$(GO) test ./dsm/sim -run 'TestRandomPrograms$$' -sim.seeds=$(SEEDS) -sim.phases=24 -timeout 0

# Each fuzz target for FUZZTIME.
fuzz: setup
	$(GO) test ./diff -run='^$$' -fuzz='^FuzzCreate$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./diff -run='^$$' -fuzz='^FuzzApply$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./diff -run='^$$' -fuzz='^FuzzMerge$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./protocol -run='^$$' -fuzz='^FuzzDecode$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./protocol/peer -run='^$$' -fuzz='^FuzzReadFrame$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./dsm/daemon -run='^$$' -fuzz='^FuzzHandle$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./dsm/daemon -run='^$$' -fuzz='^FuzzSubmit$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./svmfortran/syntax -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./svmfortran/compile -run='^$$' -fuzz='^FuzzCompile$$' -fuzztime=$(FUZZTIME)

clean:
	rm -rf bin lib include
