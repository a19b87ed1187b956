package daemon_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/svmcluster/svm/dsm/daemon"
)

// The tests of deploy/: the example configuration, the systemd unit, the
// Prometheus configuration and the Grafana dashboard, against what svmd
// really reads and exports.

// deployFile is the path of a file under deploy/ (tests run in dsm/daemon).
func deployFile(name string) string {
	return filepath.Join("..", "..", "deploy", name)
}

// deployConfigKeys are the yaml names of daemon.Config's fields.
func deployConfigKeys(t *testing.T) []string {
	var keys []string
	typ := reflect.TypeFor[daemon.Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		require.NotEmpty(t, name, "daemon.Config.%s has no yaml tag", f.Name)
		require.NotEqual(t, "-", name, "daemon.Config.%s is not read from YAML", f.Name)
		keys = append(keys, name)
	}
	return keys
}

func TestExampleConfig(t *testing.T) {
	path := deployFile("svmd.yml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)

	cfg := daemon.DefaultConfig()
	require.NoError(t, daemon.LoadConfig(&cfg, bytes.NewReader(data), path))
	require.NoError(t, cfg.Check())
	// An example of a real cluster: peers, and a secret for the network.
	assert.NotEmpty(t, cfg.Peers, "the example should show peers")
	assert.NotEmpty(t, cfg.SecretFile, "the example should show secret_file")

	// Every field appears as a top-level key with a comment above it that
	// says what it means and its default.
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(data, &doc))
	require.Len(t, doc.Content, 1)
	top := doc.Content[0]
	require.Equal(t, yaml.MappingNode, top.Kind)
	comments := map[string]string{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		comments[top.Content[i].Value] = top.Content[i].HeadComment
	}
	for _, key := range deployConfigKeys(t) {
		comment, ok := comments[key]
		if !assert.True(t, ok, "deploy/svmd.yml does not set %q", key) {
			continue
		}
		assert.Contains(t, comment, "Default:", "the comment above %q in deploy/svmd.yml should give its default", key)
	}

	// svmd's shutdown waits up to kill_after + 2s for the ranks: the unit
	// must give it longer than that before systemd's SIGKILL.
	stop := deployUnitSetting(t, "TimeoutStopSec")
	d, err := time.ParseDuration(stop)
	require.NoError(t, err, "TimeoutStopSec=%s", stop)
	assert.Greater(t, d, cfg.KillAfter+2*time.Second, "TimeoutStopSec too short for kill_after %v", cfg.KillAfter)
}

// deployUnitSetting is the value of the last KEY= line of deploy/svmd.service.
func deployUnitSetting(t *testing.T, key string) string {
	data, err := os.ReadFile(deployFile("svmd.service"))
	require.NoError(t, err)
	value, found := "", false
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			value, found = v, true
		}
	}
	require.True(t, found, "deploy/svmd.service sets no %s", key)
	return value
}

// TestExampleSystemdUnit checks the unit's settings that svmd depends on.
func TestExampleSystemdUnit(t *testing.T) {
	assert.Equal(t, "/usr/local/bin/svmd --config /etc/svm/svmd.yml", deployUnitSetting(t, "ExecStart"))
	assert.Equal(t, "on-failure", deployUnitSetting(t, "Restart"))
	assert.Equal(t, "SIGTERM", deployUnitSetting(t, "KillSignal"))
	assert.Equal(t, "svm", deployUnitSetting(t, "RuntimeDirectory"))
	families := strings.Fields(deployUnitSetting(t, "RestrictAddressFamilies"))
	for _, af := range []string{"AF_UNIX", "AF_INET", "AF_INET6"} {
		assert.Contains(t, families, af)
	}
	data, err := os.ReadFile(deployFile("svmd.service"))
	require.NoError(t, err)
	for _, bad := range []string{"NoNewPrivileges=yes", "NoNewPrivileges=true", "PrivateTmp=yes", "PrivateTmp=true",
		"ProtectHome=yes", "ProtectHome=true", "PrivateDevices=yes", "ProtectClock=yes", "ProtectSystem=strict"} {
		for line := range strings.Lines(string(data)) {
			assert.NotEqual(t, bad, strings.TrimSpace(line), "this setting breaks svmd's jobs")
		}
	}
}

