package invoicing_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

const invoiceID = "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f"

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestInvoicesGetSendsRequestAndDecodes(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "invoice.json")))
	inv, err := c.Invoices.Get(context.Background(), invoiceID)
	require.NoError(t, err)

	r := api.last(t)
	assert.Equal(t, "GET", r.Method)
	assert.Equal(t, "/invoices/"+invoiceID, r.Path)
	assert.Empty(t, r.Query)
	assert.Equal(t, "Bearer "+testKey, r.Header.Get("Authorization"))
	assert.Equal(t, "application/json", r.Header.Get("Accept"))
	assert.Regexp(t, `^invoicing-go/\d+\.\d+\.\d+ \(go`, r.Header.Get("User-Agent"))
	assert.Empty(t, r.Body)

	assert.Equal(t, invoiceID, inv.ID)
	assert.Equal(t, "INV-0042", inv.InvoiceNumber)
	assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, inv.Status)
	assert.Equal(t, invoicing.NewDate(2026, time.November, 1), inv.IssueDate)
	assert.Equal(t, "2026-11-15", inv.DueDate.String())
	assert.Equal(t, "1234.5", inv.Subtotal.String())
	assert.True(t, inv.Total.Equal(dec("1357.95")))
	assert.True(t, inv.AmountDue.Equal(inv.Subtotal.Add(inv.TaxTotal)), "exact decimal arithmetic")
	assert.True(t, inv.AmountPaid.IsZero())
	assert.Equal(t, "ERP-7781", inv.Reference)
	assert.Equal(t, time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC), inv.CreatedAt)
	assert.Nil(t, inv.UpdatedAt)
	require.Len(t, inv.LineItems, 2)
	l0, l1 := inv.LineItems[0], inv.LineItems[1]
	assert.Equal(t, "li_1", l0.ID)
	assert.Equal(t, "10.5", l0.Quantity.String())
	assert.Equal(t, "4000", *l0.AccountID)
	assert.Equal(t, "GST", *l0.TaxCodeID)
	assert.Nil(t, l1.AccountID)
	assert.Nil(t, l1.TaxCodeID)
	assert.Equal(t, "202.95", l1.Amount.String())
}

func TestGetCanonicalisesOtherUUIDForms(t *testing.T) {
	c, api := newTestAPI(t, always(200, fixture(t, "invoice.json")))
	_, err := c.Invoices.Get(context.Background(), "{3F2C9A4E-8B1D-4C7A-9E55-0A1B2C3D4E5F}")
	require.NoError(t, err)
	assert.Equal(t, "/invoices/"+invoiceID, api.last(t).Path)
}

func TestPathIDsMustBeUUIDs(t *testing.T) {
	c, api := newTestAPI(t, always(200, "{}"))
	ctx := context.Background()
	for _, id := range []string{"", "123", "../items", invoiceID + "/pdf", "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f?x=1", "3f2c9a4e%2F8b1d"} {
		_, err := c.Invoices.Get(ctx, id)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe, "id %q", id)
		assert.Equal(t, "id", pe.Field)
		assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
		_, err = c.Invoices.PDF(ctx, id)
		assert.ErrorAs(t, err, &pe)
		_, err = c.Quotes.Get(ctx, id)
		assert.ErrorAs(t, err, &pe)
		_, err = c.Items.Get(ctx, id)
		assert.ErrorAs(t, err, &pe)
	}
	assert.Empty(t, api.requests(), "nothing may be sent for an invalid id")
}

func TestInvoicesListPageQuery(t *testing.T) {
	page := `{"invoices": [` + fixture(t, "invoice.json") + `], "total": 51, "page": 2, "page_size": 50, "has_more": true}`
	c, api := newTestAPI(t, always(200, page))
	p, err := c.Invoices.ListPage(context.Background(), &invoicing.InvoiceListParams{
		ListParams: invoicing.ListParams{Page: 2, PageSize: 50},
		Status:     invoicing.InvoiceStatusOverdue,
		ClientID:   "c0ffee00-1111-4222-8333-444455556666",
		FromDate:   invoicing.NewDate(2026, 1, 1),
		ToDate:     invoicing.NewDate(2026, 3, 31),
	})
	require.NoError(t, err)
	r := api.last(t)
	assert.Equal(t, "/invoices", r.Path)
	assert.Equal(t, "client_id=c0ffee00-1111-4222-8333-444455556666&from_date=2026-01-01&page=2&page_size=50&status=overdue&to_date=2026-03-31", r.Query)
	assert.Equal(t, 51, p.Total)
	assert.Equal(t, 2, p.Page)
	assert.Equal(t, 50, p.PageSize)
	assert.True(t, p.HasMore)
	require.Len(t, p.Items, 1)
	assert.Equal(t, "INV-0042", p.Items[0].InvoiceNumber)
}

