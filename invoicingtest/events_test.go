package invoicingtest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// A payload that cannot be encoded is a mistake in the fake. newEvent runs
// under s.mu, so it must not panic there (a panic holding the lock would
// hang every later request and Close); publish reports the mistake once the
// lock is free.
func TestAnEventThatCannotBeEncodedPanicsOnlyOutsideTheLock(t *testing.T) {
	srv, _ := newServer(t)
	srv.mu.Lock()
	var ev event
	assert.NotPanics(t, func() {
		ev = srv.newEvent(webhooks.EventInvoiceCreated, jsonobj.Object{{Key: "bad", Value: make(chan int)}})
	})
	srv.mu.Unlock()
	require.Error(t, ev.err)
	assert.Contains(t, ev.err.Error(), "invoicingtest: encoding the invoice.created payload")

	assert.PanicsWithError(t, ev.err.Error(), func() { srv.publish(ev) })
	assert.Empty(t, srv.Events(), "nothing was published")
	get(t, srv, "/invoices").requireStatus(t, http.StatusOK) // the lock is free
	srv.Close()                                              // and Close returns
}
