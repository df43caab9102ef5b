package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// verifiedBodies checks that every delivery rc received is signed with
// secret and returns, by event type, the parsed events.
func verifiedEvents(t *testing.T, rc *recorder, secret string) map[webhooks.EventType][]any {
	t.Helper()
	v, err := webhooks.NewVerifier(secret)
	require.NoError(t, err)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[webhooks.EventType][]any{}
	for i, h := range rc.headers {
		d, err := v.ParseDelivery(h, rc.bodies[i])
		require.NoError(t, err, "delivery %d is signed with the endpoint's secret", i)
		out[d.Type] = append(out[d.Type], d.Event)
	}
	return out
}

func TestTriggerOnAMockMakesTheRealChange(t *testing.T) {
	rc := newRecorder(t, http.StatusOK)
	m := startMock(t, "--webhook", rc.URL+"/webhooks")
	require.Len(t, m.secrets, 1)
	c := m.client(t, m.fullKey)

	r := run(t, m.env(), "trigger", "invoice.paid").requireCode(t, 0)
	assert.Contains(t, r.stdout, "created invoice INV-0001")
	assert.Contains(t, r.stdout, "recorded a payment of the whole amount due")
	for _, e := range []string{"invoice.created", "payment.received", "invoice.paid"} {
		assert.Regexp(t, `(?m)^  `+strings.ReplaceAll(e, ".", `\.`)+` +-> `+rc.URL+`/webhooks  200 OK \(delivery [0-9a-f-]{36}\)$`, r.stdout)
	}

	events := verifiedEvents(t, rc, m.secrets[0])
	require.Len(t, events[webhooks.EventInvoicePaid], 1)
	paid := events[webhooks.EventInvoicePaid][0].(*webhooks.InvoicePaid)
	inv, err := c.Invoices.Get(t.Context(), paid.InvoiceID)
	require.NoError(t, err, "the event names an invoice that exists")
	assert.Equal(t, invoicing.InvoiceStatusPaid, inv.Status)
	assert.Equal(t, inv.Total.String(), paid.AmountPaid.String())
	require.Len(t, events[webhooks.EventPaymentReceived], 1)
	assert.Equal(t, inv.ID, events[webhooks.EventPaymentReceived][0].(*webhooks.PaymentReceived).InvoiceID)
}

func TestTriggerOnAMockRaisesEveryEventType(t *testing.T) {
	rc := newRecorder(t, http.StatusOK)
	m := startMock(t, "--webhook", rc.URL+"/webhooks")
	for _, event := range allEventTypes {
		r := run(t, m.env(), "trigger", string(event)).requireCode(t, 0)
		assert.Regexp(t, `(?m)^  `+strings.ReplaceAll(string(event), ".", `\.`)+` +-> .* 200 OK`, r.stdout, event)
	}
	events := verifiedEvents(t, rc, m.secrets[0])
	for _, event := range allEventTypes {
		assert.NotEmpty(t, events[event], "the mock delivered %s", event)
	}
	accepted := events[webhooks.EventQuoteAccepted][0].(*webhooks.QuoteAccepted)
	require.NotNil(t, accepted.InvoiceID, "the accepted quote became an invoice")
	inv, err := m.client(t, m.fullKey).Invoices.Get(t.Context(), *accepted.InvoiceID)
	require.NoError(t, err)
	assert.Equal(t, invoicing.InvoiceStatusDraft, inv.Status)
}

func TestTriggerOnAMockFailsWhenTheReceiverRefuses(t *testing.T) {
	rc := newRecorder(t, http.StatusInternalServerError)
	m := startMock(t, "--webhook", rc.URL+"/webhooks")
	r := run(t, m.env(), "trigger", "quote.sent").requireCode(t, 1)
	assert.Contains(t, r.stdout, "500 Internal Server Error (the mock retries it on the service's schedule)")
	assert.Contains(t, r.stderr, "deliveries of quote.sent were not answered 2xx")
	run(t, m.env(), "trigger", "quote.sent", "--expect", "500").requireCode(t, 0)
}

