package invoicingtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzCreateBodies sends arbitrary bodies to the create endpoints: the fake
// must never panic, and must answer with a documented status and a JSON
// object ({detail} for errors).
func FuzzCreateBodies(f *testing.F) {
	seeds := []string{
		`{"client_id":"` + SeedClientID + `","default_account_id":"` + SeedRevenueAccountID + `","default_tax_code_id":"` + SeedGSTTaxCodeID + `","line_items":[{"unit_price":1.5,"quantity":2}]}`,
		`{"name":"x","item_type":"TEXT","account_id":"` + SeedRevenueAccountID + `","tax_code_id":"` + SeedGSTTaxCodeID + `"}`,
		`{"supplier_id":"` + SeedSupplierID + `","line_items":[{"Id":"` + SeedItemID + `","unit_price":1e3}]}`,
		`{"line_items":[{"unit_price":-0.0000001,"quantity":1e-7}]}`,
		`{"reference":"r","line_items":[null]}`,
		`[`, ``, `{"page_size": 1}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	srv := NewServer(WithClock(NewFakeClock(testStart)))
	f.Cleanup(srv.Close)
	h := srv.handler()
	paths := []string{"/invoices", "/quotes", "/items", "/bills", "/clients"}
	f.Fuzz(func(t *testing.T, body string) {
		for _, p := range paths {
			req := httptest.NewRequest(http.MethodPost, BasePath+p, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+srv.FullKey)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			switch rec.Code {
			case http.StatusOK, http.StatusCreated, http.StatusBadRequest, http.StatusConflict, http.StatusUnprocessableEntity:
			default:
				t.Fatalf("POST %s %q: status %d", p, body, rec.Code)
			}
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
				t.Fatalf("POST %s %q: body is not a JSON object: %s", p, body, rec.Body)
			}
			if rec.Code >= 400 {
				if _, ok := m["detail"].(string); !ok || len(m) != 1 {
					t.Fatalf("POST %s %q: error body %s", p, body, rec.Body)
				}
			}
		}
	})
}
