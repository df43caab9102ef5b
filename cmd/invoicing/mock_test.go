package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// mockProc is a running "invoicing mock" and what its banner said.
type mockProc struct {
	*proc
	banner           string
	baseURL, fullKey string
	readOnlyKey      string
	secrets          []string // of the --webhook endpoints, in order
}

// startMock starts "invoicing mock --addr 127.0.0.1:0 args..." and reads
// its banner.
func startMock(t *testing.T, args ...string) *mockProc {
	t.Helper()
	p := start(t, nil, append([]string{"mock", "--addr", "127.0.0.1:0"}, args...)...)
	last, before := p.waitFor("Serving until Ctrl-C.")
	m := &mockProc{proc: p, banner: strings.Join(append(before, last), "\n")}
	for _, l := range before {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "base URL "):
			m.baseURL = f[2]
		case strings.HasPrefix(l, "full key "):
			m.fullKey = f[2]
		case strings.HasPrefix(l, "read-only key "):
			m.readOnlyKey = f[2]
		case strings.HasPrefix(l, "  secret "):
			m.secrets = append(m.secrets, f[1])
		}
	}
	require.True(t, strings.HasPrefix(m.baseURL, "http://127.0.0.1:") && strings.HasSuffix(m.baseURL, "/api/v1/external"), m.banner)
	require.NotEmpty(t, m.fullKey, m.banner)
	require.NotEmpty(t, m.readOnlyKey, m.banner)
	return m
}

// env configures the reads for the mock, with its full key.
func (m *mockProc) env() []string {
	return []string{"INVOICING_BASE_URL=" + m.baseURL, "INVOICING_API_KEY=" + m.fullKey}
}

// webhooks returns the mock's webhook endpoints, as its control endpoint
// lists them for its full key.
func (m *mockProc) webhooks(t *testing.T) []invoicingtest.ControlWebhook {
	t.Helper()
	info, err := invoicingtest.NewControlClient(m.baseURL, m.fullKey, nil).Info(t.Context())
	require.NoError(t, err)
	return info.Webhooks
}

// client is an SDK client for the mock.
func (m *mockProc) client(t *testing.T, key string) *invoicing.Client {
	t.Helper()
	c, err := invoicing.NewClient(m.baseURL, key, invoicing.WithMaxRetries(0))
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func listAll[T any](t *testing.T, seq func(yield func(*T, error) bool)) []*T {
	t.Helper()
	var out []*T
	for rec, err := range seq {
		require.NoError(t, err)
		out = append(out, rec)
	}
	return out
}

func TestMockAnswersTheSDK(t *testing.T) {
	m := startMock(t, "--seed", "7")
	assert.Contains(t, m.banner, "not real", "the banner says the keys are the fake's")
	c := m.client(t, m.fullKey)

	all := listAll(t, c.Invoices.List(t.Context(), nil))
	require.Len(t, all, 8, "7 samples, and the invoice the accepted sample quote became")
	var invoices []*invoicing.Invoice // the samples, by their notes
	for _, inv := range all {
		if inv.Notes == "Sample invoice from invoicing mock --seed." {
			invoices = append(invoices, inv)
		}
	}
	require.Len(t, invoices, 7)
	var statuses []invoicing.InvoiceStatus
	last := invoices[6].IssueDate
	for i, inv := range invoices {
		assert.Equal(t, last.AddDays(-7*(6-i)), inv.IssueDate, "a week apart")
		assert.Equal(t, inv.IssueDate.AddDays(14), inv.DueDate)
		statuses = append(statuses, inv.Status)
	}
	today := invoicing.DateOf(time.Now().UTC())
	assert.False(t, last.After(today) || last.Before(today.AddDays(-1)), "the last one issued today (%s)", last)
	// The second was due three weeks ago: the mock, on the real clock,
	// shows it overdue. The fifth, part paid, was due today; the sixth is
	// voided and the seventh is new.
	assert.Equal(t, []invoicing.InvoiceStatus{"draft", "overdue", "paid", "overdue", "awaiting_payment", "voided", "draft"}, statuses)
	assert.True(t, invoices[4].AmountPaid.IsPositive() && invoices[4].AmountDue.IsPositive(), "the fifth is part paid")
	quotes := listAll(t, c.Quotes.List(t.Context(), nil))
	require.Len(t, quotes, 7)
	var quoteStatuses []invoicing.QuoteStatus
	for _, q := range quotes {
		quoteStatuses = append(quoteStatuses, q.Status)
	}
	// The first two, issued six and five weeks ago and valid for 30 days,
	// have expired.
	assert.Equal(t, []invoicing.QuoteStatus{"expired", "expired", "accepted", "declined", "expired", "draft", "sent"}, quoteStatuses)

	got, err := c.Invoices.Get(t.Context(), invoices[2].ID)
	require.NoError(t, err)
	assert.True(t, got.AmountDue.IsZero())

	_, err = m.client(t, m.readOnlyKey).Items.Create(t.Context(), &invoicing.ItemCreateParams{
		Name: "X", UnitPrice: invoicing.Ptr(decimal.NewFromInt(1)),
		AccountID: invoicingtest.SeedRevenueAccountID, TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	})
	assert.ErrorIs(t, err, invoicing.ErrForbidden, "the read-only key has only read scopes")

	// The same N gives the same data; ids differ.
	other := startMock(t, "--seed", "7")
	again := listAll(t, other.client(t, other.fullKey).Invoices.List(t.Context(), nil))
	invoices = all
	for i := range invoices {
		a, b := *invoices[i], *again[i]
		assert.NotEqual(t, a.ID, b.ID)
		assert.Equal(t, []any{a.InvoiceNumber, a.ClientID, a.Status, a.IssueDate, a.DueDate, a.Total.String(), a.AmountPaid.String(), len(a.LineItems)},
			[]any{b.InvoiceNumber, b.ClientID, b.Status, b.IssueDate, b.DueDate, b.Total.String(), b.AmountPaid.String(), len(b.LineItems)})
	}

	code, rest := m.stop()
	assert.Equal(t, 0, code, "a clean shutdown on SIGINT")
	assert.Contains(t, rest, "Shutting down")
	assert.Empty(t, m.stderrText())
}

func TestMockDeliversSignedWebhooksToItsEndpoints(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got, bodies = append(got, r), append(bodies, b)
	}))
	defer rcv.Close()

	m := startMock(t, "--webhook", rcv.URL+"/all", "--webhook", rcv.URL+"/invoices,invoice.created,invoice.paid")
	require.Len(t, m.secrets, 2)
	assert.Contains(t, m.banner, rcv.URL+"/invoices (invoice.created, invoice.paid)")
	for _, s := range m.secrets {
		assert.Len(t, s, 64)
		assert.Equal(t, 2, strings.Count(m.banner, s), "each secret is printed once, and in its export line")
	}

	c := m.client(t, m.fullKey)
	_, err := c.Quotes.Create(t.Context(), &invoicing.QuoteCreateParams{
		ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{UnitPrice: decimal.NewFromInt(10)}},
	})
	require.NoError(t, err)
	_, err = c.Invoices.Create(t.Context(), &invoicing.InvoiceCreateParams{
		ClientID: invoicingtest.SeedClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{{UnitPrice: decimal.NewFromInt(10)}},
	})
	require.NoError(t, err)

	mu.Lock()
	defer mu.Unlock()
	var paths []string
	for i, r := range got {
		paths = append(paths, r.URL.Path+" "+r.Header.Get(webhooks.HeaderEvent))
		secret := m.secrets[0]
		if r.URL.Path == "/invoices" {
			secret = m.secrets[1]
		}
		v, err := webhooks.NewVerifier(secret)
		require.NoError(t, err)
		_, err = v.ParseDelivery(r.Header, bodies[i])
		assert.NoError(t, err, "%s is signed with its endpoint's secret", r.URL.Path)
	}
	assert.Equal(t, []string{"/all quote.created", "/all invoice.created", "/invoices invoice.created"}, paths)
}

func TestMockStateSurvivesARestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "demo.json")
	m := startMock(t, "--seed", "2", "--state", state)
	assert.Contains(t, m.banner, "seed data and 2 sample")
	res, err := m.client(t, m.fullKey).Invoices.Create(t.Context(), &invoicing.InvoiceCreateParams{
		ClientID: invoicingtest.SeedOtherClientID, DefaultAccountID: invoicingtest.SeedRevenueAccountID, DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		Notes: "made before the restart", LineItems: []invoicing.LineItemParams{{UnitPrice: decimal.RequireFromString("12.34")}},
	})
	require.NoError(t, err)
	code, rest := m.stop()
	require.Equal(t, 0, code, m.stderrText())
	assert.Contains(t, rest, "Saved the data to "+state)
	fi, err := os.Stat(state)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the state holds keys: owner only")

	again := startMock(t, "--seed", "5", "--state", state)
	assert.Contains(t, again.banner, "restored from "+state)
	assert.Equal(t, m.fullKey, again.fullKey, "the keys survive, so configured clients keep working")
	c := again.client(t, m.fullKey)
	invoices := listAll(t, c.Invoices.List(t.Context(), nil))
	assert.Len(t, invoices, 3, "the two samples and the new invoice; --seed is ignored on restore")
	inv, err := c.Invoices.Get(t.Context(), res.ID)
	require.NoError(t, err)
	assert.Equal(t, "made before the restart", inv.Notes)
	assert.Equal(t, "13.57", inv.Total.StringFixed(2))
	code, _ = again.stop()
	assert.Equal(t, 0, code)
}

func TestMockRefusesAStateItCannotRead(t *testing.T) {
	state := filepath.Join(t.TempDir(), "broken.json")
	require.NoError(t, os.WriteFile(state, []byte(`{"version": 99}`), 0o600))
	r := run(t, nil, "mock", "--addr", "127.0.0.1:0", "--state", state).requireCode(t, 1)
	assert.Contains(t, r.stderr, "restoring "+state)
	assert.Contains(t, r.stderr, "unsupported state version")
}

func TestMockLatencyDelaysEveryRequest(t *testing.T) {
	m := startMock(t, "--latency", "150ms")
	c := m.client(t, m.fullKey)
	start := time.Now()
	_, err := c.Items.Get(t.Context(), invoicingtest.SeedItemID)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
}

func TestMockReportsAnAddressInUse(t *testing.T) {
	m := startMock(t)
	addr := strings.TrimPrefix(strings.TrimSuffix(m.baseURL, invoicingtest.BasePath), "http://")
	r := run(t, nil, "mock", "--addr", addr).requireCode(t, 1)
	assert.Contains(t, r.stderr, "address already in use")
}
