package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// testSecret is a signing secret of the service's form.
const testSecret = "3f1c9a7e5b2d4086af1e7c3b9d5a2f608e4c1b7a3d9f5e2c6b0a8d4f1e7c3b95"

var deliveryIDPattern = regexp.MustCompile(`delivery ([0-9a-f-]{36})`)

// startListen starts "invoicing listen" on a free port and returns it with
// its URL.
func startListen(t *testing.T, args ...string) (*proc, string) {
	t.Helper()
	p := start(t, nil, append([]string{"listen", "--addr", "127.0.0.1:0", "--secret", testSecret}, args...)...)
	line, _ := p.waitFor("Listening on ")
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(line)
	require.NotEmpty(t, url, line)
	if len(args) > 0 {
		p.waitFor("Forwarding verified deliveries")
	}
	return p, url
}

// trigger runs "invoicing trigger" and returns its result and the delivery
// id it printed.
func trigger(t *testing.T, args ...string) (result, string) {
	t.Helper()
	r := run(t, nil, append([]string{"trigger"}, args...)...)
	m := deliveryIDPattern.FindStringSubmatch(r.stdout)
	require.NotNil(t, m, "no delivery id in %q (stderr %q)", r.stdout, r.stderr)
	return r, m[1]
}

func TestTriggerIntoListenIsAcceptedForEveryEventType(t *testing.T) {
	listen, url := startListen(t)
	lines := map[webhooks.EventType]string{}
	for _, event := range allEventTypes {
		r, id := trigger(t, string(event), "--to", url+"hooks", "--secret", testSecret)
		r.requireCode(t, 0)
		assert.Contains(t, r.stdout, "200 OK in ", event)
		line, _ := listen.waitFor("delivery=" + id)
		assert.Contains(t, line, " "+string(event)+" delivery="+id, "listen prints the type and the delivery id")
		lines[event] = line
	}
	assert.Regexp(t, `payment_id=[0-9a-f-]{36} invoice_id=[0-9a-f-]{36} amount=500\.00 payment_method=bank_transfer$`,
		lines[webhooks.EventPaymentReceived], "and the key fields")
	assert.Regexp(t, `quote_number=QU-0137 status=accepted total=5609\.34 accepted_by="Jane M. Citizen" invoice_number=INV-0413$`,
		lines[webhooks.EventQuoteAccepted])
	code, _ := listen.stop()
	assert.Equal(t, 0, code)
}

func TestListenRefusesTheBadVariants(t *testing.T) {
	listen, url := startListen(t)
	for _, variant := range []string{"--stale", "--tamper", "--wrong-secret"} {
		t.Run(variant, func(t *testing.T) {
			r, _ := trigger(t, "quote.accepted", "--to", url, "--secret", testSecret, variant)
			r.requireCode(t, 1)
			assert.Contains(t, r.stdout, "401 Unauthorized in ")
			assert.Contains(t, r.stderr, "the receiver answered 401")
		})
	}
	// A good delivery after them is printed; the refused ones were not.
	_, id := trigger(t, "test", "--to", url, "--secret", testSecret)
	_, before := listen.waitFor("delivery=" + id)
	assert.Empty(t, before, "no line for the refused deliveries")
	listen.stop()
	refusals := listen.stderrText()
	assert.Equal(t, 3, strings.Count(refusals, "status=401"), refusals)
	assert.Contains(t, refusals, "timestamp outside tolerance")
	assert.Equal(t, 2, strings.Count(refusals, "signature mismatch"))
}

// recorder is a receiver that keeps each request and answers status.
type recorder struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
	bodies  [][]byte
	paths   []string
	status  int
}

func newRecorder(t *testing.T, status int) *recorder {
	rc := &recorder{status: status}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.headers, rc.bodies = append(rc.headers, r.Header.Clone()), append(rc.bodies, b)
		rc.paths = append(rc.paths, r.URL.Path)
		status := rc.status
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *recorder) setStatus(status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status = status
}

