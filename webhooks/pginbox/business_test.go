package pginbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// The signing secrets of two businesses' endpoints, and the secret acme
// rotated away from, still accepted meanwhile.
const (
	acmeSecret    = webhooktest.Secret
	acmeOldSecret = "1111111111111111111111111111111111111111111111111111111111111111"
	globexSecret  = "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1"
)

// twoBusinesses is the VerifierFunc of acme (mid-rotation: two secrets)
// and globex; the business "broken" stands for a secrets store that fails.
func twoBusinesses(t *testing.T) webhooks.VerifierFunc {
	t.Helper()
	acme, err := webhooks.NewVerifier(acmeSecret, webhooks.WithSecrets(acmeOldSecret))
	require.NoError(t, err)
	globex, err := webhooks.NewVerifier(globexSecret)
	require.NoError(t, err)
	verifiers := map[string]*webhooks.Verifier{"acme": acme, "globex": globex}
	return func(_ context.Context, business string) (*webhooks.Verifier, error) {
		if business == "broken" {
			return nil, errors.New("the secrets store is down")
		}
		if v, ok := verifiers[business]; ok {
			return v, nil
		}
		return nil, fmt.Errorf("%w: %s", webhooks.ErrUnknownBusiness, business)
	}
}

// oneBusiness is the VerifierFunc of business alone, whose secret is
// webhooktest.Secret.
func oneBusiness(t *testing.T, business string) webhooks.VerifierFunc {
	v := webhooktest.NewVerifier(t)
	return func(_ context.Context, b string) (*webhooks.Verifier, error) {
		if b != business {
			return nil, webhooks.ErrUnknownBusiness
		}
		return v, nil
	}
}

// businessMux serves h on "POST /webhooks/{business}", and on "POST /flat",
// a pattern without the wildcard.
func businessMux(h http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", h)
	mux.Handle("POST /flat", h)
	return mux
}

// sendTo posts d, signed with secret, to path on h and returns the status.
func sendTo(h http.Handler, path, secret string, d webhooktest.Delivery) int {
	td := webhooks.TestDelivery{Secret: secret, Type: webhooks.EventContactCreated, DeliveryID: d.ID, Body: d.Body}
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(d.Body))
	r.Header = td.Header()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// businessesOf returns the businesses that have a row for delivery id, in
// order.
func businessesOf(t *testing.T, pool interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, id string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		`SELECT business FROM invoicing_webhook_inbox WHERE delivery_id = $1 ORDER BY business`, id)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

func TestBusinessHandlerVerifiesAndStoresEachBusinessApart(t *testing.T) {
	pool := newPool(t, newSchema(t), 2)
	m := pginbox.NewMetrics(pool)
	h := businessMux(pginbox.BusinessHandler(pool, twoBusinesses(t), pginbox.WithMetrics(m)))
	d := webhooktest.Deliveries(1)[0]

	assert.Equal(t, http.StatusOK, sendTo(h, "/webhooks/acme", acmeSecret, d))
	assert.Equal(t, http.StatusUnauthorized, sendTo(h, "/webhooks/globex", acmeSecret, d), "valid for acme, not for globex")
	assert.Equal(t, http.StatusUnauthorized, sendTo(h, "/webhooks/globex", acmeOldSecret, d), "nor acme's previous secret")
	assert.Equal(t, []string{"acme"}, businessesOf(t, pool, d.ID), "nothing stored for globex")

	assert.Equal(t, http.StatusOK, sendTo(h, "/webhooks/acme", acmeOldSecret, d), "mid-rotation, a copy")
	assert.Equal(t, http.StatusOK, sendTo(h, "/webhooks/globex", globexSecret, d), "the same id, for globex")
	assert.Equal(t, http.StatusOK, sendTo(h, "/webhooks/globex", globexSecret, d), "and its copy")
	store(t, pool, d) // and through the single-business Handler
	assert.Equal(t, []string{"", "acme", "globex"}, businessesOf(t, pool, d.ID), "one row per business, copies not stored")

	other := webhooktest.Deliveries(1)[0]
	assert.Equal(t, http.StatusNotFound, sendTo(h, "/webhooks/initech", acmeSecret, other), "a business the lookup does not know")
	assert.Equal(t, http.StatusNotFound, sendTo(h, "/flat", acmeSecret, other), "a URL without a business")
	assert.Equal(t, http.StatusInternalServerError, sendTo(h, "/webhooks/broken", acmeSecret, other), "a lookup that fails: the service retries")
	assert.Empty(t, businessesOf(t, pool, other.ID))

	assert.Equal(t, map[string]float64{"stored": 2, "duplicate": 2, "refused": 4, "store_failed": 1}, outcomes(t, m),
		"the metrics count BusinessHandler's answers too")
}

// The Workers process each business's delivery on its own: the callback
// gets its Business, and the outcome of one business's run is recorded on
// its row only, although the two share the delivery id.
func TestWorkerProcessesEachBusinessApart(t *testing.T) {
	pool := newPool(t, newSchema(t), 4)
	h := businessMux(pginbox.BusinessHandler(pool, twoBusinesses(t)))
	d := webhooktest.Deliveries(1)[0]
	require.Equal(t, http.StatusOK, sendTo(h, "/webhooks/acme", acmeSecret, d))
	require.Equal(t, http.StatusOK, sendTo(h, "/webhooks/globex", globexSecret, d))

	got := make(chan string, 10)
	start(t, &pginbox.Worker{Pool: pool, PollInterval: 10 * time.Millisecond, MaxAttempts: 1,
		ProcessTx: func(ctx context.Context, tx pgx.Tx, d *webhooks.Delivery) error {
			got <- d.Business
			if d.Business == "globex" {
				return errors.New("globex's callback fails")
			}
			_, err := tx.Exec(ctx, `CREATE TABLE acme_effect (id text)`) // once, or the second run fails
			return err
		}})
	waitFor(t, pool, pginbox.StatusProcessed, 1)
	waitFor(t, pool, pginbox.StatusFailed, 1)
	assert.ElementsMatch(t, []string{"acme", "globex"}, []string{<-got, <-got})

	status := map[string]string{}
	for _, r := range allRows(t, pool, `SELECT business, status, coalesce(last_error, '') FROM invoicing_webhook_inbox`) {
		status[r[0].(string)] = r[1].(string) + " " + r[2].(string)
	}
	assert.Equal(t, map[string]string{"acme": "processed ", "globex": "failed globex's callback fails"}, status)
}
