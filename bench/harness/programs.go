package main

import "strings"

// program is one variant of one benchmark program: how to run it at the
// study's size and at a quick size, and what the study published for it.
type program struct {
	name    string // the directory under bench/, and the program's name in its results
	variant string // as the program reports it
	title   string // as the study names it
	full    string // arguments at the study's size
	quick   string // arguments at a size for CI
	// large are the arguments at the yardstick's size, where the
	// sequential run takes 2–10 s on the 2-core machine of
	// bench/results; "" leaves the variant out of the yardstick.
	large string
	// largeJob are the svmf run flags the large size needs.
	largeJob string
	study    study
}

// study is what the TreadMarks study (Lu et al., "Message Passing Versus
// Distributed Shared Memory on Networks of Workstations") published for a
// program: ../shared/reference/published-figures.md.
type study struct {
	problem string
	seconds float64 // sequential time on an HP 9000-735/125, 1996
	// speedupTreadMarks and speedupPVM are on 8 processors.
	speedupTreadMarks, speedupPVM float64
	// treadMarks and pvm are the messages and KB on 8 processors; nil
	// where the study gives none.
	treadMarks, pvm *counts
	// note is what else the study says, or how our run differs.
	note string
}

// counts are messages and kilobytes on 8 processors.
type counts struct {
	messages, kb float64
}

// args returns the program's arguments at the full or the quick size.
func (p program) args(quick bool) []string {
	if quick {
		return strings.Fields(p.quick)
	}
	return strings.Fields(p.full)
}

// programs is the suite in the order of the study's Table 1. The arguments
// of a program are its flags without -seq; the harness adds -seq for the
// sequential run and starts the others with svmf run -np N.
var programs = []program{
	{
		name: "ep", variant: "", title: "EP",
		full:  "-pairs-log2 28",
		quick: "-pairs-log2 16",
		large: "-pairs-log2 28",
		study: study{
			problem: "2^28 pairs", seconds: 2391, speedupTreadMarks: 7.9, speedupPVM: 7.9,
			note: "the study publishes no counts for EP",
		},
	},
	{
		name: "sor", variant: "zero", title: "SOR-Zero",
		full:  "-rows 1024 -cols 3072 -iter 50",
		quick: "-rows 256 -cols 768 -iter 10",
		large: "-rows 2048 -cols 6144 -iter 300",
		study: study{
			problem: "1024 × 3072 floats, 50 iterations", seconds: 79, speedupTreadMarks: 4.58, speedupPVM: 4.71,
			treadMarks: &counts{7014, 509}, pvm: &counts{1414, 8607},
		},
	},
	{
		name: "sor", variant: "nonzero", title: "SOR-NonZero",
		full:  "-rows 1024 -cols 3072 -iter 50 -nonzero",
		quick: "-rows 256 -cols 768 -iter 10 -nonzero",
		study: study{
			problem: "1024 × 3072 floats, 50 iterations", seconds: 68, speedupTreadMarks: 6.80, speedupPVM: 7.44,
			treadMarks: &counts{7014, 8853}, pvm: &counts{1414, 8607},
		},
	},
	{
		name: "is", variant: "small", title: "IS-Small",
		full:     "-keys-log2 23 -range-log2 7",
		quick:    "-keys-log2 16 -range-log2 7",
		large:    "-keys-log2 25 -range-log2 7 -iter 90",
		largeJob: "-region 512M",
		study: study{
			problem: "2^23 keys, range 2^7", seconds: 38, speedupTreadMarks: 6.56, speedupPVM: 7.60,
			treadMarks: &counts{872, 2582}, pvm: &counts{140, 573},
		},
	},
	{
		name: "is", variant: "large", title: "IS-Large",
		full:  "-keys-log2 23 -range-log2 15",
		quick: "-keys-log2 16 -range-log2 15",
		study: study{
			problem: "2^23 keys, range 2^15", seconds: 42, speedupTreadMarks: 2.30, speedupPVM: 4.67,
			treadMarks: &counts{9918, 73591}, pvm: &counts{140, 18350},
		},
	},
	{
		name: "tsp", variant: "", title: "TSP",
		full:  "-cities 19 -threshold 12",
		quick: "-cities 11 -threshold 6",
		large: "-cities 19 -threshold 12",
		study: study{
			problem: "19 cities, threshold 12", seconds: 95, speedupTreadMarks: 6.21, speedupPVM: 7.97,
			note: "the study gives only ratios: on 8 processors TreadMarks sends 11× the messages and 150× the data of PVM",
		},
	},
	{
		name: "qsort", variant: "", title: "QSORT",
		full:  "-n 524288 -threshold 1024",
		quick: "-n 16384 -threshold 256",
		large: "-n 8388608 -threshold 1024",
		study: study{
			problem: "512K integers, threshold 1024", seconds: 53, speedupTreadMarks: 4.46, speedupPVM: 6.17,
			treadMarks: &counts{33742, 57083}, pvm: &counts{3129, 16000},
		},
	},
	{
		name: "water", variant: "288", title: "Water-288",
		full:  "-molecules 288 -steps 5",
		quick: "-molecules 96 -steps 2",
		study: study{
			problem: "288 molecules, 5 steps", seconds: 12, speedupTreadMarks: 5.04, speedupPVM: 7.23,
			treadMarks: &counts{5028, 4945}, pvm: &counts{620, 1520},
		},
	},
	{
		name: "water", variant: "1728", title: "Water-1728",
		full:  "-molecules 1728 -steps 5",
		quick: "-molecules 125 -steps 2",
		large: "-molecules 1728 -steps 40",
		study: study{
			problem: "1728 molecules, 5 steps", seconds: 435, speedupTreadMarks: 7.25, speedupPVM: 7.44,
			treadMarks: &counts{8511, 21170}, pvm: &counts{620, 9123},
		},
	},
	{
		name: "barnes", variant: "", title: "Barnes-Hut",
		full:  "-bodies 4096 -steps 6",
		quick: "-bodies 256 -steps 2",
		large: "-bodies 16384 -steps 20",
		study: study{
			problem: "4096 bodies, 6 steps", seconds: 17, speedupTreadMarks: 2.70, speedupPVM: 3.04,
			treadMarks: &counts{62350, 18277}, pvm: &counts{280, 12704},
		},
	},
	{
		name: "fft", variant: "", title: "3-D FFT",
		full:  "-n 64 -iter 6",
		quick: "-n 16 -iter 2",
		large: "-n 128 -iter 40",
		study: study{
			problem: "64 × 64 × 64 complex doubles, 6 iterations", seconds: 41, speedupTreadMarks: 4.41, speedupPVM: 5.47,
			note: "the study gives no table entry: on 8 processors the transpose moves 4 MB and takes about 1000 diff requests",
		},
	},
}
