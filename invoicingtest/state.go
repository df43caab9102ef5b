package invoicingtest

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// StateVersion is the version of the JSON document SaveState writes and
// LoadState reads. It changes when a saved state would no longer restore
// the same data.
const StateVersion = 1

// ErrStateVersion is returned (wrapped) by LoadState for a state of another
// version than StateVersion.
var ErrStateVersion = errors.New("invoicingtest: unsupported state version")

// SaveState writes the business's data to w as one JSON document, so that a
// later server can carry on from it with LoadState (invoicing mock --state
// does this across restarts). It covers everything the API can read or
// create: clients, suppliers, accounts, tax codes, catalog items, invoices
// with their payments and payment links, quotes with their recipients, views
// and acceptance, bills, bank accounts and transactions, the counters that
// number invoices, quotes and bills, and the API keys with their scopes
// (FullKey and ReadOnlyKey included). It leaves out what is not business
// data: webhook endpoints and their deliveries, the Events and Requests
// logs, queued faults, latency, the clock and the quote conversion rule.
//
// The document is versioned (StateVersion); its amounts are exact decimal
// strings. It holds the API keys in clear text: they are keys of this fake
// only.
func (s *Server) SaveState(w io.Writer) error {
	s.mu.Lock()
	st := s.state()
	s.mu.Unlock()
	enc := jsontext.NewEncoder(w, encodeOptions, jsontext.WithIndent("  "))
	if err := json.MarshalEncode(enc, st); err != nil {
		return fmt.Errorf("invoicingtest: saving state: %w", err)
	}
	return nil
}

