package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/testkit"
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

func TestMockAnswersTheSDK(t *testing.T) {
	m := startMock(t, "--seed", "7")
	assert.Contains(t, m.banner, "not real", "the banner says the keys are the fake's")
	c := m.client(t, m.fullKey)

	all := testkit.Collect(t, c.Invoices.List(t.Context(), nil))
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
	quotes := testkit.Collect(t, c.Quotes.List(t.Context(), nil))
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
	again := testkit.Collect(t, other.client(t, other.fullKey).Invoices.List(t.Context(), nil))
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
	invoices := testkit.Collect(t, c.Invoices.List(t.Context(), nil))
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

// practiceProc is a running "invoicing mock --business ..." and what its
// banner said of each business.
type practiceProc struct {
	*proc
	banner, baseURL string
	keys, secrets   map[string]string // by business name
	mirrorLines     map[string]string // the line that adds each to invoicing-mirror
}

var mirrorLine = regexp.MustCompile(`^  (INVOICING_API_KEY=\S+ INVOICING_WEBHOOK_SECRET=\S+ invoicing-mirror businesses add (\S+))$`)

// startPractice starts "invoicing mock --addr 127.0.0.1:0 args..." and
// reads its banner.
func startPractice(t *testing.T, env []string, args ...string) *practiceProc {
	t.Helper()
	p := start(t, env, append([]string{"mock", "--addr", "127.0.0.1:0"}, args...)...)
	last, before := p.waitFor("Serving until Ctrl-C.")
	m := &practiceProc{proc: p, banner: strings.Join(append(before, last), "\n"),
		keys: map[string]string{}, secrets: map[string]string{}, mirrorLines: map[string]string{}}
	business := ""
	for _, l := range before {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "base URL "):
			m.baseURL = f[2]
		case businessName.MatchString(l):
			business = l
		case strings.HasPrefix(l, "  full key "):
			m.keys[business] = f[2]
		case strings.HasPrefix(l, "  webhook secret "):
			m.secrets[business] = f[2]
		case mirrorLine.MatchString(l):
			g := mirrorLine.FindStringSubmatch(l)
			m.mirrorLines[g[2]] = g[1]
		}
	}
	require.NotEmpty(t, m.baseURL, m.banner)
	return m
}

// env configures the commands for the mock, with the key of each business
// under its own variable.
func (m *practiceProc) env() []string {
	env := []string{"INVOICING_BASE_URL=" + m.baseURL}
	for name, key := range m.keys {
		env = append(env, envFor("INVOICING_API_KEY", name)+"="+key)
	}
	return env
}