func (rc *recorder) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.bodies)
}

func (rc *recorder) last(t *testing.T) (http.Header, []byte) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	require.NotEmpty(t, rc.bodies)
	return rc.headers[len(rc.headers)-1], rc.bodies[len(rc.bodies)-1]
}

func TestTriggerSendsWhatTheServiceSends(t *testing.T) {
	rc := newRecorder(t, http.StatusNoContent)
	v, err := webhooks.NewVerifier(testSecret)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, event := range allEventTypes {
		_, id := trigger(t, string(event), "--to", rc.URL, "--secret", testSecret)
		h, body := rc.last(t)
		assert.Equal(t, "application/json", h.Get("Content-Type"))
		assert.Equal(t, "Service-Webhooks/1.0", h.Get("User-Agent"))
		assert.Equal(t, string(event), h.Get(webhooks.HeaderEvent))
		assert.Equal(t, id, h.Get(webhooks.HeaderDelivery))
		assert.False(t, seen[id], "a fresh delivery id each time")
		seen[id] = true
		assert.Regexp(t, `^sha256=[0-9a-f]{64}$`, h.Get(webhooks.HeaderSignature))
		d, err := v.ParseDelivery(h, body)
		require.NoError(t, err, "%s: %s", event, body)
		_, raw := d.Event.(*webhooks.RawEvent)
		assert.False(t, raw, "%s parses into its typed event", event)
		sample, err := webhooks.SampleBody(event, time.Now())
		require.NoError(t, err)
		assert.Equal(t, memberNames(t, sample), memberNames(t, body), "%s: the body is webhooks.SampleBody's", event)
	}
}

// memberNames lists the top-level member names of a JSON object, in order.
func memberNames(t *testing.T, body []byte) []string {
	t.Helper()
	o, err := jsonobj.Parse(body)
	require.NoError(t, err)
	names := make([]string, len(o))
	for i, f := range o {
		names[i] = f.Key
	}
	return names
}

func TestTriggerSetOverridesTopLevelFields(t *testing.T) {
	rc := newRecorder(t, http.StatusOK)
	t.Setenv(envWebhookSecret, "") // the secret comes from the environment below
	r := run(t, []string{envWebhookSecret + "=" + testSecret}, "trigger", "invoice.paid", "--to", rc.URL,
		"--set", `amount_paid="12.50"`, "--set", "status=paid", "--set", "count=3", "--set", `extra={"a":[1,true]}`)
	r.requireCode(t, 0)
	h, body := rc.last(t)
	var got map[string]any
	require.NoError(t, json.Unmarshal(body, &got))
	assert.Equal(t, "12.50", got["amount_paid"], "a JSON string stays a string")
	assert.Equal(t, "paid", got["status"], "text that is not JSON is a string")
	assert.Equal(t, float64(3), got["count"], "a JSON number is a number")
	assert.Equal(t, map[string]any{"a": []any{float64(1), true}}, got["extra"])
	v, err := webhooks.NewVerifier(testSecret)
	require.NoError(t, err)
	d, err := v.ParseDelivery(h, body)
	require.NoError(t, err)
	assert.Equal(t, "12.50", d.Event.(*webhooks.InvoicePaid).AmountPaid.StringFixed(2))
}

func TestTriggerSetSendsAJSONValueAsGiven(t *testing.T) {
	rc := newRecorder(t, http.StatusOK)
	r := run(t, nil, "trigger", "invoice.paid", "--to", rc.URL, "--secret", testSecret,
		"--set", `extra={"a":1,"a":2}`, "--set", `spaced= [1, 2] `)
	r.requireCode(t, 0)
	_, body := rc.last(t)
	assert.Contains(t, string(body), `"extra":{"a":1,"a":2}`, "a name given twice is the receiver's to judge")
	assert.Contains(t, string(body), `"spaced":[1,2]`)
}

