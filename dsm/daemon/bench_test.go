package daemon_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkAcrossNodes runs the microbenchmarks of package microbench
// through svmd, with every rank on one node and with the ranks split
// between two (daemons on loopback: the difference is svmd's TCP hop and
// the second engine), side by side in one run:
//
//	go test ./dsm/daemon -run '^$' -bench AcrossNodes
func BenchmarkAcrossNodes(b *testing.B) {
	c := newCluster(b, []string{"n1", "n2"}, clusterOpts{})
	for _, tc := range []struct {
		name string
		np   int
	}{
		{"remote-fetch", 2}, {"lock-remote", 2},
		{"lock-contended", 2}, {"lock-contended", 4}, {"fetch-add", 2}, {"fetch-add", 4},
		{"barrier", 2}, {"barrier", 4}, {"barrier", 8},
	} {
		for _, split := range []struct {
			name, hosts string
		}{
			{"one-node", fmt.Sprintf("n1:%d", tc.np)},
			{"two-nodes", fmt.Sprintf("n1:%d,n2:%d", tc.np/2, tc.np/2)},
		} {
			b.Run(fmt.Sprintf("%s/N=%d/%s", tc.name, tc.np, split.name), func(b *testing.B) {
				// Rank 0 (on n1) times; with one slot per node and two
				// ranks, rank 1 is on n2.
				hosts := split.hosts
				if tc.np == 2 && split.name == "two-nodes" {
					hosts = "n1,n2"
				}
				r := c.run(c.nodes[0], "--hosts", hosts, "-np", strconv.Itoa(tc.np), "--prefetch=false",
					c.bin.testprog, "micro", tc.name, strconv.Itoa(b.N))
				if r.code != 0 {
					b.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				ns, err := strconv.ParseFloat(strings.TrimSpace(r.stdout), 64)
				if err != nil {
					b.Fatalf("rank 0 printed %q", r.stdout)
				}
				b.ReportMetric(ns, "ns/op")
			})
		}
	}
}
