package redisdedup_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/redisdedup"
)

// One endpoint for many businesses, on two replicas sharing Redis: a
// delivery id is processed once per business, whichever replica receives
// it, and two businesses' deliveries with the same id are two deliveries.
func TestBusinessHandlerDeduplicatesEachBusinessApart(t *testing.T) {
	secrets := map[string]string{
		"acme":   "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
		"globex": "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1",
	}
	lookup := func(_ context.Context, business string) (*webhooks.Verifier, error) {
		s, ok := secrets[business]
		if !ok {
			return nil, fmt.Errorf("%w: %s", webhooks.ErrUnknownBusiness, business)
		}
		return webhooks.NewVerifier(s)
	}
	var mu sync.Mutex
	processed := map[string]int{} // business/delivery id -> calls
	fn := func(_ context.Context, d *webhooks.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		processed[d.Business+"/"+d.ID]++
		return nil
	}
	p := prefix(t)
	replicas := make([]http.Handler, 2)
	for i := range replicas {
		mux := http.NewServeMux()
		mux.Handle("POST /webhooks/{business}", webhooks.BusinessHandler(lookup, fn,
			webhooks.WithDeduper(redisdedup.New(newClient(t), redisdedup.WithKeyPrefix(p)))))
		replicas[i] = mux
	}
	body, err := webhooks.SampleBody(webhooks.EventInvoicePaid, time.Now())
	require.NoError(t, err)
	send := func(replica int, business, id, secret string) int {
		t.Helper()
		r, err := webhooks.TestDelivery{Secret: secret, Type: webhooks.EventInvoicePaid, DeliveryID: id, Body: body}.Request("/webhooks/" + business)
		require.NoError(t, err)
		w := httptest.NewRecorder()
		replicas[replica].ServeHTTP(w, r)
		return w.Code
	}

	for replica := range 2 { // each delivery twice, once on each replica
		assert.Equal(t, http.StatusOK, send(replica, "acme", "dlv-1", secrets["acme"]))
		assert.Equal(t, http.StatusOK, send(replica, "globex", "dlv-1", secrets["globex"]))
		assert.Equal(t, http.StatusOK, send(replica, "acme", "dlv-2", secrets["acme"]))
	}
	assert.Equal(t, http.StatusUnauthorized, send(0, "globex", "dlv-3", secrets["acme"]), "acme's signature on globex's URL")
	assert.Equal(t, map[string]int{"acme/dlv-1": 1, "globex/dlv-1": 1, "acme/dlv-2": 1}, processed)
}
