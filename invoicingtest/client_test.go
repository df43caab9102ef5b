package invoicingtest

import (
	"context"
	"errors"
	"net/http"
	"testing"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientIsWiredToTheServer checks only the wiring of Client and
// ClientWithKey (base URL and key); the API itself is tested over plain
// net/http elsewhere in this package.
func TestClientIsWiredToTheServer(t *testing.T) {
	srv, _ := newServer(t)
	created := createInvoice(t, srv, nil)

	inv, err := srv.Client().Invoices.Get(context.Background(), created["id"].(string))
	require.NoError(t, err)
	assert.Equal(t, "INV-0001", inv.InvoiceNumber)

	reqs := srv.Requests()
	assert.Equal(t, "/invoices/"+created["id"].(string), reqs[len(reqs)-1].Path)
	assert.Equal(t, http.StatusOK, reqs[len(reqs)-1].Status)

	revoked := srv.NewAPIKey(AllScopes()...)
	srv.RevokeAPIKey(revoked)
	_, err = srv.ClientWithKey(revoked, invoicing.WithMaxRetries(0)).Invoices.Get(context.Background(), created["id"].(string))
	var apiErr *invoicing.Error
	require.True(t, errors.As(err, &apiErr), "got %v", err)
	assert.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
}
