package main

import "fmt"

// reference is what NAS EP publishes for one problem size.
type reference struct {
	class  string
	sx, sy float64
	pairs  int64
	counts *[nq]int64 // nil where NAS's verification does not list them
}

// references are NAS EP's verification values (NPB 2 and 3 up to 3.3,
// which sum the deviates themselves), by log2 of the number of pairs. The
// counts are those NPB 3.3 prints for class S.
var references = map[int]reference{
	24: {"S", -3.247834652034740e3, -6.958407078382297e3, 13176389,
		&[nq]int64{6140517, 5865300, 1100361, 68546, 1648, 17, 0, 0, 0, 0}},
	25: {"W", -2.863319731645753e3, -6.320053679109499e3, 26354769, nil},
	28: {"A", -4.295875165629892e3, -1.580732573678431e4, 210832767, nil},
	30: {"B", 4.033815542441498e4, -2.660669192809235e4, 843345606, nil},
	32: {"C", 4.764367927995374e4, -8.084072988043731e4, 3373275903, nil},
}

// verifyNAS checks t against NAS's values for p's size, if NAS has any.
func verifyNAS(p params, t *tally) string {
	ref, ok := references[p.pairsLog2]
	if !ok {
		return "ok"
	}
	if got := t.pairs(); got != ref.pairs {
		return fmt.Sprintf("%d Gaussian pairs, NAS class %s has %d", got, ref.class, ref.pairs)
	}
	if ref.counts != nil && t.Counts != *ref.counts {
		return fmt.Sprintf("counts %v, NAS class %s has %v", t.Counts, ref.class, *ref.counts)
	}
	if !near(t.SX, ref.sx, 0) || !near(t.SY, ref.sy, 0) {
		return fmt.Sprintf("sums %.15e, %.15e, NAS class %s has %.15e, %.15e", t.SX, t.SY, ref.class, ref.sx, ref.sy)
	}
	return "ok"
}
