package pgmirror

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// Metrics are a mirror's Prometheus metrics. Build them with NewMetrics,
// give them to Config.Metrics and their Middleware to the mirror's Client
// (invoicing.WithMiddleware), and register them with a
// prometheus.Registerer, with the Mirror's InboxMetrics (the webhook
// inbox's depth, oldest pending age and deliveries by outcome, named
// invoicing_pginbox_...). They are, all named invoicing_mirror_..., with
// labels of bounded values only (never a record's id):
//
//   - pending_fetches{resource}: the records events named that wait to be
//     fetched, read at scrape time;
//   - event_lag_seconds{resource}: a histogram of the time from a
//     delivery's receipt to the commit of the row its event called for;
//   - api_requests_total{route,status}: the requests sent to the service,
//     each attempt, by route template ("GET /invoices/{id}") and status;
//   - api_rate_limit_pause_seconds_total: the time the service asked the
//     mirror to pause (the Retry-After of its 429s);
//   - dependency_up{dependency}: 1 while PostgreSQL ("postgresql") or the
//     API ("api") answers the mirror's loops, 0 while it is away;
//   - backfill_listed_records{resource}, backfill_total_records{resource}
//     and backfill_complete{resource}: the backfill's progress, read from
//     its checkpoints at scrape time (records its walks wrote, the
//     service's count when the pass began, 1 once complete);
//   - reconciliation_corrections_total{resource}: rows reconciliations
//     inserted or corrected;
//   - deletion_marks_total{resource}: rows marked deleted because the
//     service no longer lists them;
//   - changes_total{resource,cause}: rows written to the change feed, by
//     what found the change (event, backfill, reconciliation);
//   - businesses{state}: the businesses this replica serves, and those of
//     them paused, read at scrape time;
//   - reconciliations_overdue: the businesses served whose last
//     reconciliation ended more than two ReconcileIntervals ago, read at
//     scrape time.
//
// The rules of alerts/invoicing-mirror.rules.yml (tested with promtool)
// alert on them, each with a runbook naming the command to run.
//
// The counters count what this process did since it started; the figures
// read from the database are the whole mirror's (every replica reports the
// same).
//
// The scrape-time queries take at most ScrapeTimeout; when the database
// does not answer in time, those metrics are left out of the scrape and
// the others are still served.
type Metrics struct {
	requests *prometheus.CounterVec
	paused   prometheus.Counter
	lag      *prometheus.HistogramVec

	mu          sync.Mutex
	pausedUntil time.Time       // the end of the last pause counted
	routes      map[string]bool // the route labels in use, at most maxRoutes

	mirror atomic.Pointer[Mirror] // the Mirror they serve
}

// ScrapeTimeout bounds the database queries of a scrape.
const ScrapeTimeout = 3 * time.Second

// maxRoutes bounds the route label's values: the SDK's route templates
// are far fewer; a request the SDK did not make would count as "other".
const maxRoutes = 100