func TestMockServesSeveralBusinessesBehindOneURL(t *testing.T) {
	rc := newRecorder(t, http.StatusOK)
	envFile := filepath.Join(t.TempDir(), "practice.env")
	m := startPractice(t, nil, "--business", "acme", "--business", "globex", "--business", "initech", "--seed", "3",
		"--webhook", rc.URL+"/webhooks/{business}", "--env-file", envFile)
	names := []string{"acme", "globex", "initech"}
	for _, name := range names {
		require.Regexp(t, `^sk_test_`, m.keys[name], m.banner)
		require.Regexp(t, `^[0-9a-f]{64}$`, m.secrets[name], m.banner)
		assert.Contains(t, m.banner, "  webhook        "+rc.URL+"/webhooks/"+name+" (all events)")
	}
	assert.Len(t, map[string]bool{m.keys["acme"]: true, m.keys["globex"]: true, m.keys["initech"]: true}, 3, "a key each")
	assert.Len(t, map[string]bool{m.secrets["acme"]: true, m.secrets["globex"]: true, m.secrets["initech"]: true}, 3, "a secret each")

	// Each business sees its own samples, and none of the others' records.
	ctx := t.Context()
	totals := map[string]string{}
	var acmeInvoice string
	for _, name := range names {
		c, err := invoicing.NewClient(m.baseURL, m.keys[name], invoicing.WithMaxRetries(0))
		require.NoError(t, err)
		invoices := testkit.Collect(t, c.Invoices.List(ctx, nil))
		require.GreaterOrEqual(t, len(invoices), 3, "%s: three samples (and an accepted quote's invoice)", name)
		totals[name] = invoices[0].Total.String()
		if name == "acme" {
			acmeInvoice = invoices[0].ID
		} else {
			_, err := c.Invoices.Get(ctx, acmeInvoice)
			require.ErrorIs(t, err, invoicing.ErrNotFound, "%s's key never sees acme's invoice", name)
		}
	}
	assert.Len(t, map[string]bool{totals["acme"]: true, totals["globex"]: true, totals["initech"]: true}, 3, "samples of their own: %v", totals)

	// The banner's lines add each business to invoicing-mirror as they are:
	// here to a stand-in that shows what the mirror would read.
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "invoicing-mirror"), []byte("#!/bin/sh\necho \"$INVOICING_API_KEY $INVOICING_WEBHOOK_SECRET $*\"\n"), 0o755))
	for _, name := range names {
		line := m.mirrorLines[name]
		require.NotEmpty(t, line, "a line for %s in:\n%s", name, m.banner)
		out, err := exec.Command("bash", "-c", "PATH="+bin+":$PATH; "+line).Output()
		require.NoError(t, err)
		assert.Equal(t, m.keys[name]+" "+m.secrets[name]+" businesses add "+name+"\n", string(out))
	}

	// The env file exports each business's key and secret, and the first
	// business's under the plain names.
	out, err := exec.Command("bash", "-c", `. "$0"; echo "$INVOICING_API_KEY $INVOICING_WEBHOOK_SECRET $INVOICING_API_KEY_GLOBEX $INVOICING_WEBHOOK_SECRET_GLOBEX $INVOICING_API_KEY_INITECH"`, envFile).Output()
	require.NoError(t, err)
	assert.Equal(t, strings.Join([]string{m.keys["acme"], m.secrets["acme"], m.keys["globex"], m.secrets["globex"], m.keys["initech"]}, " ")+"\n", string(out))

	// trigger --business makes the change in that business: its endpoint
	// alone gets the events, signed with its secret.
	before := rc.count()
	r := run(t, m.env(), "trigger", "invoice.paid", "--business", "globex").requireCode(t, 0)
	assert.Contains(t, r.stdout, "On business globex of the mock at "+m.baseURL+": created invoice INV-0004")
	rc.mu.Lock()
	paths, headers, bodies := rc.paths[before:], rc.headers[before:], rc.bodies[before:]
	rc.mu.Unlock()
	require.Len(t, paths, 3, "invoice.created, payment.received, invoice.paid")
	v, err := webhooks.NewVerifier(m.secrets["globex"])
	require.NoError(t, err)
	for i, p := range paths {
		assert.Equal(t, "/webhooks/globex", p)
		_, err := v.ParseDelivery(headers[i], bodies[i])
		assert.NoError(t, err, "signed with globex's secret")
	}

	// The reads and the mock-only commands take --business too.
	r = run(t, m.env(), "invoices", "list", "--business", "initech", "--csv").requireCode(t, 0)
	assert.Equal(t, 1+4, strings.Count(r.stdout, "\n"), r.stdout)
	r = run(t, m.env(), "mock", "advance", "1d", "--business", "initech").requireCode(t, 0)
	assert.Contains(t, r.stdout, "The mock's clock reads ")
	assert.Contains(t, r.stdout, "In business initech: ")
	r = run(t, m.env(), "invoices", "list", "--business", "hooli").requireCode(t, 2)
	assert.Contains(t, r.stderr, "INVOICING_API_KEY_HOOLI is not set: with --business hooli it holds that business's API key")
	wrong := append(m.env(), "INVOICING_API_KEY_HOOLI="+m.keys["acme"])
	r = run(t, wrong, "webhooks", "list", "--business", "hooli").requireCode(t, 1)
	assert.Contains(t, r.stderr, "INVOICING_API_KEY_HOOLI holds a key of business acme on the mock at "+m.baseURL+", not of business hooli")
}

func TestWebhooksCommandManagesEachBusinesssEndpoints(t *testing.T) {
	m := startPractice(t, nil, "--businesses", "2")
	assert.Contains(t, m.banner, "businesses     business1, business2:")
	rc := newRecorder(t, http.StatusOK)
	env := m.env()

	r := run(t, env, "webhooks", "list", "--business", "business2").requireCode(t, 0)
	assert.Equal(t, "No webhook endpoints on business business2 of the mock at "+m.baseURL+".\n", r.stdout)
	r = run(t, env, "webhooks", "add", rc.URL+"/b2,invoice.created,quote.sent", "--business", "business2").requireCode(t, 0)
	assert.Contains(t, r.stdout, "to business business2 of the mock at "+m.baseURL+": "+rc.URL+"/b2, receiving invoice.created, quote.sent.")
	assert.Contains(t, r.stdout, "export INVOICING_WEBHOOK_SECRET_BUSINESS2="+m.secrets["business2"], "the business's own secret")
	r = run(t, env, "webhooks", "list", "--business", "business2").requireCode(t, 0)
	assert.Regexp(t, `(?m)^[0-9a-f-]{36}  `+regexp.QuoteMeta(rc.URL)+`/b2  invoice\.created, quote\.sent  false$`, r.stdout)
	r = run(t, env, "webhooks", "list", "--business", "business1", "--json").requireCode(t, 0)
	assert.Empty(t, r.stdout, "business1 has none")

	run(t, env, "trigger", "invoice.created", "--business", "business2").requireCode(t, 0)
	assert.Equal(t, 1, rc.count())
	r = run(t, env, "webhooks", "remove", rc.URL+"/b2", "--business", "business1").requireCode(t, 1)
	assert.Contains(t, r.stderr, "business business1 of the mock at "+m.baseURL+" has no webhook endpoint "+rc.URL+"/b2")
	r = run(t, env, "webhooks", "remove", rc.URL+"/b2", "--business", "business2").requireCode(t, 0)
	assert.Regexp(t, `^Removed webhook endpoint [0-9a-f-]{36} \(`+regexp.QuoteMeta(rc.URL)+`/b2\)\.\n$`, r.stdout)
	r = run(t, env, "webhooks", "list", "--business", "business2", "--json").requireCode(t, 0)
	assert.Empty(t, r.stdout)
}

