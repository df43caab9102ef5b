package benchpair

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go"
)

// Invoice is the baseline's invoice: the SDK's fields and field types,
// without the record's own JSON methods, for encoding/json (v1).
type Invoice struct {
	ID            string                  `json:"id"`
	InvoiceNumber string                  `json:"invoice_number"`
	ClientID      string                  `json:"client_id"`
	ClientName    string                  `json:"client_name"`
	Status        invoicing.InvoiceStatus `json:"status"`
	IssueDate     invoicing.Date          `json:"issue_date"`
	DueDate       invoicing.Date          `json:"due_date"`
	Subtotal      decimal.Decimal         `json:"subtotal"`
	TaxTotal      decimal.Decimal         `json:"tax_total"`
	Total         decimal.Decimal         `json:"total"`
	AmountPaid    decimal.Decimal         `json:"amount_paid"`
	AmountDue     decimal.Decimal         `json:"amount_due"`
	Currency      string                  `json:"currency"`
	Notes         string                  `json:"notes"`
	Reference     string                  `json:"reference,omitempty"`
	LineItems     []struct {
		ID          string          `json:"id"`
		Description string          `json:"description"`
		Quantity    decimal.Decimal `json:"quantity"`
		UnitPrice   decimal.Decimal `json:"unit_price"`
		Amount      decimal.Decimal `json:"amount"`
		TaxAmount   decimal.Decimal `json:"tax_amount"`
		AccountID   *string         `json:"account_id"`
		TaxCodeID   *string         `json:"tax_code_id"`
	} `json:"line_items"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// InvoicePage is the baseline's page of GET /invoices.
type InvoicePage struct {
	Invoices []Invoice `json:"invoices"`
	Total    int       `json:"total"`
	Page     int       `json:"page"`
	PageSize int       `json:"page_size"`
	HasMore  bool      `json:"has_more"`
}

// Baseline is what a careful hand-written client does: one http.Client
// (over a clone of http.DefaultTransport), bearer header, status check,
// json.Decoder (v1) into plain structs, drain.
type Baseline struct {
	hc        *http.Client
	base, key string
}

// NewBaseline returns a Baseline for the API at base (with its path
// prefix) using key; its idle connections close with tb.
func NewBaseline(tb testing.TB, base, key string) *Baseline {
	bl := &Baseline{hc: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}, base: base, key: key}
	tb.Cleanup(bl.hc.CloseIdleConnections)
	return bl
}

// Get decodes the JSON answer to GET path (relative to the base) into out.
func (b *Baseline) Get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+b.key)
	req.Header.Set("Accept", "application/json")
	resp, err := b.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// Page fetches page n of the invoices, 100 a page.
func (b *Baseline) Page(ctx context.Context, n int) (*InvoicePage, error) {
	var p InvoicePage
	err := b.Get(ctx, "/invoices?page="+strconv.Itoa(n)+"&page_size=100", &p)
	return &p, err
}

// RangeAll ranges over every invoice: page 1, then (knowing the total) the
// other pages, one at a time when inFlight is 0, or with up to inFlight
// requests under way while the caller ranges, yielded in order.
func (b *Baseline) RangeAll(ctx context.Context, inFlight int) iter.Seq2[*Invoice, error] {
	type result struct {
		page *InvoicePage
		err  error
	}
	return func(yield func(*Invoice, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		first, err := b.Page(ctx, 1)
		if err != nil {
			yield(nil, err)
			return
		}
		last := (first.Total + 99) / 100
		results := make([]chan result, last+1)
		if inFlight > 0 {
			slots := make(chan struct{}, inFlight)
			for n := 2; n <= last; n++ {
				results[n] = make(chan result, 1)
			}
			go func() {
				for n := 2; n <= last; n++ {
					select {
					case slots <- struct{}{}:
					case <-ctx.Done():
						return
					}
					go func() {
						p, err := b.Page(ctx, n)
						results[n] <- result{p, err}
						<-slots
					}()
				}
			}()
		}
		for n := 1; n <= last; n++ {
			r := result{page: first}
			switch {
			case n == 1:
			case inFlight > 0:
				r = <-results[n]
			default:
				r.page, r.err = b.Page(ctx, n)
			}
			if r.err != nil {
				yield(nil, r.err)
				return
			}
			for i := range r.page.Invoices {
				if !yield(&r.page.Invoices[i], nil) {
					return
				}
			}
		}
	}
}
