package syntax

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiagnosticString(t *testing.T) {
	d := Diagnostic{Pos: Pos{"a.f", 3, 7}, Severity: Error, Msg: "unknown SVM directive FOO"}
	assert.Equal(t, "a.f:3:7: error: unknown SVM directive FOO", d.String())
	d.Severity = Warning
	assert.Equal(t, "a.f:3:7: warning: unknown SVM directive FOO", d.String())
}

// All errors are reported, in the order of their positions, whatever the
// order they are found in (DO loops are checked at the END).
func TestDiagnosticsSorted(t *testing.T) {
	src := fixed(
		"|SUBROUTINE S",
		"|DO 10 I = 1, N",
		"CSVM$ BOGUS",
		"|CALL",
		"|END",
		"|X = 1",
	)
	_, diags := Parse("s.f", []byte(src), withDirectives)
	assert.Equal(t, []string{
		"s.f:2:7: error: the DO 10 loop at line 2 is not ended: no statement labelled 10 follows",
		"s.f:3:7: error: unknown SVM directive BOGUS",
		"s.f:4:11: error: expected the subroutine name after CALL, found end of statement",
		"s.f:6:7: error: the main program has no END statement",
	}, strs(diags))
}

func TestDiagnosticsCap(t *testing.T) {
	lines := []string{"|SUBROUTINE S"}
	for range 150 {
		lines = append(lines, "|CALL")
	}
	lines = append(lines, "|END")
	f, diags := Parse("s.f", []byte(fixed(lines...)), Options{})
	require.Len(t, diags, maxDiagnostics+1)
	for i, d := range diags[:maxDiagnostics] {
		assert.Equal(t, i+2, d.Pos.Line)
	}
	last := diags[maxDiagnostics]
	assert.Equal(t, Error, last.Severity)
	assert.Equal(t, "too many errors (50 more diagnostics not shown)", last.Msg)
	assert.Equal(t, Pos{"s.f", 102, 11}, last.Pos)
	// Parsing went on to the end all the same.
	assert.Len(t, only(t, f).Stmts, 152)
}

// No input makes Parse fail to return: a few nasty ones.
func TestParseOddInput(t *testing.T) {
	for _, src := range []string{
		"",
		"\n",
		"\x00\x01\x02",
		"\t",
		"\t\t\t",
		"1\t2",
		"     +",
		"CSVM$",
		"CSVM$+",
		"!SVM$&",
		"&",
		";;;",
		"'",
		"\"",
		"((((((((((",
		"))))))))",
		"IF(",
		"DO 99999999999999999999 I=1,2",
		"99999999999 CONTINUE",
		"CALL F(1HX",
		"      X = 99999H",
		"      DATA X/0H/",
		"      " + strings.Repeat("(", 10000),
		strings.Repeat("      DO I = 1, N\n", 1000),
		strings.Repeat("      END DO\n", 1000),
		strings.Repeat("CSVM$ PDO (\n", 100),
		"      END\n      END\n      END\n",
		"      CONTAINS\n      CONTAINS\n",
		"      INTERFACE\n      SUBROUTINE S\n      END\n",
		"      TYPE T\n      CONTAINS\n      END\n",
	} {
		for _, form := range []Form{FormFixed, FormFree} {
			f, diags := Parse("odd", []byte(src), Options{Form: form, Directives: true})
			require.NotNil(t, f)
			checkPositions(t, f, diags)
		}
	}
}