// LoadState replaces the business's data and API keys with a state
// SaveState wrote; FullKey and ReadOnlyKey become the saved keys. Call it
// before the server is in use (right after NewServer): requests and helpers
// running meanwhile see either the old data or the new. Webhook endpoints,
// logs, faults and settings are kept as they are.
//
// It checks the whole document before changing anything, and returns an
// error, leaving the server unchanged, for malformed JSON, a version other
// than StateVersion (ErrStateVersion), a missing or repeated id, or a
// record naming a client, supplier, account, tax code, invoice or bank
// account that the state does not hold. Member names match exactly, and a
// member the document does not define is an error, as is anything but
// white space after the document; a name given twice takes its last value.
func (s *Server) LoadState(r io.Reader) error {
	var st stateDoc
	// jsonopt.Decode (duplicate names and invalid UTF-8 accepted, as by
	// encoding/json before), but strict where a mistyped or foreign file
	// should fail rather than load as empty: unknown members (as before)
	// and trailing data (which encoding/json's Decoder left unread).
	if err := json.UnmarshalRead(r, &st, jsonopt.Decode, json.RejectUnknownMembers(true)); err != nil {
		return fmt.Errorf("invoicingtest: loading state: %w", err)
	}
	if st.Version != StateVersion {
		return fmt.Errorf("%w: %d (this version reads %d)", ErrStateVersion, st.Version, StateVersion)
	}
	data, err := st.store()
	if err != nil {
		return fmt.Errorf("invoicingtest: loading state: %w", err)
	}
	keys, err := st.keySet()
	if err != nil {
		return fmt.Errorf("invoicingtest: loading state: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = data
	s.keys = keys
	s.FullKey, s.ReadOnlyKey = st.FullKey, st.ReadOnlyKey
	return nil
}

// state copies the server's data into a stateDoc. The caller holds s.mu.
func (s *Server) state() stateDoc {
	d := &s.data
	st := stateDoc{
		Version: StateVersion, SavedAt: s.now(),
		FullKey: s.FullKey, ReadOnlyKey: s.ReadOnlyKey,
		Clients:          mapAll(d.clients.all(), saveContact),
		Suppliers:        mapAll(d.suppliers.all(), saveContact),
		Accounts:         mapAll(d.accounts.all(), saveAccount),
		TaxCodes:         mapAll(d.taxCodes.all(), saveTaxCode),
		Items:            mapAll(d.items.all(), saveItem),
		Invoices:         mapAll(d.invoices.all(), saveInvoice),
		Quotes:           mapAll(d.quotes.all(), saveQuote),
		Bills:            mapAll(d.bills.all(), saveBill),
		BankAccounts:     mapAll(d.bankAccounts.all(), saveBankAccount),
		BankTransactions: mapAll(d.bankTxns.all(), saveBankTransaction),
		Payments:         mapAll(pointers(d.payments), savePayment),
		Counters:         savedCounters{d.invoiceSeq, d.quoteSeq, d.billSeq},
	}
	for _, key := range slices.Sorted(maps.Keys(s.keys)) {
		st.APIKeys = append(st.APIKeys, savedKey{key, slices.Sorted(maps.Keys(s.keys[key]))})
	}
	return st
}

// mapAll applies f to every record.
func mapAll[R, V any](records []*R, f func(*R) V) []V {
	out := make([]V, 0, len(records))
	for _, r := range records {
		out = append(out, f(r))
	}
	return out
}

// reportAccounts are the accounts the reports post to besides the lines'
// own: a state must hold them.
var reportAccounts = []string{
	SeedBankLedgerAccountID, SeedReceivablesAccountID, SeedPayablesAccountID, SeedTaxAccountID, SeedEarningsAccountID,
}

// store rebuilds the business's data from the document, checking its ids
// and the references between records. It reports every problem found.
func (st *stateDoc) store() (store, error) {
	var d store
	var errs []error
	add := func(added bool, kind, id string) {
		switch {
		case id == "":
			errs = append(errs, fmt.Errorf("a %s has no id", kind))
		case !added:
			errs = append(errs, fmt.Errorf("%s id %s is repeated", kind, id))
		}
	}
	need := func(found bool, kind, id, what, ref string) {
		if !found {
			errs = append(errs, fmt.Errorf("%s %s names %s %q, which the state does not hold", kind, id, what, ref))
		}
	}
	lines := func(kind, id string, saved []savedLine) []line {
		for _, l := range saved {
			need(d.accounts.get(l.AccountID) != nil, kind, id, "account", l.AccountID)
			need(d.taxCodes.get(l.TaxCodeID) != nil, kind, id, "tax code", l.TaxCodeID)
		}
		return mapAll(pointers(saved), (*savedLine).restore)
	}

	for _, c := range st.Clients {
		add(d.clients.add(c.ID, c.restore()), "client", c.ID)
	}
	for _, c := range st.Suppliers {
		add(d.suppliers.add(c.ID, c.restore()), "supplier", c.ID)
	}
	for _, a := range st.Accounts {
		add(d.accounts.add(a.ID, a.restore()), "account", a.ID)
	}
	for _, id := range reportAccounts {
		if d.accounts.get(id) == nil {
			errs = append(errs, fmt.Errorf("the state lacks account %s, which the reports post to", id))
		}
	}
	for _, t := range st.TaxCodes {
		add(d.taxCodes.add(t.ID, t.restore()), "tax code", t.ID)
	}
	for _, it := range st.Items {
		add(d.items.add(it.ID, it.restore()), "item", it.ID)
	}
	for _, inv := range st.Invoices {
		need(d.clients.get(inv.ClientID) != nil, "invoice", inv.ID, "client", inv.ClientID)
		add(d.invoices.add(inv.ID, inv.restore(lines("invoice", inv.ID, inv.Lines))), "invoice", inv.ID)
	}
	for _, q := range st.Quotes {
		need(d.clients.get(q.ClientID) != nil, "quote", q.ID, "client", q.ClientID)
		if q.ShareToken != "" && len(q.Recipients) == 0 {
			errs = append(errs, fmt.Errorf("quote %s has a share link but no recipients", q.ID))
		}
		rec := q.restore(lines("quote", q.ID, q.Lines))
		if a := q.Acceptance; a != nil {
			rec.acceptance = a.restore(lines("quote", q.ID, a.Lines))
		}
		add(d.quotes.add(q.ID, rec), "quote", q.ID)
	}
	for _, b := range st.Bills {
		need(d.suppliers.get(b.SupplierID) != nil, "bill", b.ID, "supplier", b.SupplierID)
		add(d.bills.add(b.ID, b.restore(lines("bill", b.ID, b.Lines))), "bill", b.ID)
	}
	for _, b := range st.BankAccounts {
		add(d.bankAccounts.add(b.ID, b.restore()), "bank account", b.ID)
	}
	for _, t := range st.BankTransactions {
		need(d.bankAccounts.get(t.BankAccountID) != nil, "bank transaction", t.ID, "bank account", t.BankAccountID)
		add(d.bankTxns.add(t.ID, t.restore()), "bank transaction", t.ID)
	}
	payments := map[string]bool{}
	for _, p := range st.Payments {
		add(!payments[p.ID], "payment", p.ID)
		payments[p.ID] = true
		inv := d.invoices.get(p.InvoiceID)
		need(inv != nil, "payment", p.ID, "invoice", p.InvoiceID)
		if inv != nil {
			inv.amountPaid = inv.amountPaid.Add(decimal.Decimal(p.Amount))
		}
		d.payments = append(d.payments, p.restore())
	}
	d.invoiceSeq, d.quoteSeq, d.billSeq = st.Counters.Invoices, st.Counters.Quotes, st.Counters.Bills
	return d, errors.Join(errs...)
}

// keySet builds the API keys. FullKey and ReadOnlyKey need not be among
// them: a revoked key stays revoked.
func (st *stateDoc) keySet() (map[string]map[string]bool, error) {
	keys := map[string]map[string]bool{}
	for _, k := range st.APIKeys {
		if k.Key == "" {
			return nil, errors.New("an API key is empty")
		}
		keys[k.Key] = map[string]bool{}
		for _, sc := range k.Scopes {
			keys[k.Key][sc] = true
		}
	}
	return keys, nil
}

// pointers returns pointers to the elements of s.
func pointers[T any](s []T) []*T {
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}
