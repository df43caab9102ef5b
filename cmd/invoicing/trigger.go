package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// envWebhookSecret names the environment variable trigger and listen read
// the signing secret from when --secret is not given.
const envWebhookSecret = "INVOICING_WEBHOOK_SECRET"

// staleAge is how old --stale makes the timestamp: twice the five minutes
// receivers are advised to accept.
const staleAge = 10 * time.Minute

// deliveryTimeout is how long trigger waits for the receiver: the response
// time the service allows.
const deliveryTimeout = 30 * time.Second

// allEventTypes are the event types trigger sends: the 13 events of the
// API and test.
var allEventTypes = append(invoicingtest.AllEvents(), webhooks.EventTest)

var triggerHelp = `
Usage: invoicing trigger EVENT [--business NAME] [--to URL [--keep]] [--secret S] [--expect STATUS]
       invoicing trigger EVENT --to URL [--secret S] [--set FIELD=VALUE]... [--stale] [--tamper] [--wrong-secret] [--expect STATUS]

Against 'invoicing mock' (INVOICING_BASE_URL and INVOICING_API_KEY as the
mock printed them), trigger makes the real change that raises EVENT: it
creates a new invoice, quote, bill or client through the API and changes it
through the mock's control endpoints (sends, pays, approves, accepts...), so
the mock signs and delivers EVENT, and the events before it, naming records
that exist. It prints what it did and how each webhook endpoint answered
each event. --business NAME makes the change in that business of a mock of
several (its key is $` + envAPIKey + `_NAME).

--to URL delivers to URL only, and only its answers decide the exit status:
URL is made an endpoint of the mock's business for the trigger (signing with
--secret, else $` + envWebhookSecret + ` or, with --business, its
$` + envWebhookSecret + `_NAME, when set; else with the secret the mock
chooses) and removed when the trigger is done, so that it receives no later
event. When URL is an endpoint already, it is used as it is, its secret
changed for the trigger only when one is given. --keep keeps what --to
added or changed.

Anywhere else, or with --set, --stale, --tamper or --wrong-secret, it sends
one made-up delivery of EVENT to --to URL itself, as the service would: a
realistic JSON body (fresh made-up ids, times of now, money as strings) with
Content-Type, User-Agent Service-Webhooks/1.0, X-Service-Event, a fresh
X-Service-Delivery id, X-Service-Timestamp and an X-Service-Signature
"sha256=..." made with the signing secret (--secret, else
$` + envWebhookSecret + `). The ids name no record: a receiver that fetches
them gets 404.

Exit status: 0 when every delivery of EVENT was answered 2xx (with
--expect STATUS, STATUS); 1 otherwise, or when the mock or the receiver
cannot be reached; 2 for a usage mistake (an unknown event, a bad URL, no
secret for a made-up delivery, no endpoint of the mock receiving EVENT).

EVENT is one of:
  invoice.created  invoice.sent  invoice.updated  invoice.paid
  bill.created  bill.approved  contact.created  payment.received
  quote.created  quote.sent  quote.viewed  quote.accepted  quote.unaccepted
  test

--set changes a top-level field of the made-up body, or adds one. VALUE is
read as JSON when it is valid JSON, else taken as a string: --set
status=paid, --set view_count=3, --set total='"99.00"' (money is a string in
webhooks; --set total=99.00 sends a number).

The bad variants a receiver must refuse (with 401):
  --stale         sign with a timestamp 10 minutes old
  --tamper        change the body after signing
  --wrong-secret  sign with another, random secret

--expect STATUS makes the receiver's answer STATUS (an HTTP status code
from 100 to 599) the success, so that CI can assert that a bad delivery is
refused.

Examples:
  invoicing trigger quote.accepted
  invoicing trigger invoice.paid --business globex
  invoicing trigger invoice.paid --to http://127.0.0.1:8080/webhooks
  invoicing trigger invoice.paid --to http://127.0.0.1:8080/webhooks --tamper --expect 401
`

