package invoicingtest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// populate gives srv one record of every kind the API reads, in the states
// the helpers can reach, and returns the ids of an accepted quote and of an
// invoice with a partial payment.
func populate(t *testing.T, srv *Server) (acceptedQuoteID, partlyPaidID string) {
	t.Helper()
	post(t, srv, "/items", map[string]any{
		"name": "Hosting", "item_code": "HOST", "unit_price": jsonNumber("49.95"),
		"account_id": SeedRevenueAccountID, "tax_code_id": SeedGSTTaxCodeID,
	}).requireStatus(t, http.StatusCreated)
	post(t, srv, "/clients", map[string]any{
		"name": "Initech", "email": "ap@initech.example",
		"address": map[string]any{"address_line1": "1 Main St", "city": "Perth", "country": "AU"},
	}).requireStatus(t, http.StatusCreated)
	srv.AddSupplier(Contact{Name: "Paper Co", Email: "ar@paper.example"})
	srv.AddAccount(Account{Code: "4200", Name: "Training", Type: AccountRevenue, Inactive: true})
	srv.AddTaxCode(TaxCode{Code: "HALF", Name: "Half", Rate: decimal.RequireFromString("0.5"), Region: "AU"})
	bank := srv.AddBankAccount(BankAccount{Name: "USD", Currency: "USD", OpeningBalance: decimal.RequireFromString("12.34")})
	srv.AddBankTransaction(BankTransaction{BankAccountID: bank, Date: testStart, Description: "Fee", Amount: decimal.RequireFromString("-1.5")})

	createInvoice(t, srv, map[string]any{"notes": "draft one"})
	partly := createInvoice(t, srv, map[string]any{"reference": "ORDER-1", "status": "awaiting_payment"})
	partlyPaidID = partly["id"].(string)
	_, err := srv.RecordPayment(partlyPaidID, Payment{Amount: dec("40.00")})
	require.NoError(t, err)
	paid := createInvoice(t, srv, map[string]any{"invoice_number": "CUSTOM-7"})["id"].(string)
	require.NoError(t, srv.SendInvoice(paid))
	_, err = srv.RecordPayment(paid, Payment{Amount: dec("101.00"), Method: PaymentCard})
	require.NoError(t, err)
	notes := "updated"
	require.NoError(t, srv.UpdateInvoice(paid, InvoiceUpdate{Notes: &notes}))

	q := createQuote(t, srv, nil)
	acceptedQuoteID = q["id"].(string)
	lines := list(t, q, "line_items")
	require.NoError(t, srv.SetQuoteLineOptions(acceptedQuoteID, lines[1]["id"].(string), QuoteLineOptions{Optional: true}))
	require.NoError(t, srv.SendQuote(acceptedQuoteID, Recipient{ContactID: SeedClientID, Name: "Jo", Email: "jo@acme.example"}, Recipient{Name: "Cc", Email: "cc@acme.example", Type: "cc"}))
	require.NoError(t, srv.ViewQuote(acceptedQuoteID, nil))
	_, err = srv.AcceptQuote(acceptedQuoteID, AcceptOptions{Exclude: []string{lines[1]["id"].(string)}, Comments: "go", OrderNumber: "PO-1"})
	require.NoError(t, err)
	declined := createQuote(t, srv, nil)["id"].(string)
	require.NoError(t, srv.DeclineQuote(declined))
	createQuote(t, srv, map[string]any{"line_items": []any{map[string]any{"item_id": SeedItemID, "unit_price": 150}}})

	b := post(t, srv, "/bills", map[string]any{
		"supplier_id": SeedSupplierID, "default_account_id": SeedExpenseAccountID, "default_tax_code_id": SeedGSTTaxCodeID,
		"line_items": []any{map[string]any{"description": "Paper", "unit_price": 20}},
	}).requireStatus(t, http.StatusCreated).object(t)
	require.NoError(t, srv.ApproveBill(b["id"].(string)))
	require.NoError(t, srv.PayBill(b["id"].(string), time.Time{}))
	post(t, srv, "/bills", map[string]any{
		"supplier_id": SeedOtherSupplierID, "default_account_id": SeedExpenseAccountID, "default_tax_code_id": SeedGSTTaxCodeID,
		"line_items": []any{map[string]any{"unit_price": 5}},
	}).requireStatus(t, http.StatusCreated)
	return acceptedQuoteID, partlyPaidID
}

// readPaths are the API reads whose answers a restored server must repeat
// byte for byte.
var readPaths = []string{
	"/invoices", "/quotes", "/items", "/clients", "/suppliers", "/bills", "/accounts", "/tax-codes",
	"/bank-accounts", "/bank-transactions",
	"/reports/trial-balance", "/reports/profit-loss?from_date=2026-01-01", "/reports/balance-sheet",
}

func saveState(t *testing.T, srv *Server) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, srv.SaveState(&buf))
	return buf.Bytes()
}

