package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

const mockHelp = `
Usage: invoicing mock [--addr 127.0.0.1:4010] [--seed N] [--latency D] [--state FILE] [--env-file FILE] [--webhook URL[,EVENT...]]...
       invoicing mock --business NAME... | --businesses N  [the flags above]
       invoicing mock advance DURATION [--business NAME]

Serves the in-memory Invoicing Service (package invoicingtest) under
/api/v1/external until interrupted (Ctrl-C or SIGTERM), for front ends,
scripts and CI jobs in any language. It prints the base URL, two API keys
(every scope, and read scopes only) and the signing secret of each webhook
endpoint, with the export lines that configure the other commands. These
are keys and secrets of the local fake, not of a real account. It listens
on --addr, else $` + envMockAddr + `, else 127.0.0.1:4010.

The business starts with the fake's fixed seed data (two clients, two
suppliers, a chart of accounts, tax codes, a catalog item, bank accounts).
--seed N adds N sample invoices and N sample quotes, issued a week apart,
the last one today: the same N always gives the same numbers, clients,
lines, amounts and statuses (invoices draft, awaiting payment, paid,
overdue, part paid and voided; quotes draft, sent, accepted, which makes
an invoice, declined and expired; a draft or sent quote past its
valid_until has expired). An invoice awaiting payment is due two weeks
after issue and reads overdue once that date has passed, as the service
shows it. Ids are random, as the service makes them.

--state FILE restores the data and API keys from FILE when it exists (then
--seed is ignored) and saves them there on exit, so a demo survives a
restart with the same keys. Webhook endpoints are not saved: give --webhook
again.

--webhook registers an endpoint of the business, receiving every event or
the events listed after the URL, e.g.
  --webhook http://127.0.0.1:8080/webhooks,invoice.created,quote.accepted
It signs with $` + envWebhookSecret + ` when that holds a secret (64
hexadecimal characters, never printed), so that a receiver configured
with it keeps working across restarts of the mock; otherwise each endpoint
gets a new secret, printed. The service delivers synchronously: an API
call returns once its webhooks were answered.

--env-file FILE writes the export lines (base URL, full key, webhook secret)
to FILE, readable by you only, once the mock is serving, and removes it on
exit: '. ./FILE' configures a shell, and a script can wait for FILE.

Several businesses: --business NAME (repeatable; lower-case letters,
digits, - and _) or --businesses N (named business1 to businessN) serves
that many businesses behind the one base URL, as the service serves an
accounting practice's clients: each has its own data (the seed data, and
--seed N samples of its own), API keys, webhook endpoints and webhook
secret, and the API key of a request picks its business, so a key of one
never sees another's data. A --webhook URL holds {business}, which each
business's endpoint has replaced by its name (--webhook
http://127.0.0.1:8080/webhooks/{business} suits invoicing-mirror). A
business NAME signs with $` + envWebhookSecret + `_NAME (NAME in capitals, -
as _) when set, else with a new secret; --state saves every business and
its secret. The banner prints, for each business, a line that adds it to
invoicing-mirror ('INVOICING_API_KEY=... INVOICING_WEBHOOK_SECRET=...
invoicing-mirror businesses add NAME'), and the export lines set
` + envAPIKey + `_NAME and ` + envWebhookSecret + `_NAME for each business,
which the other commands' --business NAME read (` + envAPIKey + ` and
` + envWebhookSecret + ` are the first business's). The businesses share
the mock's clock.

The mock also serves control endpoints under /api/v1/external/_mock, a path
the service never uses, for what only the service's user interface does:
'invoicing invoices send|pay|void', 'invoicing quotes send|accept|decline',
'invoicing webhooks list|add|remove' and 'invoicing mock advance DURATION'
(the clock: invoices become overdue, quotes expire) drive them, and
'invoicing trigger EVENT' uses them to make the real change that raises
EVENT. They act on the business whose key they are called with.

Exit status: 0 when stopped by Ctrl-C or SIGTERM (after saving --state);
1 when the address is in use, or --state cannot be read or saved; 2 for a
usage mistake.

Examples:
  invoicing mock --seed 20 --state demo.json --webhook http://127.0.0.1:8080/webhooks --env-file mock.env
  invoicing mock --business acme --business globex --seed 20 --webhook 'http://127.0.0.1:8081/webhooks/{business}'
`

// envMockAddr names the variable that moves the mock's default address.
const envMockAddr = "INVOICING_MOCK_ADDR"

// businessPlaceholder is what a --webhook URL holds where each business's
// name goes.
const businessPlaceholder = "{business}"

// webhookFlag is one --webhook: a URL and the events it receives (nil for
// every event).
type webhookFlag struct {
	url    string
	events []webhooks.EventType
}