func TestWebhooksCommandOnAMockOfOneBusiness(t *testing.T) {
	m := startMock(t)
	rc := newRecorder(t, http.StatusOK)
	env := append(m.env(), "INVOICING_WEBHOOK_SECRET="+testSecret)
	r := run(t, env, "webhooks", "add", rc.URL).requireCode(t, 0)
	assert.Contains(t, r.stdout, "It signs with $INVOICING_WEBHOOK_SECRET.")
	assert.NotContains(t, r.stdout, testSecret)
	id := regexpLine(t, r.stdout, `Added webhook endpoint ([0-9a-f-]{36}) to the mock at `)
	run(t, env, "trigger", "test").requireCode(t, 0)
	assert.Len(t, verifiedEvents(t, rc, testSecret)[webhooks.EventTest], 1)
	run(t, env, "webhooks", "remove", id).requireCode(t, 0)
	assert.Empty(t, m.webhooks(t))
	r = run(t, env, "webhooks", "remove", id).requireCode(t, 1)
	assert.Contains(t, r.stderr, "has no webhook endpoint "+id)
}

func TestMockOfSeveralBusinessesSurvivesARestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "practice.json")
	args := []string{"--business", "acme", "--business", "globex", "--state", state}
	m := startPractice(t, nil, args...)
	c, err := invoicing.NewClient(m.baseURL, m.keys["globex"], invoicing.WithMaxRetries(0))
	require.NoError(t, err)
	_, err = c.Clients.Create(t.Context(), &invoicing.ContactCreateParams{Name: "Made before the restart"})
	require.NoError(t, err)
	code, rest := m.stop()
	require.Equal(t, 0, code, m.stderrText())
	assert.Contains(t, rest, "Saved the data to "+state)

	// Same businesses, same keys, same secrets, same data; a business's
	// secret from the environment wins, and is not printed.
	again := startPractice(t, []string{"INVOICING_WEBHOOK_SECRET_ACME=" + testSecret}, args...)
	assert.Contains(t, again.banner, "restored from "+state)
	assert.Equal(t, m.keys, again.keys)
	assert.Equal(t, m.secrets["globex"], again.secrets["globex"])
	assert.Contains(t, again.banner, "  webhook secret from $INVOICING_WEBHOOK_SECRET_ACME")
	assert.Contains(t, again.mirrorLines["acme"], `INVOICING_WEBHOOK_SECRET="$INVOICING_WEBHOOK_SECRET_ACME" invoicing-mirror businesses add acme`)
	assert.NotContains(t, again.banner, testSecret)
	c, err = invoicing.NewClient(again.baseURL, m.keys["globex"], invoicing.WithMaxRetries(0))
	require.NoError(t, err)
	clients := testkit.Collect(t, c.Clients.List(t.Context(), nil))
	assert.Equal(t, "Made before the restart", clients[len(clients)-1].Name)
	code, _ = again.stop()
	require.Equal(t, 0, code)

	// Other businesses, or none, cannot take that file.
	r := run(t, nil, "mock", "--addr", "127.0.0.1:0", "--business", "acme", "--state", state).requireCode(t, 1)
	assert.Contains(t, r.stderr, "it holds businesses acme, globex")
	r = run(t, nil, "mock", "--addr", "127.0.0.1:0", "--state", state).requireCode(t, 1)
	assert.Contains(t, r.stderr, "it holds the state of several businesses")
}

func TestMockAddressFromTheEnvironment(t *testing.T) {
	p := start(t, []string{"INVOICING_MOCK_ADDR=127.0.0.1:0"}, "mock")
	line, _ := p.waitFor("base URL ")
	assert.Regexp(t, `^base URL +http://127\.0\.0\.1:\d+/api/v1/external$`, line)
	assert.NotContains(t, line, ":4010/")
	assert.Equal(t, invoicingtest.BasePath, "/api/v1/external")
}
