package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

const mockHelp = `
Usage: invoicing mock [--addr 127.0.0.1:4010] [--seed N] [--latency D] [--state FILE] [--env-file FILE] [--webhook URL[,EVENT...]]...
       invoicing mock advance DURATION

Serves the in-memory Invoicing Service (package invoicingtest) under
/api/v1/external until interrupted (Ctrl-C or SIGTERM), for front ends,
scripts and CI jobs in any language. It prints the base URL, two API keys
(every scope, and read scopes only) and the signing secret of each webhook
endpoint, with the export lines that configure the other commands. These
are keys and secrets of the local fake, not of a real account.

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

The mock also serves control endpoints under /api/v1/external/_mock, a path
the service never uses, for what only the service's user interface does:
'invoicing invoices send|pay|void', 'invoicing quotes send|accept|decline'
and 'invoicing mock advance DURATION' (the clock: invoices become overdue,
quotes expire) drive them, and 'invoicing trigger EVENT' uses them to make
the real change that raises EVENT.

Example:
  invoicing mock --seed 20 --state demo.json --webhook http://127.0.0.1:8080/webhooks --env-file mock.env
`

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

// mock runs "invoicing mock".
func (c *cli) mock(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "advance" {
		return c.mockAdvance(ctx, args[1:])
	}
	fs := newFlags("mock")
	addr := fs.String("addr", "127.0.0.1:4010", "listen on `HOST:PORT`; port 0 picks a free one")
	seed := fs.Int("seed", 0, "add `N` sample invoices and N sample quotes (deterministic)")
	latency := fs.Duration("latency", 0, "delay every API request by `D`, e.g. 150ms")
	state := fs.String("state", "", "restore the data from `FILE` if it exists, save it there on exit")
	envFile := fs.String("env-file", "", "write the export lines to `FILE` once serving; removed on exit")
	hooks := repeatedFlag(fs, "webhook", "add a webhook endpoint `URL[,EVENT...]` for every event or those listed (repeatable)", parseWebhookFlag)
	rest, err := c.parse(fs, mockHelp, args)
	if err != nil {
		return err
	}
	if err := noArgs("mock", rest); err != nil {
		return err
	}
	if *seed < 0 || *latency < 0 {
		return usagef("mock", "--seed and --latency must not be negative")
	}
	secret := c.getenv(envWebhookSecret)
	if secret != "" && !isSigningSecret(secret) {
		return usagef("mock", "%s is set but is not a signing secret (64 hexadecimal characters): unset it, or set it to one such as $(openssl rand -hex 32)", envWebhookSecret)
	}
	if *envFile != "" {
		// A file left by an earlier run must not pass for this one's.
		if err := os.Remove(*envFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("mock: %w", err)
		}
	}

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("mock: %w", err)
	}
	srv := invoicingtest.NewServer(invoicingtest.WithListener(l), invoicingtest.WithControl(),
		invoicingtest.WithClock(invoicingtest.NewOffsetClock()))
	defer srv.Close()
	restored, err := restoreState(srv, *state)
	if err != nil {
		return err
	}
	if !restored && *seed > 0 {
		if err := seedSamples(ctx, srv, *seed); err != nil {
			return fmt.Errorf("mock: adding sample data: %w", err)
		}
	}
	srv.SetLatency(*latency, 0)
	endpoints := make([]*invoicingtest.WebhookEndpoint, len(*hooks))
	for i, h := range *hooks {
		if secret != "" {
			endpoints[i] = srv.AddWebhookEndpointWithSecret(h.url, secret, h.events...)
		} else {
			endpoints[i] = srv.AddWebhookEndpoint(h.url, h.events...)
		}
	}
	exports := mockExports(srv, endpoints, secret != "")
	if *envFile != "" {
		if err := writeEnvFile(*envFile, exports); err != nil {
			return err
		}
		defer os.Remove(*envFile)
	}
	c.printMockBanner(srv, endpoints, exports, *state, restored, *seed)

	<-ctx.Done()
	c.stop()
	fmt.Fprintln(c.stdout, "Shutting down...")
	srv.Close()
	if *state != "" {
		if err := saveState(srv, *state); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "Saved the data to %s.\n", *state)
	}
	return nil
}

