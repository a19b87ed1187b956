package daemon

import (
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/svmcluster/svm/dsm/engine"
)

// metrics are what svmd serves on /metrics. Job series carry the job's id
// as job_id (not job, which Prometheus gives every target) and exist only
// while the job has ranks on this node; the node's series (svm_node_) sum
// the same counters over every job since svmd started. Every other label
// is bounded (kinds, message types, node names).
type metrics struct {
	d   *Daemon
	reg *prometheus.Registry

	jobsRunning  prometheus.Gauge
	jobsFinished prometheus.Counter
	jobsFailed   prometheus.Counter
	authFailures prometheus.Counter
	peerUp       *prometheus.GaugeVec
	lockWait     *prometheus.HistogramVec
	barrierWait  *prometheus.HistogramVec
}

// MetricNames lists every metric family svmd exports (without the
// _bucket, _sum and _count series of histograms), for checking dashboards.
var MetricNames = []string{
	"svm_jobs_running", "svm_jobs_finished_total", "svm_jobs_failed_total",
	"svm_peer_auth_failures_total", "svm_peer_up",
	"svm_lock_acquire_duration_seconds", "svm_barrier_wait_duration_seconds",
	"svm_job_ranks", "svm_page_faults_total", "svm_twins_total",
	"svm_diffs_created_total", "svm_diff_bytes_created_total",
	"svm_diffs_applied_total", "svm_diff_bytes_applied_total",
	"svm_messages_sent_total", "svm_message_bytes_sent_total",
	"svm_messages_received_total", "svm_message_bytes_received_total",
	"svm_lock_acquires_total", "svm_barriers_total", "svm_invalidations_total",
	"svm_garbage_collections_total", "svm_protocol_metadata_bytes",
	"svm_node_jobs_total", "svm_node_page_faults_total", "svm_node_twins_total",
	"svm_node_diffs_created_total", "svm_node_diff_bytes_created_total",
	"svm_node_diffs_applied_total", "svm_node_diff_bytes_applied_total",
	"svm_node_messages_sent_total", "svm_node_message_bytes_sent_total",
	"svm_node_messages_received_total", "svm_node_message_bytes_received_total",
	"svm_node_lock_acquires_total", "svm_node_lock_wait_seconds_total",
	"svm_node_barriers_total", "svm_node_barrier_wait_seconds_total",
	"svm_node_invalidations_total", "svm_node_garbage_collections_total",
}

// waitBuckets span a local lock acquire (tens of microseconds) to a
// barrier behind a slow rank (tens of seconds).
var waitBuckets = prometheus.ExponentialBuckets(10e-6, 4, 12)

func newMetrics(d *Daemon) *metrics {
	m := &metrics{
		d:   d,
		reg: prometheus.NewRegistry(),
		jobsRunning: prometheus.NewGauge(prometheus.GaugeOpts{Name: "svm_jobs_running",
			Help: "Jobs submitted through this node that are running."}),
		jobsFinished: prometheus.NewCounter(prometheus.CounterOpts{Name: "svm_jobs_finished_total",
			Help: "Jobs submitted through this node that ended with every rank exiting 0."}),
		jobsFailed: prometheus.NewCounter(prometheus.CounterOpts{Name: "svm_jobs_failed_total",
			Help: "Jobs submitted through this node that failed."}),
		authFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "svm_peer_auth_failures_total",
			Help: "Peer connections whose handshake failed on the cluster secret."}),
		peerUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "svm_peer_up",
			Help: "1 while the link to the peer node is up."}, []string{"peer"}),
		lockWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "svm_lock_acquire_duration_seconds",
			Help:    "Time from a rank's lock call to the grant; locality remote when the grant took messages.",
			Buckets: waitBuckets}, []string{"job_id", "locality"}),
		barrierWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "svm_barrier_wait_duration_seconds",
			Help:    "Time a rank spent in a barrier call.",
			Buckets: waitBuckets}, []string{"job_id"}),
	}
	m.reg.MustRegister(m.jobsRunning, m.jobsFinished, m.jobsFailed, m.authFailures, m.peerUp,
		m.lockWait, m.barrierWait, jobCollector{d},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	return mux
}