// Descriptions of the metrics read at scrape time.
var (
	pendingFetchesDesc = prometheus.NewDesc("invoicing_mirror_pending_fetches",
		"Records that events named and that wait to be fetched, by resource (read at scrape time).", []string{"resource"}, nil)
	dependencyUpDesc = prometheus.NewDesc("invoicing_mirror_dependency_up",
		"1 while the dependency (postgresql or api) answered the mirror's last attempt to reach it, 0 while it is away.",
		[]string{"dependency"}, nil)
	backfillListedDesc = prometheus.NewDesc("invoicing_mirror_backfill_listed_records",
		"Records the backfill's walks have written, by resource, by every replica (a page read again counts again; read at scrape time).", []string{"resource"}, nil)
	backfillTotalDesc = prometheus.NewDesc("invoicing_mirror_backfill_total_records",
		"The service's count of the resource's records when the backfill's current pass began (read at scrape time).", []string{"resource"}, nil)
	backfillCompleteDesc = prometheus.NewDesc("invoicing_mirror_backfill_complete",
		"1 once the resource's backfill is complete, 0 before (read at scrape time).", []string{"resource"}, nil)
	correctionsDesc = prometheus.NewDesc("invoicing_mirror_reconciliation_corrections_total",
		"Rows this process's reconciliations inserted or corrected (changes that raised no event), by resource.", []string{"resource"}, nil)
	deletionsDesc = prometheus.NewDesc("invoicing_mirror_deletion_marks_total",
		"Rows this process marked deleted because the service no longer lists their records, by resource.", []string{"resource"}, nil)
	businessesDesc = prometheus.NewDesc("invoicing_mirror_businesses",
		"Businesses this replica serves, by state: served (including paused) and paused (the service refused the business's key "+
			"or kept failing its calls: no replica calls the service for it until the pause ends; see invoicing-mirror status).",
		[]string{"state"}, nil)
	overdueDesc = prometheus.NewDesc("invoicing_mirror_reconciliations_overdue",
		"Businesses served, with a complete copy, whose last reconciliation ended more than two reconcile intervals ago "+
			"(read at scrape time): changes that raise no event may be missing.", nil, nil)
	changesDesc = prometheus.NewDesc("invoicing_mirror_changes_total",
		"Rows this process wrote to the change feed, by resource and cause (event, backfill, reconciliation).", []string{"resource", "cause"}, nil)
)

// NewMetrics returns the metrics of one Mirror, all zero.
func NewMetrics() *Metrics {
	return &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "invoicing_mirror_api_requests_total",
			Help: "Requests the mirror sent to the service, each attempt, by route template (such as GET /invoices/{id}) and HTTP status (error when no response came).",
		}, []string{"route", "status"}),
		paused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "invoicing_mirror_api_rate_limit_pause_seconds_total",
			Help: "Seconds the service asked the mirror to pause its requests: the Retry-After of its 429 responses, overlapping pauses counted once.",
		}),
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "invoicing_mirror_event_lag_seconds",
			Help:    "Seconds from the receipt of a webhook delivery to the commit of the row its event called for, by resource.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600},
		}, []string{"resource"}),
		routes: map[string]bool{},
	}
}

// attach makes x the metrics of m.
func (x *Metrics) attach(m *Mirror) error {
	if !x.mirror.CompareAndSwap(nil, m) {
		return errors.New("pgmirror: Config.Metrics already serves another Mirror")
	}
	return nil
}

// detach frees x when m closes.
func (x *Metrics) detach(m *Mirror) {
	if x != nil {
		x.mirror.CompareAndSwap(m, nil)
	}
}

// Middleware counts the requests the Client sends, by route template and
// status, and the pauses the service asks for; give it to the mirror's
// Client with invoicing.WithMiddleware(metrics.Middleware).
func (x *Metrics) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	status := "error"
	if err == nil {
		status = strconv.Itoa(resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			x.pause(resp.Header.Get("Retry-After"), time.Now())
		}
	}
	x.requests.WithLabelValues(x.route(req), status).Inc()
	return resp, err
}