// printMockBanner writes what a user of the mock needs: the base URL, the
// keys, the webhook secrets (once, unless they came from the environment),
// where the data comes from, and the export lines.
func (c *cli) printMockBanner(srv *invoicingtest.Server, endpoints []*invoicingtest.WebhookEndpoint, exports []string, state string, restored bool, seed int) {
	w := c.stdout
	fmt.Fprintln(w, "Invoicing mock service (in-memory fake: the keys and secrets below are not real)")
	fmt.Fprintf(w, "base URL       %s\n", srv.URL)
	fmt.Fprintf(w, "full key       %s\n", srv.FullKey)
	fmt.Fprintf(w, "read-only key  %s\n", srv.ReadOnlyKey)
	switch {
	case restored:
		fmt.Fprintf(w, "data           restored from %s\n", state)
	case seed > 0:
		fmt.Fprintf(w, "data           seed data and %d sample invoices and quotes\n", seed)
	default:
		fmt.Fprintln(w, "data           seed data")
	}
	for _, ep := range endpoints {
		events := "all events"
		var subscribed []webhooks.EventType
		for _, e := range invoicingtest.AllEvents() {
			if ep.Subscribed(e) {
				subscribed = append(subscribed, e)
			}
		}
		if len(subscribed) < len(invoicingtest.AllEvents()) {
			events = eventList(subscribed)
		}
		fmt.Fprintf(w, "webhook        %s (%s)\n", ep.URL(), events)
		if c.getenv(envWebhookSecret) != "" {
			fmt.Fprintf(w, "  secret       from $%s\n", envWebhookSecret)
		} else {
			fmt.Fprintf(w, "  secret       %s\n", ep.Secret())
		}
	}
	fmt.Fprintln(w, "\nConfigure another shell with:")
	for _, e := range exports {
		fmt.Fprintln(w, "  "+e)
	}
	fmt.Fprintln(w, "\nThen try:\n  invoicing invoices list\n  invoicing trigger invoice.paid      # pays a new invoice: real events to the webhook endpoints")
	fmt.Fprintln(w, "\nServing until Ctrl-C.")
}

// mockExports returns the export lines that configure the other commands
// (and the SDK) for the mock: every variable the banner names. With
// several webhook endpoints, each line names the endpoint its secret signs
// for. A secret taken from the environment is not repeated.
func mockExports(srv *invoicingtest.Server, endpoints []*invoicingtest.WebhookEndpoint, secretFromEnv bool) []string {
	lines := []string{
		"export " + envBaseURL + "=" + srv.URL,
		"export " + envAPIKey + "=" + srv.FullKey,
	}
	if secretFromEnv {
		return lines
	}
	for _, ep := range endpoints {
		line := "export " + envWebhookSecret + "=" + ep.Secret()
		if len(endpoints) > 1 {
			line += "  # for " + ep.URL()
		}
		lines = append(lines, line)
	}
	return lines
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

// restoreState loads the state file into srv when path names one, and
// reports whether it did. A missing file is not an error: it is written on
// exit.
func restoreState(srv *invoicingtest.Server, path string) (bool, error) {
	if path == "" {
		return false, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mock: %w", err)
	}
	defer f.Close()
	if err := srv.LoadState(f); err != nil {
		return false, fmt.Errorf("mock: restoring %s: %w", path, err)
	}
	return true, nil
}

// saveState writes srv's data to path, readable by its owner only: it
// holds the mock's API keys.
func saveState(srv *invoicingtest.Server, path string) error {
	if err := writeFileAtomic(path, srv.SaveState); err != nil {
		return fmt.Errorf("mock: saving the data to %s: %w", path, err)
	}
	return nil
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
