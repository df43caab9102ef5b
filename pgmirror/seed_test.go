package pgmirror_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
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
// approved; clients, suppliers, items and bank transactions; its choices
// drawn from a PCG seeded with s1 and s2. It returns the ids it added, by
// resource.
func seed(t testing.TB, srv *invoicingtest.Server, n sizes, s1, s2 uint64) map[string][]string {
	t.Helper()
	rng := rand.New(rand.NewPCG(s1, s2))
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

// mutator makes random changes to the fake service through its helpers and
// its API, as the business's staff and clients would: payments, sends,
// updates, voids, quote acceptances that convert into invoices, and the
// changes that raise no event (overdue, declined, expired, paid bills, bank
// transactions). Invalid picks (a payment to a draft, say) are skipped and
// not counted.
type mutator struct {
	srv *invoicingtest.Server
	c   *invoicing.Client

	mu       sync.Mutex
	invoices []string
	quotes   []string
	bills    []string
	done     map[string]int // successful mutations by kind

	count atomic.Int64
	holds []hold // set before run
}

// A hold makes the mutations after the after-th wait until until is closed
// (a fault the test makes, the end of the backfill).
type hold struct {
	after int64
	until <-chan struct{}
}

// holdAfter makes the mutations after the after-th wait until until is
// closed. Call it before run.
func (m *mutator) holdAfter(after int64, until <-chan struct{}) {
	m.holds = append(m.holds, hold{after, until})
}

// newMutator changes srv's records, starting with ids (what seed returned,
// which must hold invoices, quotes and bills).
func newMutator(srv *invoicingtest.Server, ids map[string][]string) *mutator {
	return &mutator{srv: srv, c: srv.Client(), done: map[string]int{},
		invoices: ids["invoices"], quotes: ids["quotes"], bills: ids["bills"]}
}

// kinds are the mutations with their weights.
var kinds = []struct {
	name   string
	weight int
}{
	{"payment", 22}, {"full payment", 5}, {"send invoice", 12}, {"update invoice", 10}, {"overdue", 4}, {"void", 2},
	{"create invoice", 8}, {"send quote", 8}, {"view quote", 4}, {"accept quote", 8}, {"decline quote", 3},
	{"expire quote", 2}, {"unaccept quote", 1}, {"create quote", 3}, {"create bill", 2}, {"approve bill", 2},
	{"pay bill", 1}, {"add contact", 1}, {"bank transaction", 1}, {"create item", 1},
}

// run makes n successful mutations from workers goroutines, calling every
// (in one of them, between mutations) after each 100 mutations.
func (m *mutator) run(n, workers int, seed uint64, every func(done int)) error {
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for {
				c := m.count.Add(1) // claim the c-th mutation
				if c > int64(n) {
					m.count.Add(-1)
					return
				}
				for _, h := range m.holds {
					if c > h.after {
						<-h.until
					}
				}
				ok, err := m.step(rng)
				if err != nil {
					errs[w] = err
					return
				}
				if !ok { // an invalid pick: the claim goes back
					m.count.Add(-1)
					continue
				}
				if c%100 == 0 {
					every(int(c))
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// step makes one random mutation and reports whether it was valid.
func (m *mutator) step(rng *rand.Rand) (bool, error) {
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	roll := rng.IntN(total)
	kind := kinds[0].name
	for _, k := range kinds {
		if roll < k.weight {
			kind = k.name
			break
		}
		roll -= k.weight
	}
	err := m.mutate(kind, rng)
	switch {
	case errors.Is(err, invoicingtest.ErrInvalidState), errors.Is(err, errSkip):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%s: %w", kind, err)
	}
	m.mu.Lock()
	m.done[kind]++
	m.mu.Unlock()
	return true, nil
}

// errSkip marks a pick that does not apply (a payment larger than what is
// due, say).
var errSkip = errors.New("skipped")

func (m *mutator) pick(rng *rand.Rand, ids *[]string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return (*ids)[rng.IntN(len(*ids))]
}

func (m *mutator) add(ids *[]string, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*ids = append(*ids, id)
}

func (m *mutator) mutate(kind string, rng *rand.Rand) error {
	ctx := context.Background()
	switch kind {
	case "payment":
		_, err := m.srv.RecordPayment(m.pick(rng, &m.invoices), invoicingtest.Payment{Amount: decimal.New(int64(100+rng.IntN(2000)), -2)})
		if err != nil && !errors.Is(err, invoicingtest.ErrInvalidState) {
			return errSkip // more than is due
		}
		return err
	case "full payment":
		id := m.pick(rng, &m.invoices)
		inv, err := m.c.Invoices.Get(ctx, id)
		if err != nil {
			return err
		}
		if !inv.AmountDue.IsPositive() {
			return errSkip
		}
		_, err = m.srv.RecordPayment(id, invoicingtest.Payment{Amount: inv.AmountDue, Method: invoicingtest.PaymentCard})
		if err != nil && !errors.Is(err, invoicingtest.ErrInvalidState) {
			return errSkip // another worker paid some of it between the read and the payment: more than is due now
		}
		return err
	case "send invoice":
		return m.srv.SendInvoice(m.pick(rng, &m.invoices))
	case "update invoice":
		notes := fmt.Sprintf("note %d", rng.IntN(1_000_000))
		u := invoicingtest.InvoiceUpdate{Notes: &notes}
		if rng.IntN(2) == 0 {
			from := t0
			if now := m.srv.Now(); now.After(from) { // after any issue date, the clock moved or not
				from = now
			}
			u.DueDate = from.AddDate(0, 0, 30+rng.IntN(60))
		}
		return m.srv.UpdateInvoice(m.pick(rng, &m.invoices), u)
	case "overdue":
		return m.srv.UpdateInvoice(m.pick(rng, &m.invoices), invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusOverdue})
	case "void":
		return m.srv.UpdateInvoice(m.pick(rng, &m.invoices), invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusVoided})
	case "create invoice":
		status := invoicing.InvoiceStatusDraft
		if rng.IntN(2) == 0 {
			status = invoicing.InvoiceStatusAwaitingPayment
		}
		p := &invoicing.InvoiceCreateParams{ClientID: invoicingtest.SeedClientID, Status: status, Notes: "new",
			DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID}
		for range 1 + rng.IntN(4) {
			p.LineItems = append(p.LineItems, invoicing.LineItemParams{Description: "Service",
				Quantity: invoicing.Ptr(decimal.New(int64(1+rng.IntN(40)), -1)), UnitPrice: decimal.New(int64(1000+rng.IntN(90000)), -2)})
		}
		res, err := m.c.Invoices.Create(ctx, p)
		if err == nil {
			m.add(&m.invoices, res.ID)
		}
		return err
	case "send quote":
		return m.srv.SendQuote(m.pick(rng, &m.quotes))
	case "view quote":
		return m.srv.ViewQuote(m.pick(rng, &m.quotes), nil)
	case "accept quote":
		res, err := m.srv.AcceptQuote(m.pick(rng, &m.quotes), invoicingtest.AcceptOptions{ByStaff: rng.IntN(2) == 0})
		if err == nil && res.InvoiceID != "" {
			m.add(&m.invoices, res.InvoiceID)
		}
		return err
	case "decline quote":
		return m.srv.DeclineQuote(m.pick(rng, &m.quotes))
	case "expire quote":
		return m.srv.ExpireQuote(m.pick(rng, &m.quotes))
	case "unaccept quote":
		return m.srv.UnacceptQuote(m.pick(rng, &m.quotes))
	case "create quote":
		q, err := m.c.Quotes.Create(ctx, &invoicing.QuoteCreateParams{ClientID: invoicingtest.SeedOtherClientID,
			DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
			LineItems: []invoicing.LineItemParams{{ItemID: invoicingtest.SeedItemID, UnitPrice: decimal.RequireFromString("150.00")},
				{Description: "Travel", UnitPrice: decimal.New(int64(1000+rng.IntN(9000)), -2)}}})
		if err == nil {
			m.add(&m.quotes, q.ID)
		}
		return err
	case "create bill":
		b, err := m.c.Bills.Create(ctx, &invoicing.BillCreateParams{SupplierID: invoicingtest.SeedSupplierID,
			DefaultAccountID: invoicingtest.SeedExpenseAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
			LineItems: []invoicing.LineItemParams{{Description: "Supplies", UnitPrice: decimal.New(int64(100+rng.IntN(90000)), -2)}}})
		if err == nil {
			m.add(&m.bills, b.ID)
		}
		return err
	case "approve bill":
		return m.srv.ApproveBill(m.pick(rng, &m.bills))
	case "pay bill":
		return m.srv.PayBill(m.pick(rng, &m.bills), time.Time{})
	case "add contact":
		if rng.IntN(2) == 0 {
			m.srv.AddClient(invoicingtest.Contact{Name: fmt.Sprintf("Client %d", rng.Int())})
		} else {
			m.srv.AddSupplier(invoicingtest.Contact{Name: fmt.Sprintf("Supplier %d", rng.Int())})
		}
		return nil
	case "bank transaction":
		m.srv.AddBankTransaction(invoicingtest.BankTransaction{BankAccountID: invoicingtest.SeedSavingsBankAccountID, Date: t0,
			Description: "Transfer", Amount: decimal.New(int64(rng.IntN(200000)-100000), -2)})
		return nil
	case "create item":
		_, err := m.c.Items.Create(ctx, &invoicing.ItemCreateParams{Name: fmt.Sprintf("Item %d", rng.Int()),
			UnitPrice: invoicing.Ptr(decimal.New(int64(rng.IntN(100000)), -2)),
			AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID})
		return err
	}
	return fmt.Errorf("unknown mutation %q", kind)
}

// summary lists the mutations made, by kind.
func (m *mutator) summary() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.done))
	for k := range m.done {
		names = append(names, k)
	}
	sort.Strings(names)
	s := ""
	for _, k := range names {
		s += fmt.Sprintf("%s %d, ", k, m.done[k])
	}
	return s
}