// route is req's route label: its route template, or "other" for a
// request the SDK did not make and past maxRoutes templates.
func (x *Metrics) route(req *http.Request) string {
	r := invoicing.Route(req)
	if r == "" {
		return "other"
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.routes[r] {
		if len(x.routes) >= maxRoutes {
			return "other"
		}
		x.routes[r] = true
	}
	return r
}

// pause counts the pause a 429's Retry-After (seconds or an HTTP date)
// asks for, minus the part an earlier pause already covers.
func (x *Metrics) pause(retryAfter string, now time.Time) {
	var until time.Time
	if s, err := strconv.Atoi(retryAfter); err == nil {
		until = now.Add(time.Duration(s) * time.Second)
	} else if t, err := http.ParseTime(retryAfter); err == nil {
		until = t
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !until.After(now) || !until.After(x.pausedUntil) {
		return
	}
	x.paused.Add(until.Sub(later(now, x.pausedUntil)).Seconds())
	x.pausedUntil = until
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// observeLag records the event lag of a record of resource, in seconds;
// x may be nil.
func (x *Metrics) observeLag(resource string, seconds float64) {
	if x != nil {
		x.lag.WithLabelValues(resource).Observe(seconds)
	}
}

// Describe sends the descriptions of the metrics (prometheus.Collector).
func (x *Metrics) Describe(ch chan<- *prometheus.Desc) {
	x.requests.Describe(ch)
	x.paused.Describe(ch)
	x.lag.Describe(ch)
	for _, d := range []*prometheus.Desc{dependencyUpDesc, correctionsDesc, deletionsDesc, changesDesc, businessesDesc, overdueDesc,
		pendingFetchesDesc, backfillListedDesc, backfillTotalDesc, backfillCompleteDesc} {
		ch <- d
	}
}

// Collect sends the metrics' values (prometheus.Collector), querying the
// database for the queues and the backfill's progress within
// ScrapeTimeout.
func (x *Metrics) Collect(ch chan<- prometheus.Metric) {
	x.requests.Collect(ch)
	x.paused.Collect(ch)
	x.lag.Collect(ch)
	m := x.mirror.Load()
	if m == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(dependencyUpDesc, prometheus.GaugeValue, gauge(m.db.up()), "postgresql")
	// The API is up while every business's calls find it.
	apiUp := true
	ts := m.tenants.all()
	for _, t := range ts {
		apiUp = apiUp && t.api.up()
	}
	ch <- prometheus.MustNewConstMetric(dependencyUpDesc, prometheus.GaugeValue, gauge(apiUp), "api")
	collectStats(ch, m.counters.snapshot())
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	// A query that fails leaves its metrics out of this scrape, and the
	// next ones too: dependency_up says why.
	q, err := m.store.Queues(ctx)
	if err != nil {
		return
	}
	for _, res := range allResources {
		ch <- prometheus.MustNewConstMetric(pendingFetchesDesc, prometheus.GaugeValue, float64(q.Fetches[res.name].Count), res.name)
	}
	progress, err := m.store.BackfillProgress(ctx)
	if err != nil {
		return
	}
	for _, res := range allResources {
		p := progress[res.name]
		ch <- prometheus.MustNewConstMetric(backfillListedDesc, prometheus.GaugeValue, float64(p.Listed), res.name)
		ch <- prometheus.MustNewConstMetric(backfillTotalDesc, prometheus.GaugeValue, float64(p.Total), res.name)
		ch <- prometheus.MustNewConstMetric(backfillCompleteDesc, prometheus.GaugeValue, gauge(p.Complete), res.name)
	}
	paused, err := m.store.CountPaused(ctx, names(ts))
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(businessesDesc, prometheus.GaugeValue, float64(len(ts)), "served")
	ch <- prometheus.MustNewConstMetric(businessesDesc, prometheus.GaugeValue, float64(paused), "paused")
	if overdue, err := m.store.CountOverdue(ctx, names(ts), 2*m.cfg.ReconcileInterval); err == nil {
		ch <- prometheus.MustNewConstMetric(overdueDesc, prometheus.GaugeValue, float64(overdue))
	}
}

// collectStats sends the data path's counters, every resource's (and
// cause's) series, zero or not.
func collectStats(ch chan<- prometheus.Metric, s statsSnapshot) {
	for _, res := range allResources {
		r := res.name
		ch <- prometheus.MustNewConstMetric(correctionsDesc, prometheus.CounterValue, float64(s.corrections[r]), r)
		ch <- prometheus.MustNewConstMetric(deletionsDesc, prometheus.CounterValue, float64(s.deleted[r]), r)
		for _, cause := range []string{CauseEvent, CauseBackfill, CauseReconciliation} {
			ch <- prometheus.MustNewConstMetric(changesDesc, prometheus.CounterValue, float64(s.changes[changeKey{r, cause}]), r, cause)
		}
	}
}

func gauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
