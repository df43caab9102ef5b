package invoicingotel_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	invoicingotel "github.com/invoicing-api/invoicing-go/otel"
)

// 10,100 calls with nearly as many distinct ids, spread over ten routes,
// some found, most not, 100 answered 429 first and retried, record at most
// 50 metric series and 10 span names, none with an id.
func TestDistinctIDsGiveFewSeries(t *testing.T) {
	const calls = 10_000
	srv := invoicingtest.NewTestServer(t)
	// Spans sampled at 1%, as a busy program would: the metric sees every
	// attempt, and the span names come from the sampled ones.
	tel := newTelemetry(t, sdktrace.TraceIDRatioBased(0.01))
	c := srv.Client(invoicing.WithMiddleware(tel.middleware()), invoicing.WithRetryWait(time.Millisecond, time.Millisecond))
	ctx := context.Background()
	gets := []func(id string) error{
		func(id string) error { _, err := c.Invoices.Get(ctx, id); return err },
		func(id string) error { _, err := c.Items.Get(ctx, id); return err },
		func(id string) error { _, err := c.Quotes.Get(ctx, id); return err },
		func(id string) error { _, err := c.Clients.Get(ctx, id); return err },
		func(id string) error { _, err := c.Suppliers.Get(ctx, id); return err },
		func(id string) error { _, err := c.Bills.Get(ctx, id); return err },
		func(id string) error { _, err := c.Accounts.Get(ctx, id); return err },
		func(id string) error { _, err := c.TaxCodes.Get(ctx, id); return err },
		func(id string) error {
			f, err := c.Invoices.PDF(ctx, id)
			if err == nil {
				err = f.Close()
			}
			return err
		},
		func(id string) error { _, err := c.BankTransactions.Get(ctx, id); return err },
	}
	// The seeded records: found, the rest not.
	found := map[int]string{3: invoicingtest.SeedClientID, 4: invoicingtest.SeedSupplierID, 6: invoicingtest.SeedRevenueAccountID, 7: invoicingtest.SeedGSTTaxCodeID}

	ids := map[string]bool{}
	var wg sync.WaitGroup
	const workers = 4
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < calls; i += workers {
				id := uuid.NewString()
				r := i % len(gets)
				if seeded, ok := found[r]; ok && i%100 < 10 {
					id = seeded
				}
				if err := gets[r](id); err != nil && !assert.ErrorIs(t, err, invoicing.ErrNotFound) {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	// And 100 more, each answered 429 first.
	const throttled = 100
	for range throttled {
		srv.InjectFault(invoicingtest.Fault{Status: http.StatusTooManyRequests, Path: "/items/*"})
		_, err := c.Items.Get(ctx, uuid.NewString())
		require.ErrorIs(t, err, invoicing.ErrNotFound)
	}
	reqs := srv.Requests()
	for _, r := range reqs {
		if uuidRE.MatchString(r.Path) {
			ids[uuidRE.FindString(r.Path)] = true
		}
	}
	require.Greater(t, len(ids), calls*9/10, "the calls carried thousands of distinct ids")
	require.Equal(t, calls+2*throttled, len(reqs), "every call, and a retry of each 429")

	points := tel.durations(t)
	var attempts uint64
	series := map[string]bool{}
	var statuses []string // the series of 429 answers
	for _, p := range points {
		attempts += p.Count
		a := attrs(p.Attributes.ToSlice())
		series[fmt.Sprint(a)] = true
		if a["http.response.status_code"] == "429" {
			statuses = append(statuses, fmt.Sprint(a))
		}
		for k, v := range a {
			assert.NotRegexp(t, uuidRE, v, "metric attribute %s", k)
		}
	}
	assert.Equal(t, uint64(len(reqs)), attempts, "one duration per attempt")
	assert.Len(t, series, len(points))
	assert.LessOrEqual(t, len(points), 50, "series")
	assert.Len(t, statuses, 1, "the 429s are a series of their own")

	spans := tel.attemptSpans()
	require.NotEmpty(t, spans)
	names := map[string]bool{}
	for _, s := range spans {
		names[s.Name] = true
		for _, a := range s.Attributes {
			assert.NotRegexp(t, uuidRE, a.Value.String(), "%s: attribute %s", s.Name, a.Key)
		}
	}
	assert.LessOrEqual(t, len(names), 10, "span names: one route template per resource")
	t.Logf("%d calls, %d attempts, %d distinct ids: %d metric series, %d span names in %d sampled spans",
		calls+throttled, attempts, len(ids), len(points), len(names), len(spans))
}

// Paths given to Client.Do whose ids are not UUIDs are routes the SDK
// cannot template: MaxRoutes of them are recorded, the others by method
// alone.
func TestRoutesAreBounded(t *testing.T) {
	base := serveAPI(t, func(http.ResponseWriter, *http.Request) {})
	tel := newTelemetry(t, nil)
	c := testClient(t, base, invoicing.WithMiddleware(tel.middleware()))
	ctx := context.Background()
	const paths = 3 * invoicingotel.MaxRoutes
	for i := range paths {
		require.NoError(t, c.Do(ctx, http.MethodGet, fmt.Sprintf("/widgets/w%d", i), nil, nil))
	}
	require.NoError(t, c.Do(ctx, http.MethodGet, "/widgets/w0", nil, nil), "a route already recorded")

	routes, unrouted := map[string]int{}, 0
	for _, s := range tel.attemptSpans() {
		if r, ok := attrs(s.Attributes)["http.route"]; ok {
			routes[r]++
			assert.Equal(t, "GET "+r, s.Name)
		} else {
			unrouted++
			assert.Equal(t, "GET", s.Name)
			assert.NotContains(t, attrs(s.Attributes), "url.template")
		}
	}
	assert.Len(t, routes, invoicingotel.MaxRoutes)
	assert.Equal(t, 2, routes["/widgets/w0"])
	assert.Equal(t, paths-invoicingotel.MaxRoutes, unrouted)
	assert.Len(t, tel.durations(t), invoicingotel.MaxRoutes+1, "a series per route, and one without")
}