// parseWebhookFlag parses URL[,EVENT...].
func parseWebhookFlag(v string) (webhookFlag, error) {
	parts := strings.Split(v, ",")
	if !isHTTPURL(parts[0]) {
		return webhookFlag{}, fmt.Errorf("%q is not an http or https URL", parts[0])
	}
	hook := webhookFlag{url: parts[0]}
	for _, e := range parts[1:] {
		ev := webhooks.EventType(strings.TrimSpace(e))
		if !slices.Contains(invoicingtest.AllEvents(), ev) {
			return webhookFlag{}, fmt.Errorf("unknown event %q%s; endpoints subscribe to %s", e, didYouMean(e, eventNames(invoicingtest.AllEvents())), eventList(invoicingtest.AllEvents()))
		}
		hook.events = append(hook.events, ev)
	}
	return hook, nil
}

// eventList joins event types with commas.
func eventList(events []webhooks.EventType) string {
	return strings.Join(eventNames(events), ", ")
}

// eventNames returns the event types as strings.
func eventNames(events []webhooks.EventType) []string {
	s := make([]string, len(events))
	for i, e := range events {
		s[i] = string(e)
	}
	return s
}

// mockBusiness is one business the mock serves, with the webhook
// endpoints --webhook gave it.
type mockBusiness struct {
	name          string // "" for the only business of a mock without --business
	srv           *invoicingtest.Server
	endpoints     []*invoicingtest.WebhookEndpoint
	secretFromEnv bool // its webhook secret came from the environment: never printed
}

// mockFlags are the flags of "invoicing mock".
type mockFlags struct {
	addr, state, envFile string
	seed                 int
	latency              time.Duration
	hooks                []webhookFlag
	names                []string // the businesses; none for a mock of one unnamed business
}

// mock runs "invoicing mock".
func (c *cli) mock(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "advance" {
		return c.mockAdvance(ctx, args[1:])
	}
	f, err := c.mockFlags(args)
	if err != nil {
		return err
	}
	if f.envFile != "" {
		// A file left by an earlier run must not pass for this one's.
		if err := os.Remove(f.envFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("mock: %w", err)
		}
	}

	l, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("mock: %w", err)
	}
	businesses, baseURL, closeServer := serveMock(l, f.names)
	defer closeServer()

	restored, err := restoreState(businesses, f.state)
	if err != nil {
		return err
	}
	for i, b := range businesses {
		if !restored && f.seed > 0 {
			if err := seedSamples(ctx, b.srv, f.seed, i*f.seed+1); err != nil {
				return fmt.Errorf("mock: adding sample data: %w", err)
			}
		}
		b.srv.SetLatency(f.latency, 0)
		if secret := c.getenv(envFor(envWebhookSecret, b.name)); secret != "" {
			b.srv.SetWebhookSecret(secret)
			b.secretFromEnv = true
		}
		for _, h := range f.hooks {
			url := strings.ReplaceAll(h.url, businessPlaceholder, b.name)
			b.endpoints = append(b.endpoints, b.srv.AddWebhookEndpoint(url, h.events...))
		}
	}
	exports := mockExports(baseURL, businesses)
	if f.envFile != "" {
		if err := writeEnvFile(f.envFile, exports); err != nil {
			return err
		}
		defer os.Remove(f.envFile)
	}
	c.printMockBanner(baseURL, businesses, exports, f, restored)

	<-ctx.Done()
	c.stop()
	fmt.Fprintln(c.stdout, "Shutting down...")
	closeServer()
	if f.state != "" {
		if err := saveState(businesses, f.state); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "Saved the data to %s.\n", f.state)
	}
	return nil
}

// serveMock serves the businesses named (one unnamed business when none
// is) on l, with the control endpoints and a clock that can be advanced,
// and returns them, their base URL and what closes them.
func serveMock(l net.Listener, names []string) (businesses []*mockBusiness, baseURL string, closeAll func()) {
	opts := []invoicingtest.Option{invoicingtest.WithListener(l), invoicingtest.WithControl(), invoicingtest.WithClock(invoicingtest.NewOffsetClock())}
	if len(names) == 0 {
		srv := invoicingtest.NewServer(opts...)
		return []*mockBusiness{{srv: srv}}, srv.URL, srv.Close
	}
	m := invoicingtest.NewMultiServer(names, opts...)
	for _, srv := range m.Businesses() {
		businesses = append(businesses, &mockBusiness{name: srv.BusinessName(), srv: srv})
	}
	return businesses, m.URL, m.Close
}

