package invoicingtest

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
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
// strings and its dates YYYY-MM-DD. It holds the records as the server
// keeps them: the JSON tags of Contact, Account, TaxCode, BankAccount,
// BankTransaction and Recipient name their members there. It holds the API
// keys in clear text: they are keys of this fake only.
func (s *Server) SaveState(w io.Writer) error {
	s.mu.Lock()
	doc, err := json.Marshal(s.state(), stateOptions, jsontext.WithIndent("  "))
	s.mu.Unlock()
	if err == nil {
		_, err = w.Write(append(doc, '\n'))
	}
	if err != nil {
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
// In a MultiServer, a state holding an API key of another of its
// businesses is refused too: a key routes to one business.
func (s *Server) LoadState(r io.Reader) error {
	var st stateDoc
	if err := json.UnmarshalRead(r, &st, stateOptions); err != nil {
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
	for _, p := range s.peers { // a key routes to one business only
		for k := range keys {
			if p != s && p.hasKey(k) {
				return fmt.Errorf("invoicingtest: loading state: one of its API keys is business %s's", p.name)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = data
	s.keys = keys
	s.FullKey, s.ReadOnlyKey = st.FullKey, st.ReadOnlyKey
	return nil
}

// stateDoc is the document of SaveState and LoadState: the store's records
// as they are, the API keys and the counters. The amounts that follow from
// others (line totals, an invoice's amount paid) are not saved but
// computed again.
type stateDoc struct {
	Version          int                  `json:"version"`
	SavedAt          time.Time            `json:"saved_at"`
	FullKey          string               `json:"full_key"`
	ReadOnlyKey      string               `json:"read_only_key"`
	APIKeys          []savedKey           `json:"api_keys"`
	Clients          []contact            `json:"clients"`
	Suppliers        []contact            `json:"suppliers"`
	Accounts         []Account            `json:"accounts"`
	TaxCodes         []TaxCode            `json:"tax_codes"`
	Items            []item               `json:"items"`
	Invoices         []invoice            `json:"invoices"`
	Quotes           []quote              `json:"quotes"`
	Bills            []bill               `json:"bills"`
	BankAccounts     []BankAccount        `json:"bank_accounts"`
	BankTransactions []bankTransactionDoc `json:"bank_transactions"`
	Payments         []payment            `json:"payments"`
	Counters         savedCounters        `json:"counters"`
}

// bankTransactionDoc is a bank transaction in the document, with its Date
// written as the civil date it is.
type bankTransactionDoc struct {
	BankTransaction
	Date date `json:"date"`
}

// savedKey is an API key and its scopes.
type savedKey struct {
	Key    string   `json:"key"`
	Scopes []string `json:"scopes"`
}

// savedCounters are the last numbers generated for INV-, QU- and BILL-.
type savedCounters struct {
	Invoices int `json:"invoices"`
	Quotes   int `json:"quotes"`
	Bills    int `json:"bills"`
}

// Bounds on saved decimals, checked from their digits and exponent alone
// (comparing a number such as 1e999999999 would take forever): below
// 10^maxSavedDigits in magnitude, at most maxSavedPlaces decimal places.
const (
	maxSavedDigits = 15
	maxSavedPlaces = 12
)

// stateOptions are the JSON options of the state document: those of every
// document the fake writes, but decimals as exact JSON strings (read from
// strings only, within the bounds above) and times by encoding/json/v2's
// own rules (so that the records' format:DateOnly applies); when loading,
// a member the document does not define is an error.
var stateOptions = json.JoinOptions(
	encodeOptions,
	json.WithMarshalers(json.MarshalToFunc(func(enc *jsontext.Encoder, d decimal.Decimal) error {
		return enc.WriteToken(jsontext.String(d.String()))
	})),
	json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, d *decimal.Decimal) error {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.Kind() != '"' {
			return errors.New("a decimal must be a JSON string")
		}
		v, err := decimal.NewFromString(tok.String())
		if err != nil {
			return err
		}
		if v.Exponent() < -maxSavedPlaces || v.NumDigits()+int(v.Exponent()) > maxSavedDigits {
			return fmt.Errorf("decimal %.40q is out of range", tok.String())
		}
		*d = v
		return nil
	})),
	json.RejectUnknownMembers(true),
)

// state copies the server's data into a stateDoc. The caller holds s.mu
// until the document is encoded (the copies share the records' slices).
func (s *Server) state() stateDoc {
	d := &s.data
	st := stateDoc{
		Version: StateVersion, SavedAt: s.now(),
		FullKey: s.FullKey, ReadOnlyKey: s.ReadOnlyKey,
		APIKeys:          []savedKey{},
		Clients:          values(d.clients.all()),
		Suppliers:        values(d.suppliers.all()),
		Accounts:         values(d.accounts.all()),
		TaxCodes:         values(d.taxCodes.all()),
		Items:            values(d.items.all()),
		Invoices:         values(d.invoices.all()),
		Quotes:           values(d.quotes.all()),
		Bills:            values(d.bills.all()),
		BankAccounts:     values(d.bankAccounts.all()),
		BankTransactions: []bankTransactionDoc{},
		Payments:         append([]payment{}, d.payments...),
		Counters:         savedCounters{d.invoiceSeq, d.quoteSeq, d.billSeq},
	}
	for _, t := range d.bankTxns.all() {
		st.BankTransactions = append(st.BankTransactions, bankTransactionDoc{*t, date(t.Date)})
	}
	for _, key := range slices.Sorted(maps.Keys(s.keys)) {
		st.APIKeys = append(st.APIKeys, savedKey{key, slices.Sorted(maps.Keys(s.keys[key]))})
	}
	return st
}

// reportAccounts are the accounts the reports post to besides the lines'
// own: a state must hold them.
var reportAccounts = []string{
	SeedBankLedgerAccountID, SeedReceivablesAccountID, SeedPayablesAccountID, SeedTaxAccountID, SeedEarningsAccountID,
}

// store makes the business's data of the document's records, checking
// their ids and the references between them, and computing what follows
// from them: the lines' amounts and the invoices' amounts paid. It reports
// every problem found.
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
	lines := func(kind, id string, lines []line) {
		for i := range lines {
			l := &lines[i]
			need(d.accounts.get(l.AccountID) != nil, kind, id, "account", l.AccountID)
			need(d.taxCodes.get(l.TaxCodeID) != nil, kind, id, "tax code", l.TaxCodeID)
			l.setAmounts()
		}
	}

	for i := range st.Clients {
		c := &st.Clients[i]
		add(d.clients.add(c.ID, c), "client", c.ID)
	}
	for i := range st.Suppliers {
		c := &st.Suppliers[i]
		add(d.suppliers.add(c.ID, c), "supplier", c.ID)
	}
	for i := range st.Accounts {
		a := &st.Accounts[i]
		add(d.accounts.add(a.ID, a), "account", a.ID)
	}
	for _, id := range reportAccounts {
		if d.accounts.get(id) == nil {
			errs = append(errs, fmt.Errorf("the state lacks account %s, which the reports post to", id))
		}
	}
	for i := range st.TaxCodes {
		t := &st.TaxCodes[i]
		add(d.taxCodes.add(t.ID, t), "tax code", t.ID)
	}
	for i := range st.Items {
		it := &st.Items[i]
		add(d.items.add(it.ID, it), "item", it.ID)
	}
	for i := range st.Invoices {
		inv := &st.Invoices[i]
		need(d.clients.get(inv.ClientID) != nil, "invoice", inv.ID, "client", inv.ClientID)
		lines("invoice", inv.ID, inv.Lines)
		add(d.invoices.add(inv.ID, inv), "invoice", inv.ID)
	}
	for i := range st.Quotes {
		q := &st.Quotes[i]
		need(d.clients.get(q.ClientID) != nil, "quote", q.ID, "client", q.ClientID)
		if q.ShareToken != "" && len(q.Recipients) == 0 {
			errs = append(errs, fmt.Errorf("quote %s has a share link but no recipients", q.ID))
		}
		lines("quote", q.ID, q.Lines)
		if q.Acceptance != nil {
			lines("quote", q.ID, q.Acceptance.Lines)
		}
		add(d.quotes.add(q.ID, q), "quote", q.ID)
	}
	for i := range st.Bills {
		b := &st.Bills[i]
		need(d.suppliers.get(b.SupplierID) != nil, "bill", b.ID, "supplier", b.SupplierID)
		lines("bill", b.ID, b.Lines)
		add(d.bills.add(b.ID, b), "bill", b.ID)
	}
	for i := range st.BankAccounts {
		b := &st.BankAccounts[i]
		add(d.bankAccounts.add(b.ID, b), "bank account", b.ID)
	}
	for i := range st.BankTransactions {
		t := &st.BankTransactions[i].BankTransaction
		t.Date = time.Time(st.BankTransactions[i].Date)
		need(d.bankAccounts.get(t.BankAccountID) != nil, "bank transaction", t.ID, "bank account", t.BankAccountID)
		add(d.bankTxns.add(t.ID, t), "bank transaction", t.ID)
	}
	payments := map[string]bool{}
	for _, p := range st.Payments {
		add(!payments[p.ID], "payment", p.ID)
		payments[p.ID] = true
		inv := d.invoices.get(p.InvoiceID)
		need(inv != nil, "payment", p.ID, "invoice", p.InvoiceID)
		if inv != nil {
			inv.amountPaid = inv.amountPaid.Add(p.Amount)
		}
		d.payments = append(d.payments, p)
	}
	d.invoiceSeq, d.quoteSeq, d.billSeq = st.Counters.Invoices, st.Counters.Quotes, st.Counters.Bills
	return d, errors.Join(errs...)
}

// values copies the records.
func values[T any](records []*T) []T {
	out := make([]T, len(records))
	for i, r := range records {
		out[i] = *r
	}
	return out
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