func TestTriggerOnAMockWithoutAnEndpoint(t *testing.T) {
	m := startMock(t)
	r := run(t, m.env(), "trigger", "invoice.created").requireCode(t, 2)
	assert.Contains(t, r.stderr, "has no webhook endpoint that receives invoice.created")

	// --to makes the receiver an endpoint of the mock for the trigger,
	// signing with the secret given, and removes it afterwards: the mock is
	// left as it was found, and a second trigger adds it again.
	rc := newRecorder(t, http.StatusOK)
	r = run(t, m.env(), "trigger", "invoice.created", "--to", rc.URL+"/in", "--secret", testSecret).requireCode(t, 0)
	assert.Contains(t, r.stdout, "Added "+rc.URL+"/in as a webhook endpoint of the mock, signing with the secret given.")
	assert.Contains(t, r.stdout, "Removed the webhook endpoint "+rc.URL+"/in (--keep keeps it).")
	assert.Empty(t, m.webhooks(t), "trigger --to leaves no endpoint behind")
	r = run(t, m.env(), "trigger", "contact.created", "--to", rc.URL+"/in", "--secret", testSecret, "--keep").requireCode(t, 0)
	assert.Contains(t, r.stdout, "Added ")
	assert.NotContains(t, r.stdout, "Removed ")
	require.Len(t, m.webhooks(t), 1, "--keep keeps it")
	r = run(t, m.env(), "trigger", "invoice.sent", "--to", rc.URL+"/in").requireCode(t, 0)
	assert.NotContains(t, r.stdout, "Added ", "an endpoint already there is used as it is")
	assert.NotContains(t, r.stdout, "Removed ")
	assert.Len(t, m.webhooks(t), 1)
	events := verifiedEvents(t, rc, testSecret)
	assert.Len(t, events[webhooks.EventInvoiceCreated], 2)
	assert.Len(t, events[webhooks.EventContactCreated], 1)

	// Without a secret, the mock chooses one and trigger prints it.
	other := newRecorder(t, http.StatusOK)
	r = run(t, m.env(), "trigger", "test", "--to", other.URL).requireCode(t, 0)
	line := regexpLine(t, r.stdout, `export INVOICING_WEBHOOK_SECRET=([0-9a-f]{64})`)
	assert.Len(t, verifiedEvents(t, other, line)[webhooks.EventTest], 1)
	assert.Len(t, m.webhooks(t), 1)
}

func TestTriggerPutsBackTheSecretOfAnEndpointItSigned(t *testing.T) {
	rc := newRecorder(t, http.StatusOK)
	m := startMock(t, "--webhook", rc.URL+"/webhooks")
	r := run(t, m.env(), "trigger", "quote.sent", "--to", rc.URL+"/webhooks", "--secret", testSecret).requireCode(t, 0)
	assert.Contains(t, r.stdout, "Put back the signing secret of the webhook endpoint "+rc.URL+"/webhooks")
	assert.Len(t, verifiedEvents(t, rc, testSecret)[webhooks.EventQuoteSent], 1, "signed with the secret given")

	run(t, m.env(), "trigger", "test").requireCode(t, 0)
	rc.mu.Lock()
	h, body := rc.headers[len(rc.headers)-1], rc.bodies[len(rc.bodies)-1]
	rc.mu.Unlock()
	v, err := webhooks.NewVerifier(m.secrets[0])
	require.NoError(t, err)
	_, err = v.ParseDelivery(h, body)
	require.NoError(t, err, "later deliveries are signed with the endpoint's own secret again")
}

func TestTriggerElsewhereSaysTheIDsAreMadeUp(t *testing.T) {
	rc := newRecorder(t, http.StatusOK)
	notMock := newRecorder(t, http.StatusNotFound) // a service without /_mock
	env := []string{"INVOICING_BASE_URL=" + notMock.URL + "/api/v1/external", "INVOICING_API_KEY=sk_live_abcdefgh"}
	r := run(t, env, "trigger", "invoice.paid", "--to", rc.URL, "--secret", testSecret).requireCode(t, 0)
	assert.Contains(t, r.stdout, "the ids are made up")
	assert.Contains(t, r.stdout, "not an invoicing mock")
	assert.Equal(t, 1, rc.count())

	// A bad variant is made by hand even on a mock.
	m := startMock(t, "--webhook", rc.URL)
	r = run(t, append(m.env(), "INVOICING_WEBHOOK_SECRET="+m.secrets[0]), "trigger", "invoice.paid", "--to", rc.URL, "--tamper", "--expect", "200").requireCode(t, 0)
	assert.Contains(t, r.stdout, "the ids are made up, as --set, --stale, --tamper and --wrong-secret make a delivery by hand")
}

