package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// readyTimeout bounds /readyz's look at the database.
const readyTimeout = 2 * time.Second

// routes serves the webhook endpoint at path, and the health checks:
// GET /healthz answers 200 while the process runs (whatever the database
// does: restarting the process would not mend it), GET /readyz 200 once the
// backfill of every resource of every business is complete, 503 before;
// GET /readyz?business=NAME 200 once that business's first complete copy is
// done, 503 before, 404 for a business the mirror does not know.
//
// Without v (the mirror serves the businesses of INVOICING_MIRROR_KEYS),
// the webhook endpoint is path/{business}, one URL per business.
func routes(m *pgmirror.Mirror, v *webhooks.Verifier, path string) http.Handler {
	mux := http.NewServeMux()
	if v == nil {
		mux.Handle("POST "+strings.TrimSuffix(path, "/")+"/{business}", m.BusinessHandler())
	} else {
		mux.Handle(path, m.Handler(v))
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /readyz", &readiness{m: m})
	return mux
}

// readiness is /readyz: it asks the database whether the backfill is
// complete until it is, and then remembers (a complete backfill stays
// complete).
type readiness struct {
	m     *pgmirror.Mirror
	ready atomic.Bool
}

func (h *readiness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if business := r.URL.Query().Get("business"); business != "" {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		ready, err := h.m.Ready(ctx, business)
		switch {
		case errors.Is(err, pgmirror.ErrNoSuchBusiness):
			http.Error(w, "no such business", http.StatusNotFound)
		case err != nil:
			http.Error(w, "not ready: the database does not answer, or the schema is not migrated yet", http.StatusServiceUnavailable)
		case !ready:
			http.Error(w, "not ready: the business's first complete copy is not done", http.StatusServiceUnavailable)
		default:
			fmt.Fprintln(w, "ready")
		}
		return
	}
	if !h.ready.Load() {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		done, err := h.m.BackfillDone(ctx)
		switch {
		case err != nil:
			http.Error(w, "not ready: the database does not answer, or the schema is not migrated yet", http.StatusServiceUnavailable)
			return
		case !done:
			http.Error(w, "not ready: the backfill is not complete", http.StatusServiceUnavailable)
			return
		}
		h.ready.Store(true)
	}
	fmt.Fprintln(w, "ready")
}