// mockFlags parses the command line of "invoicing mock" and checks it,
// with the webhook secrets the environment holds.
func (c *cli) mockFlags(args []string) (*mockFlags, error) {
	var f mockFlags
	fs := newFlags("mock")
	fs.StringVar(&f.addr, "addr", "", "listen on `HOST:PORT` (default $"+envMockAddr+", else 127.0.0.1:4010); port 0 picks a free one")
	fs.IntVar(&f.seed, "seed", 0, "add `N` sample invoices and N sample quotes (deterministic)")
	fs.DurationVar(&f.latency, "latency", 0, "delay every API request by `D`, e.g. 150ms")
	fs.StringVar(&f.state, "state", "", "restore the data from `FILE` if it exists, save it there on exit")
	fs.StringVar(&f.envFile, "env-file", "", "write the export lines to `FILE` once serving; removed on exit")
	hooks := repeatedFlag(fs, "webhook", "add a webhook endpoint `URL[,EVENT...]` for every event or those listed (repeatable; {business} in URL: each business's name)", parseWebhookFlag)
	names := repeatedFlag(fs, "business", "serve a business named `NAME` (repeatable): several behind one base URL, told apart by API key", func(v string) (string, error) {
		return v, checkBusinessName(v)
	})
	count := fs.Int("businesses", 0, "serve `N` businesses, named business1 to businessN")
	rest, err := c.parse(fs, mockHelp, args)
	if err != nil {
		return nil, err
	}
	if err := noArgs("mock", rest); err != nil {
		return nil, err
	}
	f.addr = cmp.Or(f.addr, c.getenv(envMockAddr), "127.0.0.1:4010")
	f.hooks, f.names = *hooks, *names
	switch {
	case f.seed < 0 || f.latency < 0 || *count < 0:
		return nil, usagef("mock", "--seed, --latency and --businesses must not be negative")
	case *count > 0 && len(f.names) > 0:
		return nil, usagef("mock", "give --business NAME for each business, or --businesses N, not both")
	case *count > 0:
		width := len(strconv.Itoa(*count))
		for i := 1; i <= *count; i++ {
			f.names = append(f.names, fmt.Sprintf("business%0*d", width, i))
		}
	}
	if err := checkBusinessNames(f.names); err != nil {
		return nil, err
	}
	for _, h := range f.hooks {
		switch placeholder := strings.Contains(h.url, businessPlaceholder); {
		case len(f.names) == 0 && placeholder:
			return nil, usagef("mock", "--webhook %s: {business} stands for a business's name, and the mock serves no named business: give --business NAME", h.url)
		case len(f.names) > 1 && !placeholder:
			return nil, usagef("mock", "--webhook %s: with several businesses, put {business} in the URL (e.g. http://127.0.0.1:8080/webhooks/{business}): each business signs with its own secret", h.url)
		}
	}
	secretVars := []string{envWebhookSecret}
	if len(f.names) > 0 {
		secretVars = nil // each business's own variable, not the plain one
		for _, name := range f.names {
			secretVars = append(secretVars, envFor(envWebhookSecret, name))
		}
	}
	for _, v := range secretVars {
		if secret := c.getenv(v); secret != "" && !isSigningSecret(secret) {
			return nil, usagef("mock", "%s is set but is not a signing secret (64 hexadecimal characters): unset it, or set it to one such as $(openssl rand -hex 32)", v)
		}
	}
	return &f, nil
}

// checkBusinessNames returns a usage error when two names are the same, or
// would share their variables (acme-1 and acme_1).
func checkBusinessNames(names []string) error {
	seen := map[string]string{}
	for _, name := range names {
		v := envFor(envAPIKey, name)
		if other, ok := seen[v]; ok {
			if other == name {
				return usagef("mock", "business %s is named twice", name)
			}
			return usagef("mock", "businesses %s and %s would share the variable %s: rename one", other, name, v)
		}
		seen[v] = name
	}
	return nil
}

// writeEnvFile writes the export lines to path, readable by its owner only
// (they hold the mock's key); a script waiting for path never reads half
// of it.
func writeEnvFile(path string, exports []string) error {
	err := writeFileAtomic(path, func(w io.Writer) error {
		_, err := io.WriteString(w, "# Written by invoicing mock; removed when it stops.\n"+strings.Join(exports, "\n")+"\n")
		return err
	})
	if err != nil {
		return fmt.Errorf("mock: writing --env-file %s: %w", path, err)
	}
	return nil
}

// isSigningSecret reports whether s has the form of a webhook signing
// secret: 64 hexadecimal characters.
func isSigningSecret(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// writeFileAtomic writes path with write, through a temporary file (mode
// 0600) in the same directory renamed into place, so that an interrupted
// write leaves the previous file intact and a reader never sees half of it.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	err = writeAndClose(tmp, write)
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// writeAndClose calls write on f and closes f, returning the first error.
func writeAndClose(f *os.File, write func(io.Writer) error) error {
	err := write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
