package pginbox_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/internal/webhooktest"
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
		ts := r.Header.Get(webhooks.HeaderTimestamp)
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
			return
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		signedAt := time.Unix(sec, 0)
		if !hmac.Equal([]byte(want), []byte(r.Header.Get(webhooks.HeaderSignature))) ||
			time.Since(signedAt).Abs() > webhooks.DefaultTolerance {
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
ON CONFLICT (delivery_id) DO NOTHING`, id, event, signedAt, body); err != nil {
			http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}
