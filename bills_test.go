package invoicing_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
)

func TestBillsGet(t *testing.T) {
	b, body := getFixture(t, "bills_get.json", "/bills/"+idBill, "", func(c *invoicing.Client) (*invoicing.Bill, error) {
		return c.Bills.Get(context.Background(), idBill)
	})

	assert.Equal(t, idBill, b.ID)
	assert.Equal(t, "SUP-INV-7781", b.BillNumber)
	assert.Equal(t, idSupplier, b.SupplierID)
	assert.Equal(t, "Paper Supplies Co", b.SupplierName)
	assert.Equal(t, invoicing.BillStatusAwaitingApproval, b.Status)
	assert.True(t, b.Status.Known())
	assert.Equal(t, invoicing.NewDate(2026, time.November, 2), b.IssueDate)
	assert.Equal(t, "2026-12-02", b.DueDate.String())
	assert.Equal(t, "AUD", b.Currency)
	assert.Equal(t, "1000.1", b.Subtotal.String())
	assert.Equal(t, "100.01", b.TaxTotal.String())
	assert.Equal(t, "1100.11", b.Total.String())
	assert.True(t, b.Subtotal.Add(b.TaxTotal).Equal(b.Total), "exact decimal arithmetic")
	assert.Equal(t, time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC), b.CreatedAt)
	assert.Nil(t, b.UpdatedAt)
	assert.Nil(t, b.MismatchedFields())

	require.Len(t, b.LineItems, 2)
	l0, l1 := b.LineItems[0], b.LineItems[1]
	assert.Equal(t, "bl_1", l0.ID)
	assert.Equal(t, "A4 paper, 80 boxes", l0.Description)
	assert.Equal(t, "80", l0.Quantity.String())
	assert.Equal(t, "12.5", l0.UnitPrice.String())
	assert.Equal(t, "1100", l0.Amount.String())
	assert.Equal(t, "100", l0.TaxAmount.String())
	require.NotNil(t, l0.AccountID)
	assert.Equal(t, "6100", *l0.AccountID)
	require.NotNil(t, l0.TaxCodeID)
	assert.Equal(t, "GST", *l0.TaxCodeID)
	assert.Equal(t, "0.5", l1.Quantity.String())
	assert.Equal(t, "0.11", l1.Amount.String())
	assert.Nil(t, l1.AccountID)
	assert.Nil(t, l1.TaxCodeID)
	assert.True(t, l1.Has("account_id"), "null is present")

	assert.JSONEq(t, body, string(rawJSON(t, b)))
	assert.Equal(t, `{"id":"bl_2","description":"Rounding","quantity":0.5,"unit_price":0.20,"amount":0.11,"tax_amount":0.01,"account_id":null,"tax_code_id":null}`,
		string(rawJSON(t, l1)), "each line keeps its own object, amounts as sent")
	assert.False(t, b.Has("reference"))
}

func TestBillsGetKeepsUnknownFields(t *testing.T) {
	body := fixture(t, "bills_get_unknown.json")
	b := answered(t, body, func(c *invoicing.Client) (*invoicing.Bill, error) { return c.Bills.Get(context.Background(), idBill) })

	assert.Equal(t, invoicing.BillStatus("partially_paid"), b.Status, "unknown status kept")
	assert.False(t, b.Status.Known())
	assert.Equal(t, "1100.11", b.Total.String())
	require.NotNil(t, b.UpdatedAt)

	var paid, due decimal.Decimal
	require.NoError(t, b.Extra.Get("amount_paid", &paid))
	require.NoError(t, b.Extra.Get("amount_due", &due))
	assert.True(t, paid.Add(due).Equal(b.Total))
	assert.Equal(t, "PO-2026-118", extraValue[string](t, b.Extra, "reference"))
	assert.True(t, b.Has("reference"))
	var atts []struct {
		Filename string `json:"filename"`
		Size     int    `json:"size"`
	}
	require.NoError(t, b.Extra.Get("attachments", &atts))
	require.Len(t, atts, 1)
	assert.Equal(t, 48213, atts[0].Size)

	require.Len(t, b.LineItems, 1)
	l := b.LineItems[0]
	assert.Equal(t, "12.5", l.UnitPrice.String())
	var tracking map[string]string
	require.NoError(t, l.Extra.Get("tracking", &tracking))
	assert.Equal(t, map[string]string{"category": "Region", "option": "North"}, tracking)
	assert.Equal(t, "2.5", extraValue[decimal.Decimal](t, l.Extra, "discount_rate").String())

	out, err := json.Marshal(b)
	require.NoError(t, err)
	assert.JSONEq(t, body, string(out))
}

