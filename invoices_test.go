package invoicing_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
)

func TestInvoicesGet(t *testing.T) {
	body := fixture(t, "invoice.json")
	c, api := newMock(t, always(200, body))
	inv, err := c.Invoices.Get(context.Background(), idInvoice)
	require.NoError(t, err)

	r := api.last(t)
	svcAssertGET(t, r, "/invoices/"+idInvoice, "")
	assert.Regexp(t, `^invoicing-go/\d+\.\d+\.\d+ \(go`, r.Header.Get("User-Agent"))
	assert.Len(t, api.requests(), 1)

	assert.Equal(t, idInvoice, inv.ID)
	assert.Equal(t, "INV-0042", inv.InvoiceNumber)
	assert.Equal(t, "c0ffee00-1111-4222-8333-444455556666", inv.ClientID)
	assert.Equal(t, "Acme Pty Ltd", inv.ClientName)
	assert.Equal(t, invoicing.InvoiceStatusAwaitingPayment, inv.Status)
	assert.Equal(t, invoicing.NewDate(2026, time.November, 1), inv.IssueDate)
	assert.Equal(t, "2026-11-15", inv.DueDate.String())
	assert.Equal(t, "1234.5", inv.Subtotal.String())
	svcDecEqual(t, "123.45", inv.TaxTotal)
	svcDecEqual(t, "1357.95", inv.Total)
	assert.True(t, inv.AmountDue.Equal(inv.Subtotal.Add(inv.TaxTotal)), "exact decimal arithmetic")
	assert.True(t, inv.AmountPaid.IsZero())
	assert.Equal(t, "AUD", inv.Currency)
	assert.Equal(t, "Thank you for your business", inv.Notes)
	assert.Equal(t, "ERP-7781", inv.Reference)
	assert.Equal(t, time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC), inv.CreatedAt)
	assert.Nil(t, inv.UpdatedAt)
	require.Len(t, inv.LineItems, 2)
	l0, l1 := inv.LineItems[0], inv.LineItems[1]
	assert.Equal(t, "li_1", l0.ID)
	assert.Equal(t, "Consulting, November", l0.Description)
	assert.Equal(t, "10.5", l0.Quantity.String())
	svcDecEqual(t, "100", l0.UnitPrice)
	svcDecEqual(t, "1155", l0.Amount)
	svcDecEqual(t, "105", l0.TaxAmount)
	require.NotNil(t, l0.AccountID)
	assert.Equal(t, "4000", *l0.AccountID)
	require.NotNil(t, l0.TaxCodeID)
	assert.Equal(t, "GST", *l0.TaxCodeID)
	assert.Nil(t, l1.AccountID, "null in the response")
	assert.Nil(t, l1.TaxCodeID)
	assert.Equal(t, "202.95", l1.Amount.String())
	assert.Nil(t, inv.Extra)
	assert.JSONEq(t, body, string(rawJSON(t, inv)))
}

func TestInvoicesGetKeepsUnknownMembers(t *testing.T) {
	body := withUnknownMembers(t, fixture(t, "invoice.json"))
	c, _ := newMock(t, always(200, body))
	inv, err := c.Invoices.Get(context.Background(), idInvoice)
	require.NoError(t, err)
	assert.Equal(t, "PO-7781", extraValue[string](t, inv.Extra, "purchase_order"))
	var discount struct {
		Rate   string `json:"rate"`
		Reason string `json:"reason"`
	}
	require.Error(t, inv.Extra.Get("discount", &discount), "a number is not a string")
	var d struct {
		Reason string
	}
	require.NoError(t, inv.Extra.Get("discount", &d))
	assert.Equal(t, "loyalty", d.Reason)
	assert.Equal(t, []string{"discount", "purchase_order"}, inv.Extra.Names())
	assert.JSONEq(t, `["North", 7]`, string(inv.LineItems[0].Extra["tracking"]))
	assert.JSONEq(t, body, string(rawJSON(t, inv)))
}