func TestMockActionsChangeRecordsAndReportTheirEvents(t *testing.T) {
	rc := newRecorder(t, http.StatusOK)
	m := startMock(t, "--seed", "7", "--webhook", rc.URL+"/webhooks")
	c := m.client(t, m.fullKey)
	draft := firstWith(t, c, invoicing.InvoiceStatusDraft)

	r := run(t, m.env(), "invoices", "send", draft).requireCode(t, 0)
	assert.Contains(t, r.stdout, "Sent invoice "+draft+".")
	assert.Regexp(t, `(?m)^  invoice\.sent +-> .*/webhooks  200 OK`, r.stdout)

	r = run(t, m.env(), "invoices", "pay", draft, "--amount", "10.00").requireCode(t, 0)
	assert.Regexp(t, `(?m)^  payment\.received +-> `, r.stdout)
	assert.NotContains(t, r.stdout, "invoice.paid", "a part payment")
	r = run(t, m.env(), "invoices", "pay", draft, "--json").requireCode(t, 0)
	var res invoicingtest.ControlResult
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	assert.Equal(t, draft, res.InvoiceID)
	assert.NotEmpty(t, res.PaymentID)
	require.Len(t, res.Events, 2)
	assert.Equal(t, []webhooks.EventType{webhooks.EventPaymentReceived, webhooks.EventInvoicePaid}, []webhooks.EventType{res.Events[0].Type, res.Events[1].Type})
	inv, err := c.Invoices.Get(t.Context(), draft)
	require.NoError(t, err)
	assert.Equal(t, invoicing.InvoiceStatusPaid, inv.Status)

	r = run(t, m.env(), "invoices", "void", draft).requireCode(t, 1)
	assert.Contains(t, r.stderr, "409", "a paid invoice cannot be voided")
	r = run(t, m.env(), "invoices", "pay", draft, "--amount", "abc").requireCode(t, 2)
	assert.Contains(t, r.stderr, "not a positive amount")

	other := firstWith(t, c, invoicing.InvoiceStatusDraft)
	run(t, m.env(), "invoices", "void", other).requireCode(t, 0)
	inv, err = c.Invoices.Get(t.Context(), other)
	require.NoError(t, err)
	assert.Equal(t, invoicing.InvoiceStatusVoided, inv.Status)

	sent := firstQuoteWith(t, c, invoicing.QuoteStatusSent)
	r = run(t, m.env(), "quotes", "accept", sent, "--by", "Ann Client").requireCode(t, 0)
	assert.Regexp(t, `It became invoice INV-\d{4} \(draft, [0-9a-f-]{36}\)\.`, r.stdout)
	assert.Regexp(t, `(?m)^  quote\.accepted +-> `, r.stdout)
	assert.Regexp(t, `(?m)^  invoice\.created +-> `, r.stdout)
	accepted := verifiedEvents(t, rc, m.secrets[0])[webhooks.EventQuoteAccepted]
	require.Len(t, accepted, 1)
	assert.Equal(t, "Ann Client", accepted[0].(*webhooks.QuoteAccepted).AcceptedBy)

	draftQuote := firstQuoteWith(t, c, invoicing.QuoteStatusDraft)
	r = run(t, m.env(), "quotes", "decline", draftQuote).requireCode(t, 0)
	assert.Contains(t, r.stdout, "No event fired")
	q, err := c.Quotes.Get(t.Context(), draftQuote)
	require.NoError(t, err)
	assert.Equal(t, invoicing.QuoteStatusDeclined, q.Status)
}

func TestMockAdvanceMakesInvoicesOverdueAndQuotesExpire(t *testing.T) {
	rc := newRecorder(t, http.StatusOK)
	m := startMock(t, "--seed", "3", "--webhook", rc.URL)
	c := m.client(t, m.fullKey)
	awaiting := firstWith(t, c, invoicing.InvoiceStatusAwaitingPayment)
	sent := firstQuoteWith(t, c, invoicing.QuoteStatusSent)

	r := run(t, m.env(), "mock", "advance", "45d").requireCode(t, 0)
	assert.Regexp(t, `(?m)^\d+ invoices? now overdue, \d+ quotes? expired\.$`, r.stdout)
	inv, err := c.Invoices.Get(t.Context(), awaiting)
	require.NoError(t, err)
	assert.Equal(t, invoicing.InvoiceStatusOverdue, inv.Status)
	q, err := c.Quotes.Get(t.Context(), sent)
	require.NoError(t, err)
	assert.Equal(t, invoicing.QuoteStatusExpired, q.Status)

	// Deliveries after the advance are signed with the real time: a
	// receiver checking the timestamp on its own clock accepts them.
	run(t, m.env(), "trigger", "invoice.created").requireCode(t, 0)
	events := verifiedEvents(t, rc, m.secrets[0])
	assert.Len(t, events[webhooks.EventInvoiceCreated], 1)

	r = run(t, m.env(), "mock", "advance", "soon").requireCode(t, 2)
	assert.Contains(t, r.stderr, "soon")
}

