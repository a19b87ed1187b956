package daemon_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seriesSum adds the values of every series of the family name in a
// scrape whose labels include each of match ("kind=\"read\"").
func seriesSum(t *testing.T, text, name string, match ...string) float64 {
	t.Helper()
	sum := 0.0
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, name)
		if !ok || strings.HasPrefix(line, "#") || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		labels := ""
		if rest[0] == '{' {
			end := strings.IndexByte(rest, '}')
			labels, rest = rest[1:end], rest[end+1:]
		}
		matched := true
		for _, m := range match {
			matched = matched && strings.Contains(labels, m)
		}
		if !matched {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		require.NoError(t, err, "%s", line)
		sum += v
	}
	return sum
}

// promtoolCheck runs promtool check metrics on a scrape, as Prometheus'
// own linter reads it.
func promtoolCheck(t *testing.T, text string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian's prometheus package; scripts/setup installs it as root)")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "promtool check metrics:\n%s", out.String())
}

// TestNodeTotalsOutliveJobs: a job across two nodes ends; a scrape of each
// svmd afterwards has no series of the job, but the node's totals
// (svm_node_) have grown by what the job's ranks there did, and together by
// the job's faults, diffs, messages and barriers as svmf run --stats-json
// reports them (from the same engines' counters, carried back through
// svmd). Both scrapes pass promtool check metrics.
func TestNodeTotalsOutliveJobs(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{})
	nodes := []*node{c.node("n1"), c.node("n2")}
	before := map[string]string{}
	for _, n := range nodes {
		before[n.name] = n.scrape(t, false)
	}
	file := filepath.Join(t.TempDir(), "stats.json")
	r := c.run(nodes[0], "--hosts", "n1:2,n2:2", "--stats", "--stats-json", file, c.bin.sor, "-rows", "128", "-cols", "512", "-iter", "5")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "svmf: job statistics: wall time")
	assert.Regexp(t, `rank +read faults +write faults`, r.stderr)

	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var js struct {
		Ranks []struct{ Rank int } `json:"ranks"`
		Total struct {
			ReadFaults   float64 `json:"read_faults"`
			WriteFaults  float64 `json:"write_faults"`
			DiffsMade    float64 `json:"diffs_made"`
			DiffsApplied float64 `json:"diffs_applied"`
			MessagesSent float64 `json:"messages_sent"`
			Barriers     float64 `json:"barriers"`
		} `json:"total"`
		EngineCPU *float64 `json:"engine_cpu_seconds"`
		Messages  map[string]struct {
			Messages float64 `json:"messages"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(data, &js))
	require.Len(t, js.Ranks, 4, "every node's ranks reach svmf")
	assert.Nil(t, js.EngineCPU, "svmf cannot measure svmd's engines")
	require.Positive(t, js.Total.ReadFaults, "SOR across nodes faults")
	require.Positive(t, js.Total.Barriers)
	assert.Positive(t, js.Messages["PagePush"].Messages, "the boundary rows between the nodes come with the barriers")

	grown := map[string]float64{}
	for _, n := range nodes {
		after := n.scrape(t, false)
		assert.Empty(t, deployJobSeries(after), "node %s: series of the ended job remain", n.name)
		promtoolCheck(t, after)
		for _, f := range []string{"svm_node_page_faults_total", "svm_node_diffs_created_total", "svm_node_diffs_applied_total",
			"svm_node_messages_sent_total", "svm_node_barriers_total", "svm_node_jobs_total"} {
			g := seriesSum(t, after, f) - seriesSum(t, before[n.name], f)
			assert.GreaterOrEqual(t, g, 0.0, "node %s: %s went down", n.name, f)
			grown[f] += g
		}
		assert.Equal(t, 1.0, seriesSum(t, after, "svm_node_jobs_total")-seriesSum(t, before[n.name], "svm_node_jobs_total"), "node %s", n.name)
		assert.Positive(t, seriesSum(t, after, "svm_node_barrier_wait_seconds_total"), "node %s", n.name)
	}
	assert.Equal(t, js.Total.ReadFaults+js.Total.WriteFaults, grown["svm_node_page_faults_total"], "faults")
	assert.Equal(t, js.Total.DiffsMade, grown["svm_node_diffs_created_total"], "diffs made")
	assert.Equal(t, js.Total.DiffsApplied, grown["svm_node_diffs_applied_total"], "diffs applied")
	assert.Equal(t, js.Total.MessagesSent, grown["svm_node_messages_sent_total"], "messages")
	assert.Equal(t, js.Total.Barriers, grown["svm_node_barriers_total"], "barriers")
	assert.Equal(t, 2.0, grown["svm_node_jobs_total"], "one job on each node")
}