func TestInvoicesListPageDefaultsSendNothing(t *testing.T) {
	c, api := newTestAPI(t, always(200, `{"invoices": [], "total": 0, "page": 1, "page_size": 50, "has_more": false}`))
	p, err := c.Invoices.ListPage(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, api.last(t).Query)
	assert.Empty(t, p.Items)
}

func TestListParamsValidatedBeforeSending(t *testing.T) {
	c, api := newTestAPI(t, always(200, `{}`))
	ctx := context.Background()
	cases := map[string]*invoicing.InvoiceListParams{
		"page_size": {ListParams: invoicing.ListParams{PageSize: 101}},
		"page":      {ListParams: invoicing.ListParams{Page: -1}},
		"from_date": {FromDate: invoicing.NewDate(2026, 5, 2), ToDate: invoicing.NewDate(2026, 5, 1)},
	}
	for field, p := range cases {
		_, err := c.Invoices.ListPage(ctx, p)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe, field)
		assert.Equal(t, field, pe.Field)
		n := 0
		for _, err := range c.Invoices.List(ctx, p) {
			require.ErrorAs(t, err, &pe)
			n++
		}
		assert.Equal(t, 1, n, "the iterator yields the error once")
	}
	_, err := c.Items.ListPage(ctx, &invoicing.ItemListParams{ListParams: invoicing.ListParams{PageSize: 1000}})
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
	assert.Empty(t, api.requests())
}

func validInvoice() *invoicing.InvoiceCreateParams {
	return &invoicing.InvoiceCreateParams{
		ClientID:         "c0ffee00-1111-4222-8333-444455556666",
		DefaultAccountID: "4000",
		DefaultTaxCodeID: "GST",
		LineItems:        []invoicing.LineItemParams{{UnitPrice: dec("100")}},
	}
}

func TestInvoicesCreateSendsExactBody(t *testing.T) {
	c, api := newTestAPI(t, always(201, fixture(t, "invoice.json")))
	terms := 14
	res, err := c.Invoices.Create(context.Background(), &invoicing.InvoiceCreateParams{
		ClientID:         "c0ffee00-1111-4222-8333-444455556666",
		IssueDate:        invoicing.NewDate(2026, 11, 1),
		DueDate:          invoicing.NewDate(2026, 11, 15),
		PaymentTermsDays: &terms,
		Currency:         "NZD",
		Notes:            "n",
		Reference:        "ERP-7781",
		InvoiceNumber:    "INV-0042",
		DefaultAccountID: "4000",
		DefaultTaxCodeID: "GST",
		Status:           invoicing.InvoiceStatusAwaitingPayment,
		LineItems: []invoicing.LineItemParams{
			{Description: "Consulting", Quantity: invoicing.Ptr(dec("10.50")), UnitPrice: dec("0.1"), AccountID: "4100", TaxCodeID: "FRE",
				ItemID: "9d7e6f5a-4b3c-4d2e-8f10-112233445566"},
			{UnitPrice: dec("0")},
			{Quantity: invoicing.Ptr(dec("3")), UnitPrice: dec("123456789012345678901234567890.123456789")},
		},
	})
	require.NoError(t, err)
	assert.True(t, res.Created)
	assert.Equal(t, "INV-0042", res.InvoiceNumber)

	r := api.last(t)
	assert.Equal(t, "POST", r.Method)
	assert.Equal(t, "/invoices", r.Path)
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.JSONEq(t, `{
		"client_id": "c0ffee00-1111-4222-8333-444455556666",
		"issue_date": "2026-11-01", "due_date": "2026-11-15", "payment_terms_days": 14,
		"currency": "NZD", "notes": "n", "reference": "ERP-7781", "invoice_number": "INV-0042",
		"default_account_id": "4000", "default_tax_code_id": "GST", "status": "awaiting_payment",
		"line_items": [
			{"description": "Consulting", "quantity": 10.5, "unit_price": 0.1, "account_id": "4100", "tax_code_id": "FRE",
			 "item_id": "9d7e6f5a-4b3c-4d2e-8f10-112233445566"},
			{"unit_price": 0},
			{"quantity": 3, "unit_price": 123456789012345678901234567890.123456789}
		]}`, string(r.Body))
	// Decimals travel as exact JSON numbers, never through float64 or strings.
	assert.Contains(t, string(r.Body), `"unit_price":123456789012345678901234567890.123456789`)
	assert.Contains(t, string(r.Body), `"unit_price":0.1`)
}

