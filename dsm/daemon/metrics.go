package daemon

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/svmcluster/svm/dsm/engine"
)

// metrics are what svmd serves on /metrics. Job series carry the job's id
// as job_id (not job, which Prometheus gives every target) and exist only
// while the job has ranks on this node; every other label is bounded
// (kinds, message types, node names).
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

func jobDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"job_id"}, labels...), nil)
}

type jobCollector struct{ d *Daemon }

func (c jobCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRanks, descFaults, descTwins, descDiffsCreated, descDiffBytesMade,
		descDiffsApplied, descDiffBytesUsed, descMsgsSent, descBytesSent, descMsgsReceived, descBytesReceived,
		descLockAcquires, descBarriers, descInvalidations, descCollections, descMetadata} {
		ch <- d
	}
}

func (c jobCollector) Collect(ch chan<- prometheus.Metric) {
	type running struct {
		id        string
		eng       *engine.Engine
		placement []string
	}
	var jobs []running
	c.d.mu.Lock()
	for _, p := range c.d.parts {
		jobs = append(jobs, running{p.id, p.eng, p.placement})
	}
	c.d.mu.Unlock()
	for _, j := range jobs {
		var total engine.RankSnapshot
		type flowKey struct{ typ, peer string }
		sent := map[flowKey]engine.FlowCount{}
		received := map[flowKey]engine.FlowCount{}
		snaps := j.eng.Snapshot()
		for _, s := range snaps {
			addStats(&total, s)
			for f, n := range s.Sent {
				k := flowKey{f.Type.String(), j.placement[f.Peer]}
				sent[k] = addFlow(sent[k], n)
			}
			for f, n := range s.Received {
				k := flowKey{f.Type.String(), j.placement[f.Peer]}
				received[k] = addFlow(received[k], n)
			}
		}
		counter := func(d *prometheus.Desc, v int64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{j.id}, labels...)...)
		}
		st := total.Stats
		ch <- prometheus.MustNewConstMetric(descRanks, prometheus.GaugeValue, float64(len(snaps)), j.id)
		ch <- prometheus.MustNewConstMetric(descMetadata, prometheus.GaugeValue, float64(total.Metadata), j.id)
		counter(descFaults, st.ReadFaults, "read")
		counter(descFaults, st.WriteFaults, "write")
		counter(descTwins, st.Twins)
		counter(descDiffsCreated, st.DiffsCreated)
		counter(descDiffBytesMade, st.DiffBytesCreated)
		counter(descDiffsApplied, st.DiffsApplied)
		counter(descDiffBytesUsed, st.DiffBytesApplied)
		counter(descLockAcquires, st.LockAcquiresLocal, "local")
		counter(descLockAcquires, st.LockAcquiresRemote, "remote")
		counter(descBarriers, st.Barriers)
		counter(descInvalidations, st.Invalidations)
		counter(descCollections, st.Collections)
		for k, n := range sent {
			counter(descMsgsSent, n.Messages, k.typ, k.peer)
			counter(descBytesSent, n.Bytes, k.typ, k.peer)
		}
		for k, n := range received {
			counter(descMsgsReceived, n.Messages, k.typ, k.peer)
			counter(descBytesReceived, n.Bytes, k.typ, k.peer)
		}
	}
}

func addFlow(a, b engine.FlowCount) engine.FlowCount {
	return engine.FlowCount{Messages: a.Messages + b.Messages, Bytes: a.Bytes + b.Bytes}
}

// addStats adds one rank's counters to a job's total.
func addStats(t *engine.RankSnapshot, s engine.RankSnapshot) {
	a, b := &t.Stats, s.Stats
	a.ReadFaults += b.ReadFaults
	a.WriteFaults += b.WriteFaults
	a.Twins += b.Twins
	a.DiffsCreated += b.DiffsCreated
	a.DiffBytesCreated += b.DiffBytesCreated
	a.DiffsApplied += b.DiffsApplied
	a.DiffBytesApplied += b.DiffBytesApplied
	a.LockAcquiresLocal += b.LockAcquiresLocal
	a.LockAcquiresRemote += b.LockAcquiresRemote
	a.Barriers += b.Barriers
	a.Invalidations += b.Invalidations
	a.Collections += b.Collections
	t.Metadata += s.Metadata
}
