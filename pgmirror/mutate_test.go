package pgmirror_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

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