func TestSaveStateLoadStateRestoresTheAPIsData(t *testing.T) {
	srv, _ := newServer(t)
	quoteID, partlyPaidID := populate(t, srv)
	invoicesOnly := srv.NewAPIKey(ScopeInvoicesRead)
	srv.RevokeAPIKey(srv.ReadOnlyKey)
	saved := saveState(t, srv)

	restored, _ := newServer(t)
	require.NoError(t, restored.LoadState(bytes.NewReader(saved)))

	assert.Equal(t, srv.FullKey, restored.FullKey, "the saved keys come back")
	assert.Equal(t, http.StatusOK, call(t, restored, http.MethodGet, "/invoices", invoicesOnly, nil).status)
	assert.Equal(t, http.StatusForbidden, call(t, restored, http.MethodGet, "/quotes", invoicesOnly, nil).status, "with their scopes")
	assert.Equal(t, http.StatusUnauthorized, call(t, restored, http.MethodGet, "/invoices", srv.ReadOnlyKey, nil).status, "a revoked key stays revoked")

	paths := append([]string{"/invoices/" + partlyPaidID, "/quotes/" + quoteID, "/invoices/" + partlyPaidID + "/pdf"}, readPaths...)
	for _, p := range paths {
		want := get(t, srv, p).requireStatus(t, http.StatusOK)
		got := get(t, restored, p).requireStatus(t, http.StatusOK)
		assert.Equal(t, string(want.body), string(got.body), "GET %s", p)
	}
	assert.Equal(t, string(saved), string(saveState(t, restored)), "saving the restored server gives the same document")

	// Both servers carry on alike: numbering, payments and quote actions
	// work on the restored records.
	for _, s := range []*Server{srv, restored} {
		_, err := s.RecordPayment(partlyPaidID, Payment{Amount: dec("61.00")})
		require.NoError(t, err)
		require.NoError(t, s.UnacceptQuote(quoteID))
	}
	assert.Equal(t, createInvoice(t, srv, nil)["invoice_number"], createInvoice(t, restored, nil)["invoice_number"])
	for _, p := range []string{"/invoices/" + partlyPaidID, "/quotes/" + quoteID} {
		assert.Equal(t, string(get(t, srv, p).body), string(get(t, restored, p).body), "GET %s", p)
	}
	events := restored.Events()
	require.Len(t, events, 4, "payment.received, invoice.paid, quote.unaccepted, invoice.created")
	assert.Equal(t, webhooks.EventInvoicePaid, events[1].Name)
	unaccepted := decodeObject(t, events[2].Body)
	assert.Equal(t, "jo@acme.example", unaccepted["previous_acceptance"].(map[string]any)["accepting_contact"].(map[string]any)["contact_email"])
	assert.Equal(t, "PO-1", unaccepted["previous_acceptance"].(map[string]any)["acceptance_order_number"])
}

func TestSaveStateDocument(t *testing.T) {
	srv, _ := newServer(t)
	createInvoice(t, srv, nil)
	doc := decodeObject(t, saveState(t, srv))
	assert.Equal(t, num("1"), doc["version"])
	assert.Equal(t, "2026-03-10T09:30:00Z", doc["saved_at"])
	inv := list(t, doc, "invoices")[0]
	assert.Equal(t, "INV-0001", inv["invoice_number"])
	assert.Equal(t, "2026-03-10", inv["issue_date"])
	line := list(t, inv, "line_items")[0]
	assert.Equal(t, "100", line["unit_price"], "decimals are exact strings")
	assert.Equal(t, "1", line["tax_rate"])
	assert.Len(t, list(t, doc, "clients"), 2)
	assert.Len(t, list(t, doc, "api_keys"), 2)
}

// TestLoadStateReadsTheDocumentOfEarlierReleases loads a document saved by
// an earlier release (testdata/state_v1.json, every kind of record, written
// before the records were saved as the store holds them) and saves it
// again: the same members, with the same values.
func TestLoadStateReadsTheDocumentOfEarlierReleases(t *testing.T) {
	saved, err := os.ReadFile("testdata/state_v1.json")
	require.NoError(t, err)
	srv, _ := newServer(t)
	require.NoError(t, srv.LoadState(bytes.NewReader(saved)))
	for _, p := range readPaths {
		get(t, srv, p).requireStatus(t, http.StatusOK)
	}
	again := decodeObject(t, saveState(t, srv))
	again["saved_at"] = decodeObject(t, saved)["saved_at"] // the time of this save
	assert.Equal(t, decodeObject(t, saved), again)
}