// deployMetricIdent matches svm_ metric names in PromQL.
var deployMetricIdent = regexp.MustCompile(`svm_[a-z0-9_]+`)

// deployIsHistogram says which exported families are histograms (and have
// _bucket, _sum and _count series): the durations in seconds.
// TestMetricNamesMatchExport checks this against the exported types.
func deployIsHistogram(family string) bool { return strings.HasSuffix(family, "_seconds") }

// deployDashboard reads deploy/grafana/svm-dashboard.json.
func deployDashboard(t *testing.T) map[string]any {
	data, err := os.ReadFile(deployFile("grafana/svm-dashboard.json"))
	require.NoError(t, err)
	var d map[string]any
	require.NoError(t, json.Unmarshal(data, &d), "the dashboard is not valid JSON")
	return d
}

// deployDashboardPanels lists the panels, those nested in rows included.
func deployDashboardPanels(d map[string]any) []map[string]any {
	var out []map[string]any
	var walk func(v any)
	walk = func(v any) {
		list, _ := v.([]any)
		for _, p := range list {
			if panel, ok := p.(map[string]any); ok {
				out = append(out, panel)
				walk(panel["panels"])
			}
		}
	}
	walk(d["panels"])
	return out
}

// deployDashboardExprs lists the PromQL expressions of every panel's targets.
func deployDashboardExprs(t *testing.T, d map[string]any) []string {
	var exprs []string
	for _, p := range deployDashboardPanels(d) {
		targets, _ := p["targets"].([]any)
		for _, tg := range targets {
			m, _ := tg.(map[string]any)
			if e, ok := m["expr"].(string); ok {
				exprs = append(exprs, e)
			}
		}
	}
	require.NotEmpty(t, exprs, "the dashboard has no queries")
	return exprs
}

func TestDashboardUsesExportedMetrics(t *testing.T) {
	d := deployDashboard(t)

	schema, _ := d["schemaVersion"].(float64)
	assert.GreaterOrEqual(t, schema, 36.0, "schemaVersion")
	// A data source variable the panels use.
	vars, _ := d["templating"].(map[string]any)["list"].([]any)
	hasDatasource := false
	for _, v := range vars {
		m, _ := v.(map[string]any)
		if m["name"] == "datasource" && m["type"] == "datasource" && m["query"] == "prometheus" {
			hasDatasource = true
		}
	}
	assert.True(t, hasDatasource, "the dashboard needs a datasource variable of type prometheus")
	ids := map[float64]bool{}
	for _, p := range deployDashboardPanels(d) {
		id, _ := p["id"].(float64)
		assert.False(t, ids[id], "panel id %v is used twice", id)
		ids[id] = true
		assert.Contains(t, p, "gridPos", "panel %q", p["title"])
		if p["type"] == "row" {
			continue
		}
		ds, _ := p["datasource"].(map[string]any)
		assert.Equal(t, "${datasource}", ds["uid"], "panel %q should use the datasource variable", p["title"])
		assert.NotEmpty(t, p["targets"], "panel %q has no queries", p["title"])
	}

	known := map[string]bool{}
	for _, n := range daemon.MetricNames {
		known[n] = true
	}
	used := map[string]bool{}
	for _, expr := range deployDashboardExprs(t, d) {
		for _, name := range deployMetricIdent.FindAllString(expr, -1) {
			family := name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(name, suffix); ok && deployIsHistogram(base) {
					family = base
				}
			}
			assert.True(t, known[family], "%s (in %s) is not a metric svmd exports (daemon.MetricNames)", name, expr)
			used[family] = true
		}
	}
	for _, want := range []string{"svm_page_faults_total", "svm_diffs_created_total", "svm_messages_sent_total",
		"svm_lock_acquire_duration_seconds", "svm_barrier_wait_duration_seconds", "svm_jobs_running"} {
		assert.True(t, used[want], "the dashboard does not chart %s", want)
	}
}

// deployFamilies parses the "# TYPE name type" lines of a scrape,
// keeping the svm_ families.
func deployFamilies(text string) map[string]string {
	families := map[string]string{}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "#" && f[1] == "TYPE" && strings.HasPrefix(f[2], "svm_") {
			families[f[2]] = f[3]
		}
	}
	return families
}