// observer times the lock and barrier calls of a job's ranks here.
func (m *metrics) observer(job string) *jobObserver {
	return &jobObserver{
		local:   m.lockWait.WithLabelValues(job, "local"),
		remote:  m.lockWait.WithLabelValues(job, "remote"),
		barrier: m.barrierWait.WithLabelValues(job),
	}
}

// forget removes a job's series when its part here ends.
func (m *metrics) forget(job string) {
	m.lockWait.DeletePartialMatch(prometheus.Labels{"job_id": job})
	m.barrierWait.DeletePartialMatch(prometheus.Labels{"job_id": job})
}

type jobObserver struct {
	local, remote, barrier prometheus.Observer
}

func (o *jobObserver) LockAcquired(_ int, remote bool, wait time.Duration) {
	if remote {
		o.remote.Observe(wait.Seconds())
	} else {
		o.local.Observe(wait.Seconds())
	}
}

func (o *jobObserver) BarrierLeft(_ int, wait time.Duration) {
	o.barrier.Observe(wait.Seconds())
}

// The job series, read from the engines' counters at each scrape.
var (
	descRanks         = jobDesc("svm_job_ranks", "Ranks of the job on this node.")
	descFaults        = jobDesc("svm_page_faults_total", "Page faults of the job's ranks here, by kind (read, write).", "kind")
	descTwins         = jobDesc("svm_twins_total", "Twins made before a page was first written in an interval.")
	descDiffsCreated  = jobDesc("svm_diffs_created_total", "Diffs made at the end of intervals.")
	descDiffBytesMade = jobDesc("svm_diff_bytes_created_total", "Encoded bytes of the diffs made.")
	descDiffsApplied  = jobDesc("svm_diffs_applied_total", "Diffs applied to bring pages up to date.")
	descDiffBytesUsed = jobDesc("svm_diff_bytes_applied_total", "Encoded bytes of the diffs applied.")
	descMsgsSent      = jobDesc("svm_messages_sent_total", "Protocol messages the job's ranks here sent, by type and the receiver's node.", "type", "peer")
	descBytesSent     = jobDesc("svm_message_bytes_sent_total", "Encoded bytes of the protocol messages sent.", "type", "peer")
	descMsgsReceived  = jobDesc("svm_messages_received_total", "Protocol messages the job's ranks here received, by type and the sender's node.", "type", "peer")
	descBytesReceived = jobDesc("svm_message_bytes_received_total", "Encoded bytes of the protocol messages received.", "type", "peer")
	descLockAcquires  = jobDesc("svm_lock_acquires_total", "Lock acquires; remote when the grant took messages.", "locality")
	descBarriers      = jobDesc("svm_barriers_total", "Barriers the job's ranks here passed.")
	descInvalidations = jobDesc("svm_invalidations_total", "Pages invalidated by write notices.")
	descCollections   = jobDesc("svm_garbage_collections_total", "Garbage collections of protocol metadata.")
	descMetadata      = jobDesc("svm_protocol_metadata_bytes", "Protocol metadata (intervals, write notices, diffs) the job's ranks here hold.")
)

