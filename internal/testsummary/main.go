// Command testsummary reads go test -json on its standard input and prints
// what make test needs to show: each package's result as it comes (as go
// test prints it), the whole output of every test and package that failed,
// and at the end every skipped test with the reason it gave, and a count.
// It exits 1 when anything failed (or the input is not go test -json), so
// a pipeline with pipefail keeps go test's verdict; it hides no failure.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type skip struct{ pkg, test, reason string }

type summary struct {
	out                     io.Writer
	output                  map[[2]string][]string // (package, test) → its lines
	skips                   []skip
	passed, failed, noTests int
	failedTests             []string
	testsRun, testsSkipped  int
	buildFailed             bool
}

func main() {
	s := &summary{out: os.Stdout, output: map[[2]string][]string{}}
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if !s.report() {
		os.Exit(1)
	}
}

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (go vet's or the linker's own words): pass it on.
			fmt.Fprintln(s.out, string(line))
			continue
		}
		s.event(e)
	}
	return sc.Err()
}

func (s *summary) event(e event) {
	key := [2]string{e.Package, e.Test}
	switch e.Action {
	case "output":
		s.output[key] = append(s.output[key], e.Output)
	case "build-output":
		fmt.Fprint(s.out, e.Output)
	case "build-fail":
		s.buildFailed = true
	case "skip":
		if e.Test == "" {
			s.noTests++
			delete(s.output, key)
			return
		}
		s.testsSkipped++
		s.skips = append(s.skips, skip{e.Package, e.Test, reason(s.output[key])})
		delete(s.output, key)
	case "pass":
		if e.Test != "" {
			s.testsRun++
			delete(s.output, key)
			return
		}
		s.passed++
		fmt.Fprintf(s.out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
		delete(s.output, key)
	case "fail":
		said := strings.Join(s.output[key], "")
		fmt.Fprint(s.out, said)
		delete(s.output, key)
		if e.Test != "" {
			s.testsRun++
			s.failedTests = append(s.failedTests, e.Package+" "+e.Test)
			return
		}
		// Tests still running when their package failed (a panic, a
		// timeout) said what they said before it.
		for k, lines := range s.output {
			if k[0] == e.Package {
				fmt.Fprint(s.out, strings.Join(lines, ""))
				delete(s.output, k)
			}
		}
		s.failed++
		if !strings.Contains(said, "FAIL\t"+e.Package) {
			fmt.Fprintf(s.out, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
		}
	}
}

// reason is what a skipped test said: its output without the === and ---
// lines go test adds.
func reason(lines []string) string {
	var said []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		said = append(said, t)
	}
	if len(said) == 0 {
		return "(no reason given)"
	}
	return strings.Join(said, " ")
}

// report prints the skips and the counts, and says whether all passed.
func (s *summary) report() bool {
	if len(s.skips) > 0 {
		slices.SortFunc(s.skips, func(a, b skip) int { return strings.Compare(a.pkg+" "+a.test, b.pkg+" "+b.test) })
		fmt.Fprintf(s.out, "\nskipped tests (%d), and why:\n", len(s.skips))
		for _, k := range s.skips {
			fmt.Fprintf(s.out, "  %s %s: %s\n", k.pkg, k.test, k.reason)
		}
	}
	fmt.Fprintf(s.out, "\n%d packages passed, %d failed, %d without tests; %d tests run, %d skipped\n",
		s.passed, s.failed, s.noTests, s.testsRun, s.testsSkipped)
	for _, f := range s.failedTests {
		fmt.Fprintf(s.out, "FAILED: %s\n", f)
	}
	ok := s.failed == 0 && len(s.failedTests) == 0 && !s.buildFailed
	if !ok {
		fmt.Fprintln(s.out, "FAIL")
	}
	return ok
}