// deployMetricValue is the value of the unlabelled series name in a scrape.
func deployMetricValue(t *testing.T, text, name string) float64 {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, "%s", line)
			return f
		}
	}
	t.Fatalf("no series %s in:\n%s", name, text)
	return 0
}

// deployJobSeries lists the series of a scrape that carry a job_id label.
func deployJobSeries(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, "#") && strings.Contains(line, `job_id="`) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// deployReadyWriter collects a job's output and closes ready once a line
// "ready" has come.
type deployReadyWriter struct {
	lockedBuffer
	once  sync.Once
	ready chan struct{}
}

func (w *deployReadyWriter) Write(p []byte) (int, error) {
	n, err := w.lockedBuffer.Write(p)
	sc := bufio.NewScanner(strings.NewReader(w.lockedBuffer.String()))
	for sc.Scan() {
		if sc.Text() == "ready" {
			w.once.Do(func() { close(w.ready) })
		}
	}
	return n, err
}

// deployJob is an svmf run going on while the test looks at the daemons.
type deployJob struct {
	cmd    *exec.Cmd
	stdout *deployReadyWriter
	stderr *lockedBuffer
	done   chan struct{}
	err    error // set when done is closed
}

// deployStartJob starts svmf run ARGS through via; a job still running
// when the test ends is killed.
func deployStartJob(t *testing.T, c *cluster, via *node, args ...string) *deployJob {
	t.Helper()
	j := &deployJob{cmd: c.svmf(via, nil, args...), stdout: &deployReadyWriter{ready: make(chan struct{})},
		stderr: &lockedBuffer{}, done: make(chan struct{})}
	j.cmd.Stdout, j.cmd.Stderr = j.stdout, j.stderr
	require.NoError(t, j.cmd.Start())
	go func() {
		j.err = j.cmd.Wait()
		close(j.done)
	}()
	t.Cleanup(func() {
		select {
		case <-j.done:
		default:
			j.cmd.Process.Kill()
			<-j.done
		}
	})
	return j
}

// wait waits up to d for the job's svmf to exit and returns its status.
func (j *deployJob) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-j.done:
	case <-time.After(d):
		t.Fatalf("svmf %v still running after %v; stdout:\n%s\nstderr:\n%s", j.cmd.Args, d, j.stdout.String(), j.stderr.String())
	}
	if j.err == nil {
		return 0
	}
	ee, ok := j.err.(*exec.ExitError)
	require.True(t, ok, "svmf: %v", j.err)
	return ee.ExitCode()
}

// TestMetricNamesMatchExport checks daemon.MetricNames against what a
// daemon exports while jobs run: each node must export exactly the listed
// families. The per-job families exist only while a job has ranks on the
// node, and the message families only once its ranks here have sent and
// received messages, so two hanging jobs run, one headed by each node:
// rank 0 (the manager of barrier 0) on the head, rank 1 on the other node
// sending it its barrier arrival, rank 2 on the head printing "ready" and
// sleeping. Each node then has a rank receiving and one sending.
func TestMetricNamesMatchExport(t *testing.T) {
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{})
	n1, n2 := c.node("n1"), c.node("n2")
	jobs := []*deployJob{
		deployStartJob(t, c, n1, "--hosts", "n1,n2", "-np", "3", "-kill-after", "100ms", c.bin.testprog, "hang"),
		deployStartJob(t, c, n2, "--hosts", "n2,n1", "-np", "3", "-kill-after", "100ms", c.bin.testprog, "hang"),
	}
	for _, j := range jobs {
		select {
		case <-j.stdout.ready:
		case <-j.done:
			t.Fatalf("job %v ended before it was ready; stderr:\n%s", j.cmd.Args, j.stderr.String())
		case <-time.After(15 * time.Second):
			t.Fatalf("job %v not ready after 15s; stderr:\n%s", j.cmd.Args, j.stderr.String())
		}
	}

	want := slices.Sorted(slices.Values(daemon.MetricNames))
	require.Len(t, slices.Compact(slices.Clone(want)), len(want), "daemon.MetricNames lists a name twice")
	for _, n := range []*node{n1, n2} {
		// The barrier arrivals may still be on their way.
		var families map[string]string
		var got []string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			families = deployFamilies(n.scrape(t, false))
			got = slices.Sorted(maps.Keys(families))
			if slices.Equal(got, want) || time.Now().After(deadline) {
				break
			}
		}
		for name, typ := range families {
			assert.Equal(t, typ == "histogram", deployIsHistogram(name), "node %s: %s is a %s", n.name, name, typ)
		}
		require.Equal(t, want, got, "node %s: exported svm_ families (got) differ from daemon.MetricNames (want)", n.name)
	}

	// Interrupting svmf cancels its job; the job's series go with it.
	for _, j := range jobs {
		require.NoError(t, j.cmd.Process.Signal(syscall.SIGINT))
	}
	for _, j := range jobs {
		code := j.wait(t, 15*time.Second)
		assert.NotEqual(t, 0, code, "an interrupted job should fail; stderr:\n%s", j.stderr.String())
	}
	for _, n := range []*node{n1, n2} {
		text := n.scrape(t, false)
		assert.Empty(t, deployJobSeries(text), "node %s: series of ended jobs remain", n.name)
		assert.Equal(t, 0.0, deployMetricValue(t, text, "svm_jobs_running"), "node %s", n.name)
		// Each node headed one job, which failed.
		assert.Equal(t, 1.0, deployMetricValue(t, text, "svm_jobs_failed_total"), "node %s", n.name)
		assert.Equal(t, 0.0, deployMetricValue(t, text, "svm_jobs_finished_total"), "node %s", n.name)
	}
}