// The node's series: the same counters summed over every job that has had
// ranks on this node since svmd started, ended jobs included, so that they
// only grow and a scrape between jobs still sees what the last one did.
var (
	descNodeJobs          = nodeDesc("svm_node_jobs_total", "Jobs that have had ranks on this node, running ones included.")
	descNodeFaults        = nodeDesc("svm_node_page_faults_total", "Page faults of every job's ranks on this node, by kind (read, write).", "kind")
	descNodeTwins         = nodeDesc("svm_node_twins_total", "Twins made by every job's ranks on this node.")
	descNodeDiffsCreated  = nodeDesc("svm_node_diffs_created_total", "Diffs made by every job's ranks on this node.")
	descNodeDiffBytesMade = nodeDesc("svm_node_diff_bytes_created_total", "Encoded bytes of the diffs made on this node.")
	descNodeDiffsApplied  = nodeDesc("svm_node_diffs_applied_total", "Diffs applied by every job's ranks on this node.")
	descNodeDiffBytesUsed = nodeDesc("svm_node_diff_bytes_applied_total", "Encoded bytes of the diffs applied on this node.")
	descNodeMsgsSent      = nodeDesc("svm_node_messages_sent_total", "Protocol messages every job's ranks here sent, by type and the receiver's node.", "type", "peer")
	descNodeBytesSent     = nodeDesc("svm_node_message_bytes_sent_total", "Encoded bytes of the protocol messages sent from this node.", "type", "peer")
	descNodeMsgsReceived  = nodeDesc("svm_node_messages_received_total", "Protocol messages every job's ranks here received, by type and the sender's node.", "type", "peer")
	descNodeBytesReceived = nodeDesc("svm_node_message_bytes_received_total", "Encoded bytes of the protocol messages received on this node.", "type", "peer")
	descNodeLockAcquires  = nodeDesc("svm_node_lock_acquires_total", "Lock acquires on this node; remote when the grant took messages.", "locality")
	descNodeLockWait      = nodeDesc("svm_node_lock_wait_seconds_total", "Time the ranks on this node spent waiting for locks.")
	descNodeBarriers      = nodeDesc("svm_node_barriers_total", "Barriers the ranks on this node passed.")
	descNodeBarrierWait   = nodeDesc("svm_node_barrier_wait_seconds_total", "Time the ranks on this node spent in barriers.")
	descNodeInvalidations = nodeDesc("svm_node_invalidations_total", "Pages invalidated by write notices on this node.")
	descNodeCollections   = nodeDesc("svm_node_garbage_collections_total", "Garbage collections of protocol metadata on this node.")
)

func jobDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"job_id"}, labels...), nil)
}

func nodeDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// flowKey is a flow of messages by type and the other end's node.
type flowKey struct{ typ, peer string }

// counts are the counters of a set of ranks: one job's here, or the node's.
type counts struct {
	total          engine.RankSnapshot
	sent, received map[flowKey]engine.FlowCount
}

func newCounts() *counts {
	return &counts{sent: map[flowKey]engine.FlowCount{}, received: map[flowKey]engine.FlowCount{}}
}

// add adds the ranks' snapshots; placement names each rank's node.
func (c *counts) add(snaps []engine.RankSnapshot, placement []string) {
	for _, s := range snaps {
		c.total.AddCounts(s)
		for f, n := range s.Sent {
			k := flowKey{f.Type.String(), placement[f.Peer]}
			c.sent[k] = addFlow(c.sent[k], n)
		}
		for f, n := range s.Received {
			k := flowKey{f.Type.String(), placement[f.Peer]}
			c.received[k] = addFlow(c.received[k], n)
		}
	}
}

// merge adds another set's counters.
func (c *counts) merge(o *counts) {
	c.total.AddCounts(o.total)
	for k, n := range o.sent {
		c.sent[k] = addFlow(c.sent[k], n)
	}
	for k, n := range o.received {
		c.received[k] = addFlow(c.received[k], n)
	}
}

func addFlow(a, b engine.FlowCount) engine.FlowCount {
	return engine.FlowCount{Messages: a.Messages + b.Messages, Bytes: a.Bytes + b.Bytes}
}

// nodeHistory is what the jobs that have ended here did, under the
// daemon's mu.
type nodeHistory struct {
	jobs  int64
	ended *counts
}

// retire adds a part's final counters to the node's history; called with
// the daemon's mu held, as the collector reads it, so that no scrape sees
// the part both running and ended, or neither.
func (h *nodeHistory) retire(snaps []engine.RankSnapshot, placement []string) {
	if h.ended == nil {
		h.ended = newCounts()
	}
	h.ended.add(snaps, placement)
}

type jobCollector struct{ d *Daemon }

func (c jobCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRanks, descFaults, descTwins, descDiffsCreated, descDiffBytesMade,
		descDiffsApplied, descDiffBytesUsed, descMsgsSent, descBytesSent, descMsgsReceived, descBytesReceived,
		descLockAcquires, descBarriers, descInvalidations, descCollections, descMetadata,
		descNodeJobs, descNodeFaults, descNodeTwins, descNodeDiffsCreated, descNodeDiffBytesMade,
		descNodeDiffsApplied, descNodeDiffBytesUsed, descNodeMsgsSent, descNodeBytesSent, descNodeMsgsReceived,
		descNodeBytesReceived, descNodeLockAcquires, descNodeLockWait, descNodeBarriers, descNodeBarrierWait,
		descNodeInvalidations, descNodeCollections} {
		ch <- d
	}
}