func TestInvoicesListPage(t *testing.T) {
	page := `{"invoices": [` + fixture(t, "invoice.json") + `], "total": 51, "page": 2, "page_size": 50, "has_more": true}`
	c, api := newMock(t, always(200, page))
	p, err := c.Invoices.ListPage(context.Background(), &invoicing.InvoiceListParams{
		ListParams: invoicing.ListParams{Page: 2, PageSize: 50},
		Status:     invoicing.InvoiceStatusOverdue,
		ClientID:   "c0ffee00-1111-4222-8333-444455556666",
		FromDate:   invoicing.NewDate(2026, 1, 1),
		ToDate:     invoicing.NewDate(2026, 3, 31),
	})
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/invoices", "client_id=c0ffee00-1111-4222-8333-444455556666&from_date=2026-01-01&page=2&page_size=50&status=overdue&to_date=2026-03-31")
	require.Equal(t, []any{51, 2, 50, true, 1}, svcPaging(p), "total, page, page_size, has_more, records")
	assert.Equal(t, "INV-0042", p.Items[0].InvoiceNumber)
	require.Len(t, p.Items[0].LineItems, 2)
	assert.Equal(t, "4000", *p.Items[0].LineItems[0].AccountID)

	c, api = newMock(t, always(200, `{"invoices": [], "total": 0, "page": 1, "page_size": 50, "has_more": false}`))
	p, err = c.Invoices.ListPage(context.Background(), nil)
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/invoices", "")
	assert.Empty(t, p.Items)
}

func TestInvoicesList(t *testing.T) {
	c, api := newMock(t, always(200, `{"invoices": [`+fixture(t, "invoice.json")+`], "total": 1, "page": 1, "page_size": 100, "has_more": false}`))
	got := testkit.Collect(t, c.Invoices.List(context.Background(), &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusPaid}))
	require.Len(t, got, 1)
	assert.Equal(t, idInvoice, got[0].ID)
	svcAssertGET(t, api.last(t), "/invoices", "page=1&page_size=100&status=paid")
}

func TestInvoicesCreateSendsExactBody(t *testing.T) {
	c, api := newMock(t, always(201, fixture(t, "invoice.json")))
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
			{Description: "Consulting", Quantity: invoicing.Ptr(svcDec("10.50")), UnitPrice: svcDec("0.1"), AccountID: "4100", TaxCodeID: "FRE", ItemID: idItem},
			{UnitPrice: svcDec("0")},
			{Quantity: invoicing.Ptr(svcDec("3")), UnitPrice: svcDec("123456789012345678901234567890.123456789")},
		},
	})
	require.NoError(t, err)
	assert.True(t, res.Created)
	assert.Equal(t, "INV-0042", res.InvoiceNumber)
	assert.Equal(t, idInvoice, res.Invoice.ID)

	svcAssertPOST(t, api.last(t), "/invoices", `{"client_id":"c0ffee00-1111-4222-8333-444455556666",`+
		`"issue_date":"2026-11-01","due_date":"2026-11-15","payment_terms_days":14,"currency":"NZD","notes":"n","reference":"ERP-7781",`+
		`"invoice_number":"INV-0042","default_account_id":"4000","default_tax_code_id":"GST","status":"awaiting_payment",`+
		`"line_items":[{"description":"Consulting","quantity":10.50,"unit_price":0.1,"account_id":"4100","tax_code_id":"FRE","item_id":"`+idItem+`"},`+
		`{"unit_price":0},{"quantity":3,"unit_price":123456789012345678901234567890.123456789}]}`)
	assert.Equal(t, "application/json", api.last(t).Header.Get("Accept"))
}

func TestInvoicesCreateMinimalBodyOmitsUnset(t *testing.T) {
	c, api := newMock(t, always(201, fixture(t, "invoice.json")))
	_, err := c.Invoices.Create(context.Background(), svcValidInvoice())
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/invoices", `{"client_id":"c0ffee00-1111-4222-8333-444455556666","default_account_id":"4000",`+
		`"default_tax_code_id":"GST","line_items":[{"unit_price":100}]}`)
}