func TestBillsListPageFiltersAndKeys(t *testing.T) {
	c, api := newMock(t, sequence(always(200, fixture(t, "bills_list.json")), always(200, fixture(t, "bills_list_items.json"))))
	ctx := context.Background()
	pg, err := c.Bills.ListPage(ctx, &invoicing.BillListParams{
		ListParams: invoicing.ListParams{PageSize: 25},
		Status:     invoicing.BillStatusApproved,
		SupplierID: idSupplier,
		Extra:      url.Values{"from_date": {"2026-11-01"}},
	})
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/bills", "from_date=2026-11-01&page_size=25&status=approved&supplier_id="+idSupplier)
	require.Len(t, pg.Items, 1)
	assert.Equal(t, invoicing.BillStatusApproved, pg.Items[0].Status)
	assert.Empty(t, pg.Items[0].LineItems)
	assert.NotNil(t, pg.Items[0].LineItems, "[] is an empty list")
	assert.Equal(t, 25, pg.PageSize)

	pg, err = c.Bills.ListPage(ctx, nil)
	require.NoError(t, err)
	svcAssertGET(t, api.last(t), "/bills", "")
	require.Len(t, pg.Items, 1)
	assert.Equal(t, "B-2", pg.Items[0].BillNumber)
	assert.Equal(t, "0.3", pg.Items[0].Total.String())
	assert.False(t, pg.Items[0].Has("supplier_name"))
	assert.False(t, pg.Items[0].Has("line_items"))
	assert.Nil(t, pg.Items[0].LineItems)
}

func TestBillsListIterates(t *testing.T) {
	c, api := newMock(t, always(200, fixture(t, "bills_list.json")))
	got := testkit.Collect(t, c.Bills.List(context.Background(), &invoicing.BillListParams{Status: invoicing.BillStatusApproved}))
	require.Len(t, got, 1)
	assert.Equal(t, "SUP-INV-7781", got[0].BillNumber)
	svcAssertGET(t, api.last(t), "/bills", "page=1&page_size=100&status=approved")
}

func TestBillsCreateSendsExactBody(t *testing.T) {
	c, api := newMock(t, always(201, fixture(t, "bills_get.json")))
	b, err := c.Bills.Create(context.Background(), &invoicing.BillCreateParams{
		SupplierID:       idSupplier,
		BillNumber:       "SUP-INV-7781",
		IssueDate:        invoicing.NewDate(2026, time.November, 2),
		DueDate:          invoicing.NewDate(2026, time.December, 2),
		Currency:         "AUD",
		Status:           invoicing.BillStatusDraft,
		DefaultAccountID: "6100",
		DefaultTaxCodeID: "GST",
		LineItems: []invoicing.LineItemParams{
			{Description: "A4 paper, 80 boxes", Quantity: invoicing.Ptr(svcDec("80")), UnitPrice: svcDec("12.50")},
			{Description: "Free sample", UnitPrice: decimal.Zero, AccountID: "6200", TaxCodeID: "FRE"},
			{UnitPrice: svcDec("0.1000000000000000000001")},
		},
		Extra: map[string]any{"reference": "PO-2026-118", "freight": svcDec("15.00")},
	})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/bills",
		`{"supplier_id":"`+idSupplier+`","bill_number":"SUP-INV-7781","issue_date":"2026-11-02","due_date":"2026-12-02",`+
			`"currency":"AUD","default_account_id":"6100","default_tax_code_id":"GST","status":"draft","line_items":[`+
			`{"description":"A4 paper, 80 boxes","quantity":80,"unit_price":12.50},`+
			`{"description":"Free sample","unit_price":0,"account_id":"6200","tax_code_id":"FRE"},`+
			`{"unit_price":0.1000000000000000000001}],`+
			`"freight":15.00,"reference":"PO-2026-118"}`)
	assert.Equal(t, idBill, b.ID)
	assert.Len(t, b.LineItems, 2)
	assert.Len(t, api.requests(), 1)
}