// deployPromResponse is a Prometheus HTTP API answer to an instant query.
type deployPromResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string  `json:"metric"`
			Value  [2]json.RawMessage `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// deployPromQuery runs an instant query on the Prometheus at addr.
func deployPromQuery(addr, query string) (*deployPromResponse, error) {
	resp, err := http.PostForm("http://"+addr+"/api/v1/query", url.Values{"query": {query}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r deployPromResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %s: HTTP %s: %w: %s", query, resp.Status, err, body)
	}
	if r.Status != "success" {
		return &r, fmt.Errorf("query %s: %s: %s", query, r.ErrorType, r.Error)
	}
	return &r, nil
}

// deployPromScalar is the value of a query whose answer is one sample, or
// false when it has none (yet).
func deployPromScalar(addr, query string) (float64, bool, error) {
	r, err := deployPromQuery(addr, query)
	if err != nil {
		return 0, false, err
	}
	if r.Data.ResultType != "vector" {
		return 0, false, fmt.Errorf("query %s: result type %q, want vector", query, r.Data.ResultType)
	}
	if len(r.Data.Result) == 0 {
		return 0, false, nil
	}
	var s string
	if err := json.Unmarshal(r.Data.Result[0].Value[1], &s); err != nil {
		return 0, false, fmt.Errorf("query %s: value %s: %w", query, r.Data.Result[0].Value[1], err)
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil, err
}

// deployStartPrometheus runs a Prometheus server scraping the cluster's daemons
// every second and returns its HTTP address once it is ready.
func deployStartPrometheus(t *testing.T, prom string, c *cluster) string {
	dir := t.TempDir()
	var targets []string
	for _, n := range c.nodes {
		targets = append(targets, strconv.Quote(n.metricsAddr))
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: svm
    static_configs:
      - targets: [%s]
`, strings.Join(targets, ", "))
	configFile := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(configFile, []byte(config), 0o644))
	addr := freePort(t, "127.0.0.1")
	out := &lockedBuffer{}
	cmd := exec.Command(prom, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	// Registered after t.TempDir: runs before the directory is removed.
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("prometheus output:\n%s", out)
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("prometheus exited at start:\n%s", out)
		default:
		}
		if resp, err := http.Get("http://" + addr + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 20s:\n%s", out)
		}
	}
	// Prometheus hands static targets to its scrapers only at its service
	// discovery's next update, up to 5 s after the start: wait until it has
	// scraped every daemon.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		up, last := deployTargetsUp(t, addr)
		if up == len(c.nodes) {
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus scrapes %d of %d daemons after 20s (%s):\n%s", up, len(c.nodes), last, out)
		}
	}
}