// 201 is a new invoice; 200 the existing one with the same Reference.
func TestInvoicesCreateCreatedOrExisting(t *testing.T) {
	for status, created := range map[int]bool{201: true, 200: false} {
		c, api := newMock(t, always(status, fixture(t, "invoice.json")))
		p := svcValidInvoice()
		p.Reference = "ERP-7781"
		res, err := c.Invoices.Create(context.Background(), p)
		require.NoError(t, err)
		assert.Equal(t, created, res.Created, "HTTP %d", status)
		assert.Equal(t, "ERP-7781", res.Reference)
		assert.Equal(t, "INV-0042", res.Invoice.InvoiceNumber)
		assert.Len(t, api.requests(), 1)
	}
}

// A create is repeated after a 5xx or a network error only when it carries
// its idempotency Reference; after a 429, always. A repeat sends the same
// body.
func TestInvoicesCreateRetriedOnlyWithReference(t *testing.T) {
	drop := func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) } // a transport error
	for _, tc := range []struct {
		name     string
		first    http.HandlerFunc
		ref      string
		requests int
	}{
		{"5xx with reference", always(502, `{"detail": "bad gateway"}`), "ERP-1", 2},
		{"5xx without reference", always(502, `{"detail": "bad gateway"}`), "", 1},
		{"network error with reference", drop, "ERP-1", 2},
		{"network error without reference", drop, "", 1},
		{"429 without reference", always(429, `{"detail": "slow down"}`), "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, api := newMock(t, sequence(tc.first, always(201, fixture(t, "invoice.json"))))
			p := svcValidInvoice()
			p.Reference = tc.ref
			res, err := c.Invoices.Create(context.Background(), p)
			reqs := api.requests()
			require.Len(t, reqs, tc.requests)
			if tc.requests == 1 {
				require.Error(t, err)
				assert.Nil(t, res)
				return
			}
			require.NoError(t, err)
			assert.True(t, res.Created)
			assert.Equal(t, string(reqs[0].Body), string(reqs[1].Body), "the same request again")
		})
	}
}

func TestInvoicesCreateDuplicateNumberIsConflict(t *testing.T) {
	c, api := newMock(t, always(409, `{"detail": "Invoice number already exists"}`))
	p := svcValidInvoice()
	p.InvoiceNumber = "INV-0042"
	p.Reference = "r-1"
	res, err := c.Invoices.Create(context.Background(), p)
	assert.Nil(t, res)
	require.ErrorIs(t, err, invoicing.ErrConflict)
	apiErr := apiError(t, err)
	assert.Equal(t, 409, apiErr.StatusCode)
	assert.Equal(t, "Invoice number already exists", apiErr.Detail)
	assert.Len(t, api.requests(), 1, "409 is never retried, even with a reference")
}