// trigger runs "invoicing trigger".
func (c *cli) trigger(ctx context.Context, args []string) error {
	fs := newFlags("trigger")
	to := fs.String("to", "", "send to the receiver at `URL` (http or https)")
	secret := fs.String("secret", "", "sign with the signing secret `S` (default $"+envWebhookSecret+")")
	stale := fs.Bool("stale", false, "sign with a timestamp 10 minutes old")
	tamper := fs.Bool("tamper", false, "change the body after signing")
	wrongSecret := fs.Bool("wrong-secret", false, "sign with another, random secret")
	keep := fs.Bool("keep", false, "on a mock, keep the endpoint --to added (or its secret --secret set) afterwards")
	expect := 0 // any 2xx
	fs.Func("expect", "exit 0 when the receiver answers `STATUS` (such as 401), 1 otherwise", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			return fmt.Errorf("%q is not an HTTP status code (100 to 599)", v)
		}
		expect = n
		return nil
	})
	sets := repeatedFlag(fs, "set", "set `FIELD=VALUE` at the top of the body (repeatable; VALUE is JSON or a string)", parseSet)
	rest, err := c.parseWithBusiness(fs, triggerHelp, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) != 1:
		return usagef("trigger", "trigger takes one event type, such as invoice.created")
	case !webhooks.EventType(rest[0]).Known():
		return usagef("trigger", "unknown event type %q%s; use one of %s", rest[0], didYouMean(rest[0], eventNames(allEventTypes)), eventList(allEventTypes))
	}
	if *to != "" {
		if err := checkHTTPURL("--to", *to, "trigger"); err != nil {
			return err
		}
	}
	if *secret == "" {
		*secret = c.getenv(c.secretVar())
	}
	event := webhooks.EventType(rest[0])
	madeUp := len(*sets) > 0 || *stale || *tamper || *wrongSecret
	note := "the ids are made up: INVOICING_BASE_URL names no mock, and a receiver that fetches them gets 404"
	switch {
	case madeUp:
		note = "the ids are made up, as --set, --stale, --tamper and --wrong-secret make a delivery by hand"
	case c.getenv(envBaseURL) != "":
		m, err := c.probeMock(ctx, "trigger")
		if err == nil {
			return c.triggerOnMock(ctx, m, event, mockTarget{url: *to, secret: *secret, keep: *keep}, expect)
		}
		if !errors.Is(err, errNotMock) {
			return err
		}
		note = "the ids are made up: " + strings.TrimPrefix(err.Error(), "trigger: ")
	}
	if err := checkHTTPURL("--to", *to, "trigger"); err != nil {
		return err
	}
	if *secret == "" {
		return usagef("trigger", "no signing secret: give --secret or set %s", c.secretVar())
	}
	fmt.Fprintf(c.stdout, "Sending a delivery made by hand (%s).\n", note)

	now := time.Now()
	td := webhooks.TestDelivery{Secret: *secret, Type: event, DeliveryID: uuid.NewString(), Timestamp: now}
	if td.Body, err = webhooks.SampleBody(event, now); err != nil {
		return err
	}
	var payload jsonobj.Object // the body as members, for --set and --tamper
	if len(*sets) > 0 || *tamper {
		if payload, err = jsonobj.Parse(td.Body); err != nil {
			return err
		}
	}
	for _, f := range *sets {
		payload = payload.Set(f.Key, f.Value)
	}
	if len(*sets) > 0 {
		if td.Body, err = json.Marshal(payload, payloadOptions); err != nil {
			return err
		}
	}
	var notes []string
	if *stale {
		td.Timestamp = now.Add(-staleAge)
		notes = append(notes, "timestamp 10 minutes old")
	}
	if *wrongSecret {
		td.Secret = randomSecret()
		notes = append(notes, "signed with a wrong secret")
	}
	header := td.Header()
	body := td.Body
	if *tamper {
		key := tamperField(payload)
		if body, err = json.Marshal(payload.Set(key, tamperedValue(key)), payloadOptions); err != nil {
			return err
		}
		notes = append(notes, key+" changed after signing")
	}
	return c.deliver(ctx, *to, header, body, event, td.DeliveryID, notes, expect)
}

// deliver POSTs one delivery and prints the outcome. An answer other than
// expect (any 2xx when expect is 0) is an error.
func (c *cli) deliver(ctx context.Context, to string, header http.Header, body []byte, event webhooks.EventType, id string, notes []string, expect int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, to, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = header
	client := &http.Client{
		Timeout:       deliveryTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	what := fmt.Sprintf("%s (delivery %s)", event, id)
	if len(notes) > 0 {
		what += " [" + strings.Join(notes, "; ") + "]"
	}
	fmt.Fprintf(c.stdout, "POST %s %s\n", to, what)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	took := time.Since(start).Round(time.Microsecond)
	said := strings.TrimSpace(string(answer))
	switch {
	case expect != 0 && resp.StatusCode == expect:
		fmt.Fprintf(c.stdout, "%s in %s, as expected\n", resp.Status, took)
		return nil
	case expect != 0:
		fmt.Fprintf(c.stdout, "%s in %s\n", resp.Status, took)
		return fmt.Errorf("the receiver answered %s, not the expected %d %s: %q", resp.Status, expect, http.StatusText(expect), said)
	}
	fmt.Fprintf(c.stdout, "%s in %s\n", resp.Status, took)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the receiver answered %s: %q", resp.Status, said)
	}
	return nil
}

// payloadOptions are the options trigger encodes payloads with:
// jsonopt.Encode, which allows what a --set VALUE may hold (a receiver may
// be tested with it): a name given twice in an object is sent as given, and
// invalid UTF-8 is sent as U+FFFD (as encoding/json did).
var payloadOptions = jsonopt.Encode

// parseSet parses FIELD=VALUE; VALUE is JSON when it is valid JSON (names
// given twice and invalid UTF-8 included, as payloadOptions sends them),
// else a string.
func parseSet(v string) (jsonobj.Field, error) {
	key, value, ok := strings.Cut(v, "=")
	if !ok || key == "" {
		return jsonobj.Field{}, fmt.Errorf("%q is not FIELD=VALUE", v)
	}
	var parsed any = value
	if raw := jsontext.Value(value); raw.IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) {
		parsed = raw
	}
	return jsonobj.Field{Key: key, Value: parsed}, nil
}

// tamperField picks the field --tamper changes: the amount when the body
// has one, else its first field (the record's id).
func tamperField(payload jsonobj.Object) string {
	for _, key := range []string{"total", "amount", "amount_paid", "message", "name"} {
		if _, ok := payload.Get(key); ok {
			return key
		}
	}
	return payload[0].Key
}

// tamperedValue is the value --tamper gives key: a large amount, or another
// id or text.
func tamperedValue(key string) string {
	switch key {
	case "total", "amount", "amount_paid":
		return "1000000.00"
	case "message", "name":
		return "tampered"
	}
	return uuid.NewString()
}

// randomSecret returns a signing secret of the service's form, 64
// hexadecimal characters.
func randomSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// checkHTTPURL returns a usage error of cmd unless v is an absolute http or
// https URL.
func checkHTTPURL(flagName, v, cmd string) error {
	if v == "" {
		return usagef(cmd, "%s is required", flagName)
	}
	if !isHTTPURL(v) {
		return usagef(cmd, "%s %q is not an http or https URL", flagName, v)
	}
	return nil
}

// isHTTPURL reports whether v is an absolute http or https URL.
func isHTTPURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
