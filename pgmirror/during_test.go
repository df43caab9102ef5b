package pgmirror_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// A backfill misses no record created or changed while it runs, even with
// no webhook to bring them: invoices are created (through the API and by
// quote acceptances that convert) and changed (sent, paid, updated, voided)
// from the start of the backfill until the invoices' walk is half done,
// and 20 invoices are created once the walk has passed the last page, just
// before the backfill counts its rows against the total. The walk reaches
// the first (a list in creation order puts them after the pages it has
// walked), a closing pass from the last page finds the others; afterwards
// the mirror holds every record of the service. (The content of a record
// changed without an event after the walk passed it is the events' and the
// reconciler's to bring.)
func TestABackfillMissesNoRecordCreatedOrChangedDuringIt(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	ids := seed(t, srv, sizes{invoices: 1000, quotes: 200, bills: 50}, rand.New(rand.NewPCG(23, 24)))
	mut := newMutator(srv, ids)

	// Created after the walk passed the last page: before the second count
	// of the invoices (the first opens the walk).
	var counts atomic.Int64
	late := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if strings.HasSuffix(req.URL.Path, "/invoices") && req.URL.Query().Get("page_size") == "1" && counts.Add(1) == 2 {
			rng := rand.New(rand.NewPCG(26, 27))
			for range 20 {
				if err := mut.mutate("create invoice", rng); err != nil {
					return nil, err
				}
			}
		}
		return next(req)
	}
	schema := newSchemaName()
	cfg := testConfig(sdkClient(srv, invoicing.WithMiddleware(late)), schema)
	stop := make(chan struct{})
	var stopOnce sync.Once
	var changers sync.WaitGroup
	cfg.OnProgress = func(p pgmirror.Progress) {
		if p.Resource == pgmirror.Invoices && p.Listed >= 500 {
			stopOnce.Do(func() { // called in the walk: it goes on once the changes stopped
				close(stop)
				changers.Wait()
			})
		}
	}
	m := openMirror(t, cfg)

	var changed atomic.Int64
	for w := range 2 {
		changers.Go(func() {
			rng := rand.New(rand.NewPCG(25, uint64(w)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				kind := []string{"create invoice", "accept quote", "send invoice", "payment", "update invoice", "void"}[rng.IntN(6)]
				if mut.mutate(kind, rng) == nil {
					changed.Add(1)
				}
			}
		})
	}
	require.NoError(t, m.Backfill(context.Background()))
	require.Positive(t, changed.Load())

	diffs, _ := compareMirror(t, srv, schema)
	var missing []string
	for _, d := range diffs {
		if strings.HasSuffix(d, "missing from the mirror") || strings.HasSuffix(d, "not on the service") {
			missing = append(missing, d)
		}
	}
	assert.Empty(t, missing[:min(len(missing), 20)])
	db := adminPool(t, schema)
	assert.Equal(t, 2, count(t, db, `SELECT pass FROM mirror_backfill WHERE resource = 'invoices'`),
		"a closing pass found the invoices created after the walk")
	t.Logf("%d changes during the backfill", changed.Load())
}