func TestTriggerFailsOnANon2xxAnswer(t *testing.T) {
	rc := newRecorder(t, http.StatusInternalServerError)
	r, _ := trigger(t, "test", "--to", rc.URL, "--secret", testSecret)
	r.requireCode(t, 1)
	assert.Contains(t, r.stdout, "500 Internal Server Error in ")
}

func TestListenForwardsVerifiedDeliveriesUnchanged(t *testing.T) {
	target := newRecorder(t, http.StatusOK)
	listen, url := startListen(t, "--forward", target.URL+"/app/hooks")

	r, id := trigger(t, "quote.viewed", "--to", url+"in", "--secret", testSecret)
	r.requireCode(t, 0)
	line, _ := listen.waitFor("delivery=" + id)
	assert.Contains(t, line, "-> 200 in ")
	h, body := target.last(t)
	assert.Equal(t, id, h.Get(webhooks.HeaderDelivery))
	assert.Equal(t, "quote.viewed", h.Get(webhooks.HeaderEvent))
	assert.Equal(t, "Service-Webhooks/1.0", h.Get("User-Agent"))
	v, err := webhooks.NewVerifier(testSecret)
	require.NoError(t, err)
	assert.NoError(t, v.Verify(h, body), "the same body bytes under the same timestamp and signature")

	// A failing target makes listen answer 500, which trigger reports.
	target.setStatus(http.StatusServiceUnavailable)
	r, id = trigger(t, "test", "--to", url, "--secret", testSecret)
	r.requireCode(t, 1)
	assert.Contains(t, r.stdout, "500 Internal Server Error")
	line, _ = listen.waitFor("delivery=" + id)
	assert.Contains(t, line, "-> 503")

	// A refused delivery is not forwarded.
	before := target.count()
	r, _ = trigger(t, "test", "--to", url, "--secret", testSecret, "--wrong-secret")
	r.requireCode(t, 1)
	assert.Equal(t, before, target.count())
}

// CI asserts that a receiver refuses a bad delivery: --expect makes the
// refusal the success.
func TestTriggerExpectMakesAGivenStatusTheSuccess(t *testing.T) {
	listen, url := startListen(t)
	r, _ := trigger(t, "invoice.paid", "--to", url, "--secret", testSecret, "--tamper", "--expect", "401")
	r.requireCode(t, 0)
	assert.Regexp(t, `(?m)^401 Unauthorized in \S+, as expected$`, r.stdout)
	assert.Empty(t, r.stderr)

	r, _ = trigger(t, "invoice.paid", "--to", url, "--secret", testSecret, "--expect", "401")
	r.requireCode(t, 1)
	assert.Contains(t, r.stdout, "200 OK in ")
	assert.Contains(t, r.stderr, "invoicing: the receiver answered 200 OK, not the expected 401 Unauthorized")

	r, _ = trigger(t, "test", "--to", url, "--secret", testSecret, "--expect", "200")
	r.requireCode(t, 0)
	listen.stop()
}

func TestListFlagsIgnoreCase(t *testing.T) {
	m := startMock(t, "--seed", "10")
	for _, c := range [][2][]string{
		{{"items", "list", "--type", "sales", "--csv"}, {"items", "list", "--type", "SALES", "--csv"}},
		{{"invoices", "list", "--status", "PAID", "--csv"}, {"invoices", "list", "--status", "paid", "--csv"}},
		{{"quotes", "list", "--status", "Sent", "--csv"}, {"quotes", "list", "--status", "sent", "--csv"}},
	} {
		got := run(t, m.env(), c[0]...).requireCode(t, 0).stdout
		want := run(t, m.env(), c[1]...).requireCode(t, 0).stdout
		assert.Equal(t, want, got, "%q", c[0])
		assert.Greater(t, strings.Count(got, "\n"), 1, "%q lists something", c[0])
	}
}
