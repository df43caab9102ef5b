package pgmirror_test

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// sample returns the value of the sample of a scrape whose name and labels
// are series (such as `x_total{a="b"}`), or -1 when there is none.
func sample(scrape, series string) float64 {
	for line := range strings.Lines(scrape) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// invoicing-mirror --metrics serves the mirror's metrics, and its inbox's,
// on an address of its own, by route template and never by id; /readyz answers 503 while
// the backfill is not complete and 200 after, /healthz 200 throughout.
func TestTheCommandServesMetricsAndReadiness(t *testing.T) {
	t.Parallel()
	srv := invoicingtest.NewTestServer(t) // the wall clock: the process verifies deliveries with it
	seed(t, srv, sizes{invoices: 120, clients: 5}, rand.New(rand.NewPCG(41, 42)))
	srv.InjectFault(invoicingtest.Fault{Status: 503, Method: "GET", Path: "/invoices", Count: 1_000_000})
	secret := strings.Repeat("6f", 32)
	schema := newSchemaName()
	p := startServing(t, commandEnv(srv.URL, srv.FullKey, secret, server.URL),
		"--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--schema", schema, "--coalesce", "20ms")
	srv.AddWebhookEndpointWithSecret(p.base+"/webhooks", secret)
	scrape := func() string {
		t.Helper()
		status, body, err := get(p.metrics + "/metrics")
		require.NoError(t, err)
		require.Equal(t, 200, status, body)
		return body
	}

	// The invoices' walk fails: not ready, but alive.
	waitUntil(t, 30*time.Second, func() (bool, string) {
		return sample(scrape(), `invoicing_mirror_api_requests_total{route="GET /invoices",status="503"}`) > 0, "a 503 counted"
	})
	for _, path := range []string{"/readyz", "/readyz?business=default"} {
		status, body, err := get(p.base + path)
		require.NoError(t, err)
		assert.Equal(t, 503, status, "%s: %s", path, body)
	}
	status, _, err := get(p.base + "/healthz")
	require.NoError(t, err)
	assert.Equal(t, 200, status)
	status, _, err = get(p.base + "/readyz?business=nobody")
	require.NoError(t, err)
	assert.Equal(t, 404, status, "a business the mirror does not know")

	srv.ClearFaults()
	waitStatus(t, p.base+"/readyz", 200, time.Minute)
	waitStatus(t, p.base+"/readyz?business=default", 200, time.Minute)

	// An event whose fetch meets a 429 asking for a one-second pause.
	srv.InjectFault(invoicingtest.Fault{Status: 429, RetryAfter: time.Second, Method: "GET", Path: "/invoices/*"})
	inv := createInvoice(t, srv.Client(), invoicing.InvoiceStatusAwaitingPayment, 2)
	db := checkerPool(t, schema)
	waitUntil(t, 30*time.Second, func() (bool, string) {
		return count(t, db, `SELECT count(*) FROM invoices WHERE id = $1`, inv.ID) == 1, "the invoice mirrored"
	})

	var got string
	waitUntil(t, 10*time.Second, func() (bool, string) {
		got = scrape()
		return sample(got, `invoicing_mirror_event_lag_seconds_count{resource="invoices"}`) >= 1, "the lag observed"
	})
	for series, want := range map[string]float64{
		`invoicing_mirror_api_requests_total{route="GET /invoices/{id}",status="429"}`: 1,
		`invoicing_mirror_api_requests_total{route="GET /invoices/{id}",status="200"}`: 1,
		`invoicing_mirror_api_rate_limit_pause_seconds_total`:                          1,
		`invoicing_mirror_dependency_up{dependency="postgresql"}`:                      1,
		`invoicing_mirror_dependency_up{dependency="api"}`:                             1,
		`invoicing_mirror_pending_fetches{resource="invoices"}`:                        0,
		`invoicing_pginbox_pending_deliveries{state="due"}`:                            0,
		`invoicing_pginbox_oldest_pending_age_seconds`:                                 0,
		`invoicing_mirror_backfill_complete{resource="invoices"}`:                      1,
		`invoicing_mirror_backfill_total_records{resource="invoices"}`:                 120,
		`invoicing_mirror_changes_total{cause="backfill",resource="invoices"}`:         120,
		`invoicing_mirror_changes_total{cause="event",resource="invoices"}`:            1,
		`invoicing_mirror_changes_total{cause="reconciliation",resource="invoices"}`:   0,
		`invoicing_mirror_reconciliation_corrections_total{resource="invoices"}`:       0,
		`invoicing_mirror_deletion_marks_total{resource="invoices"}`:                   0,
		`invoicing_mirror_reconciliations_overdue`:                                     0,
		`invoicing_mirror_businesses{state="paused"}`:                                  0,
	} {
		assert.Equal(t, want, sample(got, series), series)
	}
	assert.Greater(t, sample(got, `invoicing_mirror_api_requests_total{route="GET /invoices",status="200"}`), 1.0)
	assert.GreaterOrEqual(t, sample(got, `invoicing_mirror_backfill_listed_records{resource="invoices"}`), 120.0)
	assert.Equal(t, 1.0, sample(got, `invoicing_pginbox_deliveries_total{outcome="stored"}`), "the inbox's collector, fed by the Handler")
	assert.GreaterOrEqual(t, sample(got, `invoicing_pginbox_deliveries_total{outcome="processed"}`), 1.0, "and by the Workers")
	assert.Greater(t, sample(got, `invoicing_mirror_event_lag_seconds_sum{resource="invoices"}`), 1.0, "the pause is part of the lag")
	assert.NotRegexp(t, uuidPattern, got, "no id in any label")
	for name := range strings.SplitSeq("api_requests_total api_rate_limit_pause_seconds_total event_lag_seconds dependency_up pending_fetches "+
		"backfill_listed_records backfill_total_records backfill_complete reconciliation_corrections_total "+
		"deletion_marks_total changes_total businesses reconciliations_overdue", " ") {
		assert.Contains(t, got, "# HELP invoicing_mirror_"+name+" ", name)
	}
	p.stop(t)
}
