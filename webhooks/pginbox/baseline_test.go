package pginbox_test

import (
	"io"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/internal/benchpair"
	"github.com/invoicing-api/invoicing-go/internal/testservers/webhooktest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// baselineHandler is the receiver a careful user could write by hand, that
// BenchmarkAcknowledge measures pginbox's Handler against: it checks the
// HMAC signature and the timestamp as the API document describes, then
// stores the delivery with the same INSERT … ON CONFLICT DO NOTHING, and
// answers 200 or an error status. It does not parse the body.
func baselineHandler(pool *pgxpool.Pool) http.Handler {
	key := []byte(webhooktest.Secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, webhooks.DefaultMaxBodyBytes+1))
		if err != nil || len(body) > webhooks.DefaultMaxBodyBytes {
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
			return
		}
		signedAt, err := benchpair.BaselineVerify(key, r.Header, body, time.Now())
		if err != nil {
			http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
			return
		}
		id, event := r.Header.Get(webhooks.HeaderDelivery), r.Header.Get(webhooks.HeaderEvent)
		if id == "" || event == "" {
			http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
			return
		}
		if _, err := pool.Exec(r.Context(), `INSERT INTO invoicing_webhook_inbox (delivery_id, event_type, signed_at, body)
VALUES ($1, $2, $3, $4)
ON CONFLICT (business, delivery_id) DO NOTHING`, id, event, signedAt, body); err != nil {
			http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}