// deployTargetsUp counts the Prometheus targets whose last scrape
// succeeded, and says what the others last reported.
func deployTargetsUp(t *testing.T, addr string) (int, string) {
	resp, err := http.Get("http://" + addr + "/api/v1/targets?state=active")
	require.NoError(t, err)
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			ActiveTargets []struct {
				ScrapeURL string `json:"scrapeUrl"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	require.Equal(t, "success", r.Status)
	up, report := 0, fmt.Sprintf("%d targets", len(r.Data.ActiveTargets))
	for _, tg := range r.Data.ActiveTargets {
		if tg.Health == "up" {
			up++
		} else {
			report += fmt.Sprintf("; %s %s %s", tg.ScrapeURL, tg.Health, tg.LastError)
		}
	}
	return up, report
}

// TestPrometheusScrapesSvmd has a real Prometheus server scrape two
// daemons while a job runs across them, and checks that it sees the job's
// faults and diffs, and that every dashboard query is valid PromQL.
func TestPrometheusScrapesSvmd(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not on PATH: install Debian's prometheus package " +
			"(apt-get install prometheus); `make test` installs it (scripts/setup) when run as root")
	}
	c := newCluster(t, []string{"n1", "n2"}, clusterOpts{})
	addr := deployStartPrometheus(t, prom, c)

	// SOR on 4 ranks over both nodes with TreadMarks' homeless protocol,
	// which diffs every page written: 2.5 to 4 s of faults and diffs, a few
	// of Prometheus' scrapes (its targets are up already).
	job := deployStartJob(t, c, c.node("n1"), "--hosts", "n1:2,n2:2", "-np", "4", "-protocol", "homeless", c.bin.sor, "-iter", "100", "-check=false")
	queries := []string{"sum(svm_page_faults_total)", "sum(svm_diffs_created_total)"}
	seen := map[string]float64{}
	for deadline := time.Now().Add(30 * time.Second); len(seen) < len(queries); time.Sleep(200 * time.Millisecond) {
		for _, q := range queries {
			v, ok, err := deployPromScalar(addr, q)
			require.NoError(t, err)
			if ok && v > 0 {
				seen[q] = v
			}
		}
		if len(seen) == len(queries) {
			break
		}
		select {
		case <-job.done:
			t.Fatalf("the job ended before Prometheus saw %v > 0 (saw %v); stdout:\n%s\nstderr:\n%s",
				queries, seen, job.stdout.String(), job.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not see %v > 0 within 30s (saw %v)", queries, seen)
		}
	}
	t.Logf("Prometheus saw %v", seen)
	// svmd's job_id label and Prometheus' job label live side by side.
	r, err := deployPromQuery(addr, `count by (job, job_id) (svm_page_faults_total)`)
	require.NoError(t, err)
	require.NotEmpty(t, r.Data.Result)
	for _, s := range r.Data.Result {
		assert.Equal(t, "svm", s.Metric["job"])
		assert.True(t, strings.HasPrefix(s.Metric["job_id"], "n1."), "job_id %q", s.Metric["job_id"])
	}
	// Every dashboard query parses and runs (on all nodes).
	for _, expr := range deployDashboardExprs(t, deployDashboard(t)) {
		_, err := deployPromQuery(addr, strings.ReplaceAll(expr, "$instance", ".*"))
		assert.NoError(t, err, "dashboard query %s", expr)
	}

	code := job.wait(t, 60*time.Second)
	require.Equal(t, 0, code, "the job failed; stdout:\n%s\nstderr:\n%s", job.stdout.String(), job.stderr.String())
}

// TestPrometheusConfigExample checks deploy/prometheus.yml with promtool,
// which Debian's prometheus package installs beside prometheus.
func TestPrometheusConfigExample(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not on PATH: it comes with Debian's prometheus package " +
			"(apt-get install prometheus); `make test` installs it (scripts/setup) when run as root")
	}
	out, err := exec.Command(promtool, "check", "config", deployFile("prometheus.yml")).CombinedOutput()
	require.NoError(t, err, "promtool check config:\n%s", out)
	data, err := os.ReadFile(deployFile("prometheus.yml"))
	require.NoError(t, err)
	for _, want := range []string{"job_name: svm", "scrape_interval: 5s", "node1:9470"} {
		assert.Contains(t, string(data), want)
	}
}
