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
Usage: invoicing mock [--addr 127.0.0.1:4010] [--seed N] [--latency D] [--state FILE] [--webhook URL[,EVENT...]]...

Serves the in-memory Invoicing Service (package invoicingtest) under
/api/v1/external until interrupted (Ctrl-C or SIGTERM), for front ends,
scripts and CI jobs in any language. It prints the base URL, two API keys
(every scope, and read scopes only) and the signing secret of each webhook
endpoint. These are keys and secrets of the local fake, not of a real
account.

The business starts with the fake's fixed seed data (two clients, two
suppliers, a chart of accounts, tax codes, a catalog item, bank accounts).
--seed N adds N sample invoices and N sample quotes, issued a week apart,
the last one today: the same N always gives the same numbers, clients,
lines, amounts and statuses (draft, awaiting payment, paid, overdue, part
paid; draft, sent, declined, expired). An invoice awaiting payment is due
two weeks after issue and reads overdue once that date has passed, as the
service shows it. Ids are random, as the service makes them.

--state FILE restores the data and API keys from FILE when it exists (then
--seed is ignored) and saves them there on exit, so a demo survives a
restart with the same keys. Webhook endpoints are not saved: give --webhook
again, and a new secret is printed.

--webhook registers an endpoint of the business, receiving every event or
the events listed after the URL, e.g.
  --webhook http://127.0.0.1:8080/hooks,invoice.created,quote.accepted
The service delivers synchronously: an API call returns once its webhooks
were answered.

Example:
  invoicing mock --seed 20 --state demo.json --webhook http://127.0.0.1:8080/hooks
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
	fs := newFlags("mock")
	addr := fs.String("addr", "127.0.0.1:4010", "listen on `HOST:PORT`; port 0 picks a free one")
	seed := fs.Int("seed", 0, "add `N` sample invoices and N sample quotes (deterministic)")
	latency := fs.Duration("latency", 0, "delay every API request by `D`, e.g. 150ms")
	state := fs.String("state", "", "restore the data from `FILE` if it exists, save it there on exit")
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

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("mock: %w", err)
	}
	srv := invoicingtest.NewServer(invoicingtest.WithListener(l))
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
		endpoints[i] = srv.AddWebhookEndpoint(h.url, h.events...)
	}
	c.printMockBanner(srv, endpoints, *state, restored, *seed)

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
// keys, the webhook secrets (once) and where the data comes from.
func (c *cli) printMockBanner(srv *invoicingtest.Server, endpoints []*invoicingtest.WebhookEndpoint, state string, restored bool, seed int) {
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
		fmt.Fprintf(w, "  secret       %s\n", ep.Secret())
	}
	fmt.Fprintf(w, "\nTry:\n  export INVOICING_BASE_URL=%s\n  export INVOICING_API_KEY=%s\n  invoicing invoices list\n\n", srv.URL, srv.FullKey)
	fmt.Fprintln(w, "Serving until Ctrl-C.")
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

// saveState writes srv's data to path through a temporary file in the same
// directory, so that an interrupted save leaves the previous state intact.
// The file is readable by its owner only: it holds the mock's API keys.
func saveState(srv *invoicingtest.Server, path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("mock: saving the data: %w", err)
	}
	err = writeAndClose(tmp, srv.SaveState)
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("mock: saving the data to %s: %w", path, err)
	}
	return nil
}

// writeAndClose calls write on f and closes f, returning the first error.
func writeAndClose(f *os.File, write func(io.Writer) error) error {
	err := write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
