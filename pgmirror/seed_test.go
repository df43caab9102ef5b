package pgmirror_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// sizes is how many records seed adds to the fake's seed data.
type sizes struct {
	invoices, quotes, bills, clients, suppliers, items, bankTransactions int
}

// seed loads a business of the given sizes into srv at once, through
// SaveState and LoadState (creating thousands of records through the API
// would take most of a test's time): invoices with 1 to 4 lines in draft,
// awaiting payment (some part paid) and overdue; quotes draft or sent, some
// lines linked to catalog items; bills draft, awaiting approval or
// approved; clients, suppliers, items and bank transactions. It returns the
// ids it added, by resource.
func seed(t testing.TB, srv *invoicingtest.Server, n sizes, rng *rand.Rand) map[string][]string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, srv.SaveState(&buf))
	var st map[string]any
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	require.NoError(t, dec.Decode(&st))

	ids := map[string][]string{}
	add := func(key string, rec map[string]any) {
		st[key] = append(st[key].([]any), rec)
		ids[key] = append(ids[key], rec["id"].(string))
	}
	at := func(i int) string { // creation times before t0, in creation order
		return t0.Add(-time.Duration(n.invoices+n.quotes-i) * time.Minute).Format(time.RFC3339)
	}
	day := func(d int) string { return t0.AddDate(0, 0, d).Format(time.DateOnly) }

	clients := []string{invoicingtest.SeedClientID, invoicingtest.SeedOtherClientID}
	for i := range n.clients {
		id := uuid.NewString()
		add("clients", map[string]any{"id": id, "name": fmt.Sprintf("Client %d", i), "email": fmt.Sprintf("c%d@example.com", i),
			"phone": "+61 2 0000 0000", "city": "Sydney", "country": "AU", "created_at": at(i)})
		clients = append(clients, id)
	}
	suppliers := []string{invoicingtest.SeedSupplierID, invoicingtest.SeedOtherSupplierID}
	for i := range n.suppliers {
		id := uuid.NewString()
		add("suppliers", map[string]any{"id": id, "name": fmt.Sprintf("Supplier %d", i), "email": fmt.Sprintf("s%d@example.com", i),
			"created_at": at(i)})
		suppliers = append(suppliers, id)
	}
	type catalogItem struct{ id, code, name string }
	items := []catalogItem{{invoicingtest.SeedItemID, "CONSULT", "Consulting hour"}}
	for i := range n.items {
		it := catalogItem{uuid.NewString(), fmt.Sprintf("ITEM-%04d", i), fmt.Sprintf("Item %d", i)}
		add("items", map[string]any{"id": it.id, "item_code": it.code, "name": it.name, "description": "A catalog item",
			"item_type": "SALES", "unit_price": fmt.Sprintf("%d.50", 10+rng.IntN(90)), "is_taxable": true, "is_active": rng.IntN(10) > 0,
			"account_id": invoicingtest.SeedRevenueAccountID, "tax_code_id": invoicingtest.SeedGSTTaxCodeID, "created_at": at(i)})
		items = append(items, it)
	}
	taxCodes := []struct{ id, rate string }{{invoicingtest.SeedGSTTaxCodeID, "10"}, {invoicingtest.SeedOnePercentTaxCodeID, "1"},
		{invoicingtest.SeedGSTFreeTaxCodeID, "0"}}
	lines := func(account string, linked bool) []any {
		var out []any
		for range 1 + rng.IntN(4) {
			tc := taxCodes[rng.IntN(len(taxCodes))]
			l := map[string]any{"id": uuid.NewString(), "description": "Work", "quantity": fmt.Sprintf("%d.%d", 1+rng.IntN(5), rng.IntN(4)*25),
				"unit_price": fmt.Sprintf("%d.%02d", 20+rng.IntN(500), rng.IntN(100)), "tax_rate": tc.rate,
				"account_id": account, "tax_code_id": tc.id}
			if linked && rng.IntN(3) == 0 {
				it := items[rng.IntN(len(items))]
				l["item_id"], l["item_code"], l["item_name"], l["description"] = it.id, it.code, it.name, it.name
			}
			out = append(out, l)
		}
		return out
	}

	for i := range n.invoices {
		id := uuid.NewString()
		status := []string{"draft", "awaiting_payment", "awaiting_payment", "overdue"}[rng.IntN(4)]
		inv := map[string]any{"id": id, "invoice_number": fmt.Sprintf("INV-%04d", i+1), "client_id": clients[rng.IntN(len(clients))],
			"status": status, "issue_date": day(-60 + rng.IntN(60)), "due_date": day(rng.IntN(30)), "currency": "AUD",
			"notes": fmt.Sprintf("Invoice %d", i), "reference": "", "line_items": lines(invoicingtest.SeedRevenueAccountID, false),
			"created_at": at(i)}
		if status != "draft" {
			inv["share_token"] = fmt.Sprintf("%032x", rng.Uint64())
			if rng.IntN(5) == 0 { // part paid
				st["payments"] = append(st["payments"].([]any), map[string]any{"id": uuid.NewString(), "invoice_id": id,
					"amount": "10.00", "payment_method": "bank_transfer", "received_at": at(i)})
			}
		}
		add("invoices", inv)
	}
	for i := range n.quotes {
		id := uuid.NewString()
		client := clients[rng.IntN(len(clients))]
		q := map[string]any{"id": id, "quote_number": fmt.Sprintf("QU-%04d", i+1), "title": fmt.Sprintf("Quote %d", i),
			"client_id": client, "status": "draft", "issue_date": day(-20 + rng.IntN(20)), "valid_until": day(30),
			"currency": "AUD", "notes": "", "line_items": lines(invoicingtest.SeedRevenueAccountID, true),
			"created_at": at(n.invoices + i)}
		if rng.IntN(2) == 0 {
			q["status"], q["share_token"] = "sent", fmt.Sprintf("%032x", rng.Uint64())
			q["recipients"] = []any{map[string]any{"quote_contact_id": uuid.NewString(), "contact_id": client,
				"name": "Recipient", "email": "r@example.com", "type": "to"}}
		}
		add("quotes", q)
	}
	for i := range n.bills {
		add("bills", map[string]any{"id": uuid.NewString(), "bill_number": fmt.Sprintf("BILL-%04d", i+1),
			"supplier_id": suppliers[rng.IntN(len(suppliers))], "status": []string{"draft", "awaiting_approval", "approved"}[rng.IntN(3)],
			"issue_date": day(-10), "due_date": day(20), "currency": "AUD",
			"line_items": lines(invoicingtest.SeedExpenseAccountID, false), "created_at": at(i)})
	}
	for i := range n.bankTransactions {
		add("bank_transactions", map[string]any{"id": uuid.NewString(), "bank_account_id": invoicingtest.SeedBankAccountID,
			"date": day(-rng.IntN(90)), "description": fmt.Sprintf("Transaction %d", i), "reference": fmt.Sprintf("REF-%d", i),
			"amount": fmt.Sprintf("%d.%02d", rng.IntN(2000)-1000, rng.IntN(100)), "status": "unreconciled"})
	}
	counters := st["counters"].(map[string]any)
	counters["invoices"], counters["quotes"], counters["bills"] = n.invoices, n.quotes, n.bills

	buf.Reset()
	require.NoError(t, json.NewEncoder(&buf).Encode(st))
	require.NoError(t, srv.LoadState(&buf))
	return ids
}