func TestBillsCreateLeavesGuessedRulesToTheService(t *testing.T) {
	c, api := newMock(t, always(201, fixture(t, "bills_get.json")))
	ctx := context.Background()

	// No lines and no accounts: the SDK does not know the service's rules
	// for bills, so it sends the request as given.
	_, err := c.Bills.Create(ctx, &invoicing.BillCreateParams{SupplierID: idSupplier})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/bills", `{"supplier_id":"`+idSupplier+`"}`)
	_, err = c.Bills.Create(ctx, &invoicing.BillCreateParams{LineItems: []invoicing.LineItemParams{{ItemID: "not-a-uuid", UnitPrice: svcDec("1")}}})
	require.NoError(t, err, "an item id is not checked on bills")
	svcAssertPOST(t, api.last(t), "/bills", `{"line_items":[{"unit_price":1,"item_id":"not-a-uuid"}]}`)

	// Lines in a shape LineItemParams cannot express go through Extra.
	_, err = c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: idSupplier,
		Extra:      map[string]any{"line_items": []map[string]any{{"unit_price": svcDec("9.99"), "tracking": "North"}}},
	})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/bills", `{"supplier_id":"`+idSupplier+`","line_items":[{"tracking":"North","unit_price":9.99}]}`)

	// ... but not both ways at once.
	_, err = c.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID: idSupplier,
		LineItems:  []invoicing.LineItemParams{{UnitPrice: svcDec("1")}},
		Extra:      map[string]any{"line_items": []any{}},
	})
	var pe *invoicing.ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "line_items", pe.Field)

	_, err = c.Bills.Create(ctx, nil)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "params", pe.Field)
	assert.Len(t, api.requests(), 3)
}

func TestBillsCreateServerErrorNotRepeated(t *testing.T) {
	c, api := newMock(t, always(500, fixture(t, "resources_error_500.html"), "Content-Type", "text/html"))
	_, err := c.Bills.Create(context.Background(), &invoicing.BillCreateParams{SupplierID: idSupplier})
	apiErr := apiError(t, err)
	assert.ErrorIs(t, err, invoicing.ErrServer)
	assert.Equal(t, 500, apiErr.StatusCode)
	assert.Equal(t, "Internal Server Error", apiErr.Detail)
	assert.Len(t, api.requests(), 1, "a create is never repeated after a 5xx")
}

// A bill's odd line does not fail the bill; line items that are not an
// array of objects are a mismatch of the bill's field.
func TestBillsLenientLines(t *testing.T) {
	bills := svcLenientRecords(t, "lenient_bills.json")
	ctx := context.Background()

	b := answered(t, string(bills[5]), func(c *invoicing.Client) (*invoicing.Bill, error) { return c.Bills.Get(ctx, idBill) })
	assert.Nil(t, b.MismatchedFields())
	require.Len(t, b.LineItems, 2)
	assert.Nil(t, b.LineItems[0].MismatchedFields())
	assert.True(t, b.LineItems[0].Quantity.Equal(decimal.NewFromInt(10)))
	l := b.LineItems[1]
	assert.Equal(t, []string{"quantity", "account_id"}, l.MismatchedFields())
	assert.True(t, l.Quantity.IsZero())
	assert.Nil(t, l.AccountID)
	assert.Nil(t, l.TaxCodeID, "null is not a mismatch")
	assert.Equal(t, "Folders", l.Description)
	assert.True(t, l.UnitPrice.Equal(decimal.NewFromInt(10)))
	assert.Equal(t, "two", extraValue[string](t, l.Extra, "quantity"))
	var sent struct {
		Lines []json.RawMessage `json:"line_items"`
	}
	require.NoError(t, json.Unmarshal(bills[5], &sent))
	assert.JSONEq(t, string(sent.Lines[1]), string(rawJSON(t, l)), "the line encodes back to its own JSON")
	assert.True(t, b.Total.Equal(svcDec("47.5")))

	for i, what := range map[int]string{3: "line items as an object", 4: "a line that is not an object"} {
		t.Run(what, func(t *testing.T) {
			b := answered(t, string(bills[i]), func(c *invoicing.Client) (*invoicing.Bill, error) { return c.Bills.Get(ctx, idBill) })
			assert.Equal(t, []string{"line_items"}, b.MismatchedFields())
			assert.Nil(t, b.LineItems)
			assert.NotEmpty(t, b.BillNumber)
			var lines json.RawMessage
			require.NoError(t, b.Extra.Get("line_items", &lines))
			assert.NotEmpty(t, lines)
			assert.JSONEq(t, string(bills[i]), string(rawJSON(t, b)))
		})
	}
}