func TestLoadStateRefusesABadStateAndChangesNothing(t *testing.T) {
	srv, _ := newServer(t)
	createInvoice(t, srv, nil)
	good := saveState(t, srv)
	edit := func(f func(doc map[string]any)) string {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(good, &doc))
		f(doc)
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		return string(b)
	}
	first := func(doc map[string]any, key string) map[string]any { return doc[key].([]any)[0].(map[string]any) }

	cases := map[string]struct {
		doc  string
		want string
	}{
		"not JSON":    {`{"version": 1,`, "unexpected EOF"},
		"unknown key": {edit(func(d map[string]any) { d["invoicez"] = []any{} }), "invoicez"},
		"version": {edit(func(d map[string]any) { d["version"] = 2 }),
			"unsupported state version: 2"},
		"client of an invoice": {edit(func(d map[string]any) { first(d, "invoices")["client_id"] = "nope" }),
			`names client "nope"`},
		"account of a line": {edit(func(d map[string]any) {
			first(first(d, "invoices"), "line_items")["account_id"] = "gone"
		}), `names account "gone"`},
		"repeated id": {edit(func(d map[string]any) {
			d["clients"] = append(d["clients"].([]any), first(d, "clients"))
		}), "client id " + SeedClientID + " is repeated"},
		"report account": {edit(func(d map[string]any) { d["accounts"] = []any{} }),
			SeedReceivablesAccountID},
		"decimal as number": {edit(func(d map[string]any) { first(d, "tax_codes")["rate"] = 10 }),
			"decimal must be a JSON string"},
		"empty key": {edit(func(d map[string]any) { first(d, "api_keys")["key"] = "" }),
			"an API key is empty"},
		"data after the document": {string(good) + `{}`, "after top-level value"},
		"name in another case":    {strings.Replace(string(good), `"version"`, `"Version"`, 1), "Version"},
	}
	before := get(t, srv, "/invoices").requireStatus(t, http.StatusOK).body
	key := srv.FullKey
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := srv.LoadState(strings.NewReader(c.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Equal(t, key, srv.FullKey)
			assert.Equal(t, string(before), string(get(t, srv, "/invoices").body), "the server keeps its data")
		})
	}
	assert.ErrorIs(t, srv.LoadState(strings.NewReader(cases["version"].doc)), ErrStateVersion)
}

func TestLoadStateTakesTheLastOfARepeatedName(t *testing.T) {
	srv, _ := newServer(t)
	good := string(saveState(t, srv))
	doc := strings.Replace(good, `"version": 1`, `"version": 2, "version": 1`, 1)
	require.NotEqual(t, good, doc)
	require.NoError(t, srv.LoadState(strings.NewReader(doc+"\n\n")), "white space may follow the document")
}

func TestLoadStateKeepsWebhookEndpoints(t *testing.T) {
	srv, _ := newServer(t)
	rc := newReceiver(t)
	ep := srv.AddWebhookEndpoint(rc.URL, webhooks.EventInvoiceCreated)
	other, _ := newServer(t)
	require.NoError(t, srv.LoadState(bytes.NewReader(saveState(t, other))))

	c := srv.Client()
	_, err := c.Invoices.Create(t.Context(), &invoicing.InvoiceCreateParams{
		ClientID: SeedClientID, DefaultAccountID: SeedRevenueAccountID, DefaultTaxCodeID: SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{UnitPrice: decimal.NewFromInt(10)}},
	})
	require.NoError(t, err)
	require.Len(t, rc.deliveries(), 1)
	assert.True(t, verify(ep.Secret(), rc.deliveries()[0]))
}

// FuzzLoadState loads arbitrary documents: LoadState must never panic, and a
// state it accepts must serve the lists and reports without a server error
// and save again into a document it accepts.
func FuzzLoadState(f *testing.F) {
	srv := NewServer(WithClock(NewFakeClock(testStart)))
	f.Cleanup(srv.Close)
	var seed bytes.Buffer
	if err := srv.SaveState(&seed); err != nil {
		f.Fatal(err)
	}
	f.Add(seed.String())
	f.Add(strings.Replace(seed.String(), `"invoices": []`, `"invoices": [{"id": "i", "client_id": "`+SeedClientID+`", "issue_date": "2026-01-01", "due_date": "2026-01-01", "status": "paid", "line_items": [{"id": "l", "quantity": "1e9", "unit_price": "-0.001", "tax_rate": "12.5", "account_id": "`+SeedRevenueAccountID+`", "tax_code_id": "`+SeedGSTTaxCodeID+`"}]}]`, 1))
	f.Add(`{"version": 1, "quotes": [{"id": "q", "status": "accepted", "acceptance": {"interactive_selections": {"a": [1]}}}]}`)
	f.Add(`{"version": 1}`)
	h := srv.handler()
	f.Fuzz(func(t *testing.T, doc string) {
		if srv.LoadState(strings.NewReader(doc)) != nil {
			return
		}
		for _, p := range []string{"/invoices", "/quotes", "/bills", "/bank-accounts", "/reports/trial-balance", "/reports/profit-loss", "/reports/balance-sheet"} {
			req := httptest.NewRequest(http.MethodGet, BasePath+p, nil)
			req.Header.Set("Authorization", "Bearer "+srv.FullKey)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("GET %s after loading %q: %d %s", p, doc, rec.Code, rec.Body)
			}
		}
		var again bytes.Buffer
		if err := srv.SaveState(&again); err != nil {
			t.Fatalf("saving a loaded state: %v", err)
		}
		if err := srv.LoadState(&again); err != nil {
			t.Fatalf("loading a saved state: %v\n%s", err, again.String())
		}
	})
}