func TestInvoicesCreateMinimalBodyOmitsUnset(t *testing.T) {
	c, api := newTestAPI(t, always(201, fixture(t, "invoice.json")))
	_, err := c.Invoices.Create(context.Background(), validInvoice())
	require.NoError(t, err)
	assert.JSONEq(t, `{"client_id": "c0ffee00-1111-4222-8333-444455556666", "default_account_id": "4000",
		"default_tax_code_id": "GST", "line_items": [{"unit_price": 100}]}`,
		string(api.last(t).Body))
}

func TestInvoicesCreateExistingReferenceIsNotCreated(t *testing.T) {
	c, _ := newTestAPI(t, always(200, fixture(t, "invoice.json")))
	p := validInvoice()
	p.Reference = "ERP-7781"
	res, err := c.Invoices.Create(context.Background(), p)
	require.NoError(t, err)
	assert.False(t, res.Created, "HTTP 200 means the invoice already existed")
	assert.Equal(t, "ERP-7781", res.Reference)
}

func TestInvoicesCreateDuplicateNumberIsConflict(t *testing.T) {
	c, api := newTestAPI(t, always(409, `{"detail": "Invoice number already exists"}`))
	p := validInvoice()
	p.InvoiceNumber = "INV-0042"
	p.Reference = "r-1"
	_, err := c.Invoices.Create(context.Background(), p)
	require.ErrorIs(t, err, invoicing.ErrConflict)
	var apiErr *invoicing.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 409, apiErr.StatusCode)
	assert.Equal(t, "Invoice number already exists", apiErr.Detail)
	assert.Len(t, api.requests(), 1, "409 is never retried")
}

func TestInvoicesCreateValidation(t *testing.T) {
	c, api := newTestAPI(t, always(201, fixture(t, "invoice.json")))
	cases := []struct {
		field  string
		mutate func(p *invoicing.InvoiceCreateParams)
	}{
		{"client_id", func(p *invoicing.InvoiceCreateParams) { p.ClientID = "" }},
		{"line_items", func(p *invoicing.InvoiceCreateParams) { p.LineItems = nil }},
		{"line_items[1].account_id", func(p *invoicing.InvoiceCreateParams) {
			p.DefaultAccountID = ""
			p.LineItems = []invoicing.LineItemParams{{AccountID: "4000"}, {}}
		}},
		{"line_items[0].tax_code_id", func(p *invoicing.InvoiceCreateParams) { p.DefaultTaxCodeID = "" }},
		{"status", func(p *invoicing.InvoiceCreateParams) { p.Status = invoicing.InvoiceStatusPaid }},
		{"payment_terms_days", func(p *invoicing.InvoiceCreateParams) { p.PaymentTermsDays = invoicing.Ptr(-1) }},
	}
	for _, tc := range cases {
		p := validInvoice()
		tc.mutate(p)
		_, err := c.Invoices.Create(context.Background(), p)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe, tc.field)
		assert.Equal(t, tc.field, pe.Field)
		assert.Contains(t, err.Error(), tc.field)
	}
	_, err := c.Invoices.Create(context.Background(), nil)
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
	assert.Empty(t, api.requests())
}

func TestInvoicesPDFStreamsWithFilename(t *testing.T) {
	pdf := "%PDF-1.4\n" + string(make([]byte, 200_000)) + "\n%%EOF\n"
	c, api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="Invoice-INV-0042.pdf"`)
		_, _ = io.WriteString(w, pdf)
	}, invoicing.WithMaxResponseBytes(1024)) // PDFs are streamed, not capped
	f, err := c.Invoices.PDF(context.Background(), invoiceID)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "Invoice-INV-0042.pdf", f.Filename)
	assert.Equal(t, "application/pdf", f.ContentType)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, pdf, string(b))
	r := api.last(t)
	assert.Equal(t, "/invoices/"+invoiceID+"/pdf", r.Path)
	assert.Equal(t, "application/pdf, application/json", r.Header.Get("Accept"), "error statuses come back as JSON details")
}

func TestPDFRejectsNonPDFAndErrors(t *testing.T) {
	c, _ := newTestAPI(t, always(200, "<html>login</html>", "Content-Type", "text/html"))
	_, err := c.Quotes.PDF(context.Background(), invoiceID)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unexpected content type "text/html"`)

	c, _ = newTestAPI(t, always(404, `{"detail": "Invoice not found"}`))
	_, err = c.Invoices.PDF(context.Background(), invoiceID)
	assert.ErrorIs(t, err, invoicing.ErrNotFound)
}

func ExampleInvoiceCreateResult() {
	res := &invoicing.InvoiceCreateResult{Invoice: &invoicing.Invoice{InvoiceNumber: "INV-0042"}, Created: false}
	if !res.Created {
		fmt.Println(res.InvoiceNumber, "already existed")
	}
	// Output: INV-0042 already existed
}

var _ = errors.Is
