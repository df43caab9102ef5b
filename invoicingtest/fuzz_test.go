package invoicingtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
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
	serve := newDirectServer(f)
	paths := []string{"/invoices", "/quotes", "/items", "/bills", "/clients"}
	f.Fuzz(func(t *testing.T, body string) {
		for _, p := range paths {
			rec := serve(httptest.NewRequest(http.MethodPost, BasePath+p, strings.NewReader(body)))
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

// FuzzListQueries sends arbitrary query strings to the list endpoints: the
// fake must never panic, and must answer 200 with a page or 400 with
// {detail}.
func FuzzListQueries(f *testing.F) {
	for _, s := range []string{
		"", "page=2&page_size=1", "page=922337203685477581&page_size=100", "page=0", "page_size=101",
		"status=draft&client_id=" + SeedClientID, "from_date=2026-03-01&to_date=2026-02-01",
		"item_type=TEXT", "type=revenue", "region=au", "bank_account_id=" + SeedBankAccountID, "%zz",
	} {
		f.Add(s)
	}
	serve := newDirectServer(f)
	serve(httptest.NewRequest(http.MethodPost, BasePath+"/invoices", strings.NewReader(
		`{"client_id":"`+SeedClientID+`","default_account_id":"`+SeedRevenueAccountID+`","default_tax_code_id":"`+SeedGSTTaxCodeID+`","line_items":[{"unit_price":1}]}`)))
	paths := []string{"/invoices", "/quotes", "/items", "/bills", "/clients", "/accounts", "/tax-codes", "/bank-transactions"}
	f.Fuzz(func(t *testing.T, query string) {
		for _, p := range paths {
			req := httptest.NewRequest(http.MethodGet, BasePath+p, nil)
			req.URL.RawQuery = query
			rec := serve(req)
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
				t.Fatalf("GET %s?%s: body is not a JSON object: %s", p, query, rec.Body)
			}
			switch rec.Code {
			case http.StatusOK:
				if _, ok := m["has_more"].(bool); !ok {
					t.Fatalf("GET %s?%s: not a page: %s", p, query, rec.Body)
				}
			case http.StatusBadRequest:
				if _, ok := m["detail"].(string); !ok || len(m) != 1 {
					t.Fatalf("GET %s?%s: error body %s", p, query, rec.Body)
				}
			default:
				t.Fatalf("GET %s?%s: status %d", p, query, rec.Code)
			}
		}
	})
}
