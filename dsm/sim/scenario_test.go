package sim

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScenarios runs the scripts in testdata/: classic cases whose message
// flows and counts are printed so that a review sees them. Rewrite the
// expected output with -rewrite after a deliberate protocol change.
//
// Commands:
//
//	new ranks=N pages=P page-size=B [prefetch=BOOL] [homes=BOOL] [async=BOOL] [gc=BYTES] [locks=L] [barriers=K]
//	do rank=R          input: one op per line (lock L, unlock L, barrier ID [members=a,b,...],
//	                   write ADDR HEX, read ADDR LEN, add ADDR, validate PAGE COUNT [write])
//	run                deliver messages oldest first until nothing moves; prints the events
//	stats [reset]      messages and bytes by type (then zero them)
//	pages rank=R       the rank's page states
//	sor ranks=N rows=R cols=C iterations=I [warmup=W] [nonzero] [prefetch=BOOL] [homes=BOOL] [page-size=B]
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var s *Sim
		shown := 0
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "new" && d.Cmd != "sor" && s == nil {
				d.Fatalf(t, "%s before new", d.Cmd)
			}
			switch d.Cmd {
			case "new":
				cfg := Config{
					NProcs: mustInt(t, d, "ranks"), Pages: mustInt(t, d, "pages"), PageSize: mustInt(t, d, "page-size"),
					Locks: uint32(intArg(t, d, "locks", 16)), Barriers: uint32(intArg(t, d, "barriers", 8)),
					GCThreshold: int64(intArg(t, d, "gc", 1<<40)), Prefetch: boolArg(t, d, "prefetch", true), Trace: true,
					Homes: boolArg(t, d, "homes", false), AsyncWrites: boolArg(t, d, "async", false),
				}
				var err error
				if s, err = New(cfg); err != nil {
					d.Fatalf(t, "%v", err)
				}
				shown = 0
				return ""
			case "do":
				r := mustInt(t, d, "rank")
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					op, err := parseOp(line)
					if err != nil {
						d.Fatalf(t, "%s: %v", line, err)
					}
					s.Enqueue(r, op)
				}
				return ""
			case "run":
				err := s.Run(false)
				var b strings.Builder
				for _, l := range s.Trace()[shown:] {
					b.WriteString(strings.TrimLeft(l[7:], " "))
					b.WriteByte('\n')
				}
				shown = len(s.Trace())
				if err != nil {
					fmt.Fprintf(&b, "error: %v\n", err)
				}
				return b.String()
			case "stats":
				out := s.Stats().String()
				if d.HasArg("reset") {
					s.ResetStats()
				}
				return out
			case "pages":
				r := mustInt(t, d, "rank")
				var b strings.Builder
				for p := range s.cfg.Pages {
					fmt.Fprintf(&b, "%d:%v ", p, s.ranks[r].eng.PageState(uint32(p)))
				}
				return strings.TrimSpace(b.String()) + "\n"
			case "sor":
				return runSOR(t, d)
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

func runSOR(t *testing.T, d *datadriven.TestData) string {
	cfg := SORConfig{
		NProcs: mustInt(t, d, "ranks"), Rows: mustInt(t, d, "rows"), Cols: mustInt(t, d, "cols"),
		PageSize: intArg(t, d, "page-size", 4096), NonZero: d.HasArg("nonzero"),
	}
	res, err := RunSOR(cfg, intArg(t, d, "warmup", 1), mustInt(t, d, "iterations"), boolArg(t, d, "prefetch", true), boolArg(t, d, "homes", false))
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	return res.String()
}

func parseOp(line string) (Op, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return Op{}, fmt.Errorf("empty op")
	}
	num := func(i int) (int, error) {
		if i >= len(f) {
			return 0, fmt.Errorf("missing argument %d", i)
		}
		v, err := strconv.ParseInt(f[i], 0, 64)
		return int(v), err
	}
	var op Op
	var err error
	switch f[0] {
	case "lock", "unlock":
		op.Kind = map[string]OpKind{"lock": OpLock, "unlock": OpUnlock}[f[0]]
		var id int
		id, err = num(1)
		op.ID = uint32(id)
	case "barrier":
		op.Kind = OpBarrier
		var id int
		id, err = num(1)
		op.ID = uint32(id)
		if len(f) > 2 {
			list, ok := strings.CutPrefix(f[2], "members=")
			if !ok {
				return op, fmt.Errorf("want members=a,b,...")
			}
			for _, m := range strings.Split(list, ",") {
				v, err := strconv.Atoi(m)
				if err != nil {
					return op, err
				}
				op.Members = append(op.Members, v)
			}
		}
	case "write":
		op.Kind = OpWrite
		if op.Addr, err = num(1); err == nil && len(f) > 2 {
			_, err = fmt.Sscanf(f[2], "%x", &op.Data)
		}
	case "read":
		op.Kind = OpRead
		if op.Addr, err = num(1); err == nil {
			op.Len, err = num(2)
		}
	case "add":
		op.Kind = OpAdd
		op.Addr, err = num(1)
	case "validate":
		op.Kind = OpValidate
		if op.Addr, err = num(1); err == nil {
			op.Len, err = num(2)
		}
		op.Write = len(f) > 3 && f[3] == "write"
	default:
		return op, fmt.Errorf("unknown op %q", f[0])
	}
	return op, err
}

func intArg(t *testing.T, d *datadriven.TestData, key string, def int) int {
	if !d.HasArg(key) {
		return def
	}
	var v int
	d.ScanArgs(t, key, &v)
	return v
}

func mustInt(t *testing.T, d *datadriven.TestData, key string) int {
	if !d.HasArg(key) {
		d.Fatalf(t, "%s: missing %s=", d.Cmd, key)
	}
	return intArg(t, d, key, 0)
}

func boolArg(t *testing.T, d *datadriven.TestData, key string, def bool) bool {
	if !d.HasArg(key) {
		return def
	}
	var v bool
	d.ScanArgs(t, key, &v)
	return v
}
