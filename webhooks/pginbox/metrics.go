package pginbox

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// ScrapeTimeout bounds the query that reads the inbox's depth at each
// scrape: when the database has not answered by then, the scrape goes on
// without the pending metrics and counts an inbox query error.
const ScrapeTimeout = 2 * time.Second

// An outcome is what became of a delivery at one step: the Handler's
// answer, or a Worker's run.
type outcome int

const (
	outcomeStored      outcome = iota // the Handler stored a new delivery and answered 200
	outcomeDuplicate                  // the Handler found it stored already and answered 200
	outcomeRefused                    // not a verified delivery: 4xx
	outcomeStoreFailed                // not stored, 500: the database (or a VerifierFunc) failed or was too slow
	outcomeThrottled                  // not read, 503: the backlog was over WithBackpressure's limits
	outcomeProcessed                  // a run succeeded
	outcomeRetried                    // a run failed; the delivery is tried again after the Backoff
	outcomeFailed                     // a run failed and the delivery was parked as failed
	outcomes
)

var outcomeNames = [outcomes]string{"stored", "duplicate", "refused", "store_failed", "throttled", "processed", "retried", "failed"}

// The metrics of Metrics.
var (
	deliveriesDesc = prometheus.NewDesc("invoicing_pginbox_deliveries_total",
		"Webhook deliveries by outcome. Handler: stored (new, acknowledged), duplicate (stored already, acknowledged), "+
			"refused (not a verified delivery: 4xx), store_failed (not stored, answered 5xx: the database, or BusinessHandler's lookup of the business's secrets, failed or was too slow; the service retries), "+
			"throttled (not read, answered 503 with Retry-After: the Workers' backlog was over WithBackpressure's limits; the service retries). "+
			"Workers, one per run of the callback: processed, retried (the run failed; tried again after the backoff), "+
			"failed (the run failed and the delivery was parked as failed).",
		[]string{"outcome"}, nil)
	inFlightDesc = prometheus.NewDesc("invoicing_pginbox_deliveries_in_flight",
		"Deliveries the Workers have claimed and are processing now.", nil, nil)
	workerErrorsDesc = prometheus.NewDesc("invoicing_pginbox_worker_database_errors_total",
		"Times a Worker could not claim a delivery or record its outcome because the database failed.", nil, nil)
	pendingDesc = prometheus.NewDesc("invoicing_pginbox_pending_deliveries",
		"Deliveries stored and not processed yet, read from the inbox table at scrape time, by state: "+
			"due (to be claimed now) or waiting (for the backoff after a failed run).",
		[]string{"state"}, nil)
	oldestDesc = prometheus.NewDesc("invoicing_pginbox_oldest_pending_age_seconds",
		"How long ago the oldest pending delivery was received (0 when none is pending), read from the inbox table at scrape time.",
		nil, nil)
	queryErrorsDesc = prometheus.NewDesc("invoicing_pginbox_inbox_query_errors_total",
		"Scrapes whose query of the inbox's depth failed or took longer than the scrape timeout; "+
			"such a scrape has no pending_deliveries nor oldest_pending_age_seconds.",
		nil, nil)
)

// Metrics holds the figures of a Handler and its Workers and is a
// prometheus.Collector: register it, and give it to the Handler
// (WithMetrics) and to each Worker (Worker.Metrics) of the inbox.
//
//	m := pginbox.NewMetrics(inserts) // the Handler's pool: one short query per scrape
//	prometheus.MustRegister(m)
//	http.Handle("/webhooks", pginbox.Handler(inserts, verifier, pginbox.WithMetrics(m)))
//	w := &pginbox.Worker{Pool: workers, Metrics: m, ...}
//
// Its metrics, all named invoicing_pginbox_..., carry no label with
// unbounded values: deliveries by outcome (invoicing_pginbox_deliveries_total:
// stored, duplicate, refused, store_failed, throttled, processed, retried,
// failed),
// deliveries in flight in the Workers, the Workers' database errors, and,
// queried from the table at each scrape within ScrapeTimeout, the pending
// deliveries (due, or waiting for their backoff) and the age of the oldest.
// The counters cover this process; the pending figures, the whole inbox
// (every replica reports the same). For two inboxes in one process, give
// each its Metrics and register them with different constant labels
// (prometheus.WrapRegistererWith).
type Metrics struct {
	pool       *pgxpool.Pool
	deliveries [outcomes]atomic.Int64
	inFlight   atomic.Int64
	workerErrs atomic.Int64
	queryErrs  atomic.Int64
}