func TestInvoicesCreateValidatedBeforeSending(t *testing.T) {
	c, api := newMock(t, always(201, fixture(t, "invoice.json")))
	for _, tc := range []struct {
		field  string
		mutate func(p *invoicing.InvoiceCreateParams)
	}{
		{"client_id", func(p *invoicing.InvoiceCreateParams) { p.ClientID = "" }},
		{"line_items", func(p *invoicing.InvoiceCreateParams) { p.LineItems = nil }},
		{"line_items", func(p *invoicing.InvoiceCreateParams) { p.LineItems = []invoicing.LineItemParams{} }},
		{"line_items[1].account_id", func(p *invoicing.InvoiceCreateParams) {
			p.DefaultAccountID = ""
			p.LineItems = []invoicing.LineItemParams{{AccountID: "4000"}, {}}
		}},
		{"line_items[0].tax_code_id", func(p *invoicing.InvoiceCreateParams) { p.DefaultTaxCodeID = "" }},
		{"line_items[0].item_id", func(p *invoicing.InvoiceCreateParams) { p.LineItems[0].ItemID = "WIDGET-01" }},
		{"status", func(p *invoicing.InvoiceCreateParams) { p.Status = invoicing.InvoiceStatusPaid }},
		{"status", func(p *invoicing.InvoiceCreateParams) { p.Status = "sent" }},
		{"payment_terms_days", func(p *invoicing.InvoiceCreateParams) { p.PaymentTermsDays = invoicing.Ptr(-1) }},
		{"line_items[0].description", func(p *invoicing.InvoiceCreateParams) {
			p.LineItems[0].Description = "d"
			p.LineItems[0].Extra = map[string]any{"description": "e"}
		}},
	} {
		p := svcValidInvoice()
		tc.mutate(p)
		res, err := c.Invoices.Create(context.Background(), p)
		assert.Nil(t, res)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe, tc.field)
		assert.Equal(t, tc.field, pe.Field)
		assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
		assert.Contains(t, err.Error(), tc.field)
	}
	_, err := c.Invoices.Create(context.Background(), nil)
	assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
	assert.Empty(t, api.requests())

	// What the checks allow.
	for name, mutate := range map[string]func(p *invoicing.InvoiceCreateParams){
		"status draft":            func(p *invoicing.InvoiceCreateParams) { p.Status = invoicing.InvoiceStatusDraft },
		"status awaiting_payment": func(p *invoicing.InvoiceCreateParams) { p.Status = invoicing.InvoiceStatusAwaitingPayment },
		"zero payment terms":      func(p *invoicing.InvoiceCreateParams) { p.PaymentTermsDays = invoicing.Ptr(0) },
		"accounts on the lines": func(p *invoicing.InvoiceCreateParams) {
			*p = invoicing.InvoiceCreateParams{ClientID: "c", LineItems: []invoicing.LineItemParams{{AccountID: "a", TaxCodeID: "t"}}}
		},
		"a catalog item":             func(p *invoicing.InvoiceCreateParams) { p.LineItems[0].ItemID = idItem },
		"an item id in another form": func(p *invoicing.InvoiceCreateParams) { p.LineItems[0].ItemID = "{" + idItem + "}" },
	} {
		_, err := c.Invoices.Create(context.Background(), func() *invoicing.InvoiceCreateParams { p := svcValidInvoice(); mutate(p); return p }())
		assert.NoError(t, err, name)
	}
}

func TestInvoicesPDF(t *testing.T) {
	pdf := "%PDF-1.4\n" + string(make([]byte, 200_000)) + "\n%%EOF\n"
	c, api := newMock(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="Invoice-INV-0042.pdf"`)
		_, _ = io.WriteString(w, pdf)
	}, invoicing.WithMaxResponseBytes(1024)) // PDFs are streamed, not capped
	f, err := c.Invoices.PDF(context.Background(), idInvoice)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "Invoice-INV-0042.pdf", f.Filename)
	assert.Equal(t, "application/pdf", f.ContentType)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, pdf, string(b))
	r := api.last(t)
	assert.Equal(t, http.MethodGet, r.Method)
	assert.Equal(t, "/invoices/"+idInvoice+"/pdf", r.Path)
	assert.Equal(t, "application/pdf, application/json", r.Header.Get("Accept"), "error statuses come back as JSON details")

	c, _ = newMock(t, always(404, `{"detail": "Invoice not found"}`))
	_, err = c.Invoices.PDF(context.Background(), idInvoice)
	assert.ErrorIs(t, err, invoicing.ErrNotFound)
}

func ExampleInvoiceCreateResult_existing() {
	res := &invoicing.InvoiceCreateResult{Invoice: &invoicing.Invoice{InvoiceNumber: "INV-0042"}, Created: false}
	if !res.Created {
		fmt.Println(res.InvoiceNumber, "already existed")
	}
	// Output: INV-0042 already existed
}