func (c jobCollector) Collect(ch chan<- prometheus.Metric) {
	type running struct {
		id     string
		ranks  int
		counts *counts
	}
	// The running parts are read with the node's history in one hold of
	// the lock (see retire).
	node := newCounts()
	var jobs []running
	c.d.mu.Lock()
	jobsTotal := c.d.history.jobs
	if c.d.history.ended != nil {
		node.merge(c.d.history.ended)
	}
	for _, p := range c.d.parts {
		snaps := p.eng.Snapshot()
		j := running{p.id, len(snaps), newCounts()}
		j.counts.add(snaps, p.placement)
		node.merge(j.counts)
		jobs = append(jobs, j)
	}
	c.d.mu.Unlock()
	for _, j := range jobs {
		ch <- prometheus.MustNewConstMetric(descRanks, prometheus.GaugeValue, float64(j.ranks), j.id)
		ch <- prometheus.MustNewConstMetric(descMetadata, prometheus.GaugeValue, float64(j.counts.total.Metadata), j.id)
		emitCounts(ch, j.counts, jobDescs, j.id)
	}
	ch <- prometheus.MustNewConstMetric(descNodeJobs, prometheus.CounterValue, float64(jobsTotal))
	ch <- prometheus.MustNewConstMetric(descNodeLockWait, prometheus.CounterValue, node.total.LockWait.Seconds())
	ch <- prometheus.MustNewConstMetric(descNodeBarrierWait, prometheus.CounterValue, node.total.BarrierWait.Seconds())
	emitCounts(ch, node, nodeDescs)
}

// countDescs are the descriptions of one set of counter series.
type countDescs struct {
	faults, twins, diffsCreated, diffBytesMade, diffsApplied, diffBytesUsed,
	msgsSent, bytesSent, msgsReceived, bytesReceived, lockAcquires, barriers,
	invalidations, collections *prometheus.Desc
}

var (
	jobDescs = countDescs{descFaults, descTwins, descDiffsCreated, descDiffBytesMade, descDiffsApplied, descDiffBytesUsed,
		descMsgsSent, descBytesSent, descMsgsReceived, descBytesReceived, descLockAcquires, descBarriers,
		descInvalidations, descCollections}
	nodeDescs = countDescs{descNodeFaults, descNodeTwins, descNodeDiffsCreated, descNodeDiffBytesMade, descNodeDiffsApplied,
		descNodeDiffBytesUsed, descNodeMsgsSent, descNodeBytesSent, descNodeMsgsReceived, descNodeBytesReceived,
		descNodeLockAcquires, descNodeBarriers, descNodeInvalidations, descNodeCollections}
)

// emitCounts sends c's counters as the series of ds, each labelled with
// prefix (the job's id, or nothing) first.
func emitCounts(ch chan<- prometheus.Metric, c *counts, ds countDescs, prefix ...string) {
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append(slices.Clone(prefix), labels...)...)
	}
	st := c.total.Stats
	counter(ds.faults, st.ReadFaults, "read")
	counter(ds.faults, st.WriteFaults, "write")
	counter(ds.twins, st.Twins)
	counter(ds.diffsCreated, st.DiffsCreated)
	counter(ds.diffBytesMade, st.DiffBytesCreated)
	counter(ds.diffsApplied, st.DiffsApplied)
	counter(ds.diffBytesUsed, st.DiffBytesApplied)
	counter(ds.lockAcquires, st.LockAcquiresLocal, "local")
	counter(ds.lockAcquires, st.LockAcquiresRemote, "remote")
	counter(ds.barriers, st.Barriers)
	counter(ds.invalidations, st.Invalidations)
	counter(ds.collections, st.Collections)
	for k, n := range c.sent {
		counter(ds.msgsSent, n.Messages, k.typ, k.peer)
		counter(ds.bytesSent, n.Bytes, k.typ, k.peer)
	}
	for k, n := range c.received {
		counter(ds.msgsReceived, n.Messages, k.typ, k.peer)
		counter(ds.bytesReceived, n.Bytes, k.typ, k.peer)
	}
}