// NewMetrics returns the Metrics of the inbox table in pool's database
// (the first schema of its search_path, as for Migrate and Handler), which
// is queried at each scrape. Give it the Handler's pool: the Workers' may
// have every connection held by a callback. NewMetrics panics if pool is
// nil.
func NewMetrics(pool *pgxpool.Pool) *Metrics {
	if pool == nil {
		panic("pginbox: NewMetrics needs a non-nil pool")
	}
	return &Metrics{pool: pool}
}

// add counts a delivery's outcome; m may be nil.
func (m *Metrics) add(o outcome) {
	if m != nil {
		m.deliveries[o].Add(1)
	}
}

// claimed adds n to the deliveries in flight; m may be nil.
func (m *Metrics) claimed(n int64) {
	if m != nil {
		m.inFlight.Add(n)
	}
}

// databaseError counts a Worker's database error; m may be nil.
func (m *Metrics) databaseError() {
	if m != nil {
		m.workerErrs.Add(1)
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{deliveriesDesc, inFlightDesc, workerErrorsDesc, pendingDesc, oldestDesc, queryErrorsDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. It queries the inbox table,
// through the partial index on its pending rows, for at most ScrapeTimeout.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for o, name := range outcomeNames {
		ch <- prometheus.MustNewConstMetric(deliveriesDesc, prometheus.CounterValue, float64(m.deliveries[o].Load()), name)
	}
	ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(m.inFlight.Load()))
	ch <- prometheus.MustNewConstMetric(workerErrorsDesc, prometheus.CounterValue, float64(m.workerErrs.Load()))
	if due, waiting, oldest, err := m.depth(); err != nil {
		m.queryErrs.Add(1)
	} else {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(due), "due")
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(waiting), "waiting")
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, oldest)
	}
	ch <- prometheus.MustNewConstMetric(queryErrorsDesc, prometheus.CounterValue, float64(m.queryErrs.Load()))
}

// depthSQL counts the pending deliveries, due and waiting, and the age in
// seconds of the oldest, on the database's clock. It reads only the
// pending rows, through the partial index.
const depthSQL = `SELECT count(*) FILTER (WHERE next_attempt_at <= now()),
       count(*) FILTER (WHERE next_attempt_at > now()),
       COALESCE(EXTRACT(EPOCH FROM now() - min(received_at)), 0)::float8
FROM ` + TableName + ` WHERE status = 'pending'`

// depth queries the inbox's pending deliveries.
func (m *Metrics) depth() (due, waiting int64, oldest float64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	err = m.pool.QueryRow(ctx, depthSQL).Scan(&due, &waiting, &oldest)
	return due, waiting, oldest, err
}

// WithMetrics makes the Handler (or BusinessHandler) count the deliveries
// it stores, finds stored already, refuses, fails to store and, with
// WithBackpressure, turns away for the backlog in m (see Metrics). Its counts are not per business: a label per business would
// grow without bound; the table has the figures per business (see the
// package documentation).
func WithMetrics(m *Metrics) HandlerOption {
	return func(c *handlerConfig) { c.metrics = m }
}

// count wraps a Handler to count its 4xx answers as refused and its 5xx
// as store_failed when the configuration has Metrics (store counts the
// rest).
func (cfg handlerConfig) count(h http.Handler) http.Handler {
	m := cfg.metrics
	if m == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		switch {
		case sw.status >= 500:
			m.add(outcomeStoreFailed)
		case sw.status >= 400:
			m.add(outcomeRefused)
		}
	})
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}