func TestMockOnlyCommandsRefuseAnythingElse(t *testing.T) {
	notMock := newRecorder(t, http.StatusNotFound)
	env := []string{"INVOICING_BASE_URL=" + notMock.URL + "/api/v1/external", "INVOICING_API_KEY=sk_live_abcdefgh"}
	for _, args := range [][]string{
		{"invoices", "pay", invoicingtest.SeedClientID},
		{"quotes", "accept", invoicingtest.SeedClientID},
		{"mock", "advance", "1d"},
	} {
		r := run(t, env, args...).requireCode(t, 1)
		assert.Contains(t, r.stderr, "not an invoicing mock", args)
		assert.Contains(t, r.stderr, "works only against 'invoicing mock'", args)
	}
	m := startMock(t)
	r := run(t, []string{"INVOICING_BASE_URL=" + m.baseURL, "INVOICING_API_KEY=" + m.readOnlyKey}, "invoices", "send", invoicingtest.SeedClientID).requireCode(t, 1)
	assert.Contains(t, r.stderr, "answered 403")
}

func TestMockPrintsAnExportLineForEveryVariable(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "mock.env")
	m := startMock(t, "--webhook", "http://127.0.0.1:9/webhooks", "--env-file", envFile)
	want := []string{
		"export INVOICING_BASE_URL=" + m.baseURL,
		"export INVOICING_API_KEY=" + m.fullKey,
		"export INVOICING_WEBHOOK_SECRET=" + m.secrets[0],
	}
	for _, l := range want {
		assert.Contains(t, m.banner, "\n  "+l+"\n")
	}
	b, err := os.ReadFile(envFile)
	require.NoError(t, err)
	assert.Equal(t, "# Written by invoicing mock; removed when it stops.\n"+strings.Join(want, "\n")+"\n", string(b))
	fi, err := os.Stat(envFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "it holds the key: owner only")
	code, _ := m.stop()
	assert.Equal(t, 0, code)
	assert.NoFileExists(t, envFile, "removed on exit")

	// A secret in the environment signs, and is never printed.
	p := start(t, []string{"INVOICING_WEBHOOK_SECRET=" + testSecret}, "mock", "--addr", "127.0.0.1:0", "--webhook", "http://127.0.0.1:9/webhooks")
	_, before := p.waitFor("Serving until Ctrl-C.")
	banner := strings.Join(before, "\n")
	assert.NotContains(t, banner, testSecret)
	assert.Contains(t, banner, "secret       from $INVOICING_WEBHOOK_SECRET")
	assert.NotContains(t, banner, "export INVOICING_WEBHOOK_SECRET")

	r := run(t, []string{"INVOICING_WEBHOOK_SECRET=not-hex"}, "mock", "--addr", "127.0.0.1:0").requireCode(t, 2)
	assert.Contains(t, r.stderr, "not a signing secret")
}

// firstWith returns the id of the first invoice in status.
func firstWith(t *testing.T, c *invoicing.Client, status invoicing.InvoiceStatus) string {
	t.Helper()
	inv, err := invoicing.First(c.Invoices.List(t.Context(), &invoicing.InvoiceListParams{Status: status}))
	require.NoError(t, err, "a %s invoice", status)
	return inv.ID
}

// firstQuoteWith returns the id of the first quote in status.
func firstQuoteWith(t *testing.T, c *invoicing.Client, status invoicing.QuoteStatus) string {
	t.Helper()
	q, err := invoicing.First(c.Quotes.List(t.Context(), &invoicing.QuoteListParams{Status: status}))
	require.NoError(t, err, "a %s quote", status)
	return q.ID
}

// regexpLine returns the first group of pattern's first match in s.
func regexpLine(t *testing.T, s, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	require.NotNil(t, m, "no %s in:\n%s", pattern, s)
	return m[1]
}
