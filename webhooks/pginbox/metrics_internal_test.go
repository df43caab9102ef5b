package pginbox

import (
	"net/http"
	"testing"

	"github.com/invoicing-api/invoicing-go/internal/benchpair"
)

// BenchmarkCount measures what WithMetrics adds to each request, without
// the database and the network that BenchmarkAcknowledgeMetrics includes
// (and whose noise hides it): one call of a Handler that answers 200, bare
// and wrapped by the Metrics' counting. Each operation is 1,000 requests.
func BenchmarkCount(b *testing.B) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	counted := handlerConfig{metrics: &Metrics{}}.count(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	r, err := http.NewRequest(http.MethodPost, "/webhooks", nil)
	if err != nil {
		b.Fatal(err)
	}
	w := discard{}
	serve := func(h http.Handler) func() error {
		return func() error {
			for range 1000 {
				h.ServeHTTP(w, r)
			}
			return nil
		}
	}
	benchpair.Run(b, 4, benchpair.Variant{Name: "bare", Run: serve(ok)}, benchpair.Variant{Name: "counted", Run: serve(counted)})
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}
