package redisdedup

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of a Deduper's Collector.
var (
	deliveriesDesc = prometheus.NewDesc("invoicing_redisdedup_deliveries_total",
		"Deliveries the Deduper dealt with, by outcome: processed or failed (the callback succeeded or not, and the claim was released), "+
			"duplicate (already processed: acknowledged without processing), in_flight (being processed elsewhere: answered 409), "+
			"unavailable (Redis failed or did not answer the claim in time: answered 500, the service retries).",
		[]string{"outcome"}, nil)
	claimsInFlightDesc = prometheus.NewDesc("invoicing_redisdedup_claims_in_flight",
		"Claims the Deduper holds now: deliveries being processed.", nil, nil)
	releasesDesc = prometheus.NewDesc("invoicing_redisdedup_releases_total",
		"Claim ends (releases, and claims the Deduper stopped waiting for), by result: ok (recorded), "+
			"lease_expired (the lease had run out and another claim taken the delivery, which may have been processed twice), "+
			"gave_up (Redis did not answer within the TTL, or the lease for a delivery not processed), error (Redis refused the command).",
		[]string{"result"}, nil)
	releasesPendingDesc = prometheus.NewDesc("invoicing_redisdedup_releases_pending",
		"Claim ends Redis has not answered in time and that are retried in the background now.", nil, nil)
	releasesDeferredDesc = prometheus.NewDesc("invoicing_redisdedup_releases_deferred_total",
		"Claim ends Redis did not answer in time, left to the background retries.", nil, nil)
	releaseRetriesDesc = prometheus.NewDesc("invoicing_redisdedup_release_retries_total",
		"Tries of the background retries of claim ends.", nil, nil)
	releaseBackoffDesc = prometheus.NewDesc("invoicing_redisdedup_release_backoff_seconds",
		"The wait between two tries of the background retries now; 0 when none run.", nil, nil)
	redisErrorsDesc = prometheus.NewDesc("invoicing_redisdedup_redis_errors_total",
		"Commands to Redis that failed, by command (claim, release) and kind: timeout (not answered within the Deduper's timeout), "+
			"error (a network error or an error reply).",
		[]string{"command", "kind"}, nil)
)

// Collector returns a prometheus.Collector of the Deduper's figures, for
// the caller to register (prometheus.MustRegister(d.Collector())). Its
// metrics, all named invoicing_redisdedup_..., carry no label with
// unbounded values (no delivery id): deliveries by outcome, claims in
// flight, releases by result, releases pending in the background, their
// retries and wait, and Redis errors by command and kind. The figures are
// kept whether or not a Collector is registered; collecting reads them.
// Register one Collector per Deduper; for several Dedupers in one process,
// tell them apart with prometheus.WrapRegistererWith and a constant label.
func (d *Deduper) Collector() prometheus.Collector {
	return collector{d}
}

type collector struct{ d *Deduper }

// Describe implements prometheus.Collector.
func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{deliveriesDesc, claimsInFlightDesc, releasesDesc, releasesPendingDesc,
		releasesDeferredDesc, releaseRetriesDesc, releaseBackoffDesc, redisErrorsDesc} {
		ch <- desc
	}
}

// Collect implements prometheus.Collector.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := &c.d.stats
	for o, name := range outcomeNames {
		ch <- prometheus.MustNewConstMetric(deliveriesDesc, prometheus.CounterValue, float64(s.deliveries[o].Load()), name)
	}
	ch <- prometheus.MustNewConstMetric(claimsInFlightDesc, prometheus.GaugeValue, float64(s.held.Load()))
	for r, name := range resultNames {
		ch <- prometheus.MustNewConstMetric(releasesDesc, prometheus.CounterValue, float64(s.releases[r].Load()), name)
	}
	ch <- prometheus.MustNewConstMetric(releasesPendingDesc, prometheus.GaugeValue, float64(s.pending.Load()))
	ch <- prometheus.MustNewConstMetric(releasesDeferredDesc, prometheus.CounterValue, float64(s.deferred.Load()))
	ch <- prometheus.MustNewConstMetric(releaseRetriesDesc, prometheus.CounterValue, float64(s.retries.Load()))
	ch <- prometheus.MustNewConstMetric(releaseBackoffDesc, prometheus.GaugeValue, time.Duration(s.backoff.Load()).Seconds())
	for o, command := range opNames {
		for k, kind := range kindNames {
			ch <- prometheus.MustNewConstMetric(redisErrorsDesc, prometheus.CounterValue, float64(s.redisErrors[o][k].Load()), command, kind)
		}
	}
}
