package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// webhooks runs "invoicing webhooks SUBCOMMAND": the webhook endpoints of
// a mock's business, which the service manages in its user interface.
func (c *cli) webhooks(ctx context.Context, args []string) error {
	return c.group(ctx, "webhooks", "Manage the webhook endpoints of 'invoicing mock' (of one business with --business NAME).", args, []command{
		{"list", "list the endpoints: list [--json]", (*cli).listWebhooks},
		{"add", "add an endpoint: add URL[,EVENT...] [--secret S]", (*cli).addWebhook},
		{"remove", "remove endpoints: remove ID|URL...", (*cli).removeWebhooks},
	})
}

const webhooksNote = `
It works only against 'invoicing mock' (INVOICING_BASE_URL and
INVOICING_API_KEY as the mock printed them), through its control endpoints:
the service manages endpoints in its user interface only. On a mock of
several businesses, --business NAME manages that business's endpoints (its
key is INVOICING_API_KEY_NAME); each business has its own.

Exit status: 0 done; 1 the mock refused (an unknown endpoint) or cannot be
reached, or the service is not a mock; 2 a usage mistake.`

const webhooksListHelp = `
Usage: invoicing webhooks list [--business NAME] [--json]

Lists the business's webhook endpoints, in the order they were added: id,
URL, the events each receives, and whether it is paused. Secrets are never
listed. --json writes one JSON object per endpoint.
` + webhooksNote

func (c *cli) listWebhooks(ctx context.Context, args []string) error {
	fs := newFlags("webhooks list")
	asJSON := fs.Bool("json", false, "write one JSON object per endpoint")
	rest, err := c.parseWithBusiness(fs, webhooksListHelp, args)
	if err != nil {
		return err
	}
	if err := noArgs("webhooks list", rest); err != nil {
		return err
	}
	m, err := c.mockFor(ctx, "webhooks list")
	if err != nil {
		return err
	}
	if *asJSON {
		for _, w := range m.info.Webhooks {
			if err := writeJSONLine(c.stdout, w, nil); err != nil {
				return err
			}
		}
		return nil
	}
	if len(m.info.Webhooks) == 0 {
		fmt.Fprintf(c.stdout, "No webhook endpoints on %s.\n", m.where())
		return nil
	}
	t := &table{headers: []string{"ID", "URL", "EVENTS", "PAUSED"}, right: make([]bool, 4), flex: []bool{false, true, true, false}}
	for _, w := range m.info.Webhooks {
		events := "all"
		if w.Events != nil {
			events = eventList(w.Events)
		}
		t.rows = append(t.rows, []string{w.ID, w.URL, events, strconv.FormatBool(w.Paused)})
	}
	t.write(c.stdout, c.tableWidth())
	return nil
}

const webhooksAddHelp = `
Usage: invoicing webhooks add URL[,EVENT...] [--secret S] [--business NAME] [--json]

Adds a webhook endpoint to the business, receiving every event or the events
listed after the URL, as 'invoicing mock --webhook' does. It signs with
--secret S, else $` + envWebhookSecret + ` (with --business NAME,
$` + envWebhookSecret + `_NAME) when set, else with the secret the mock
chooses (a business of a mock of several: its own), printed with its
export line. --json prints the endpoint, its secret included.
` + webhooksNote

func (c *cli) addWebhook(ctx context.Context, args []string) error {
	fs := newFlags("webhooks add")
	secret := fs.String("secret", "", "sign with the signing secret `S` (default $"+envWebhookSecret+", or $"+envWebhookSecret+"_NAME with --business)")
	asJSON := fs.Bool("json", false, "print the endpoint as one JSON object, its secret included")
	rest, err := c.parseWithBusiness(fs, webhooksAddHelp, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("webhooks add", "webhooks add takes one URL[,EVENT...]")
	}
	hook, err := parseWebhookFlag(rest[0])
	if err != nil {
		return usagef("webhooks add", "%s", err)
	}
	from := "the secret given"
	if *secret == "" {
		*secret, from = c.getenv(c.secretVar()), "$"+c.secretVar()
	}
	if *secret != "" && !isSigningSecret(*secret) {
		return usagef("webhooks add", "%s is not a signing secret (64 hexadecimal characters)", from)
	}
	m, err := c.mockFor(ctx, "webhooks add")
	if err != nil {
		return err
	}
	w, err := m.AddWebhook(ctx, invoicingtest.ControlWebhookRequest{URL: hook.url, Events: hook.events, Secret: *secret})
	if err != nil {
		return fmt.Errorf("webhooks add: %w", err)
	}
	if *asJSON {
		return writeJSONLine(c.stdout, w, nil)
	}
	events := "every event"
	if w.Events != nil {
		events = eventList(w.Events)
	}
	fmt.Fprintf(c.stdout, "Added webhook endpoint %s to %s: %s, receiving %s.\n", w.ID, m.where(), w.URL, events)
	if *secret != "" {
		fmt.Fprintf(c.stdout, "It signs with %s.\n", from)
	} else {
		fmt.Fprintf(c.stdout, "It signs with the secret the mock chose:\n  export %s=%s\n", c.secretVar(), w.Secret)
	}
	return nil
}

const webhooksRemoveHelp = `
Usage: invoicing webhooks remove ID|URL... [--business NAME]

Removes webhook endpoints of the business, each named by its id or its URL
(every endpoint at that URL), as deleting them in the user interface does:
they receive nothing more, and their pending retries are cancelled. It
removes every one it can and fails when an argument names none.
` + webhooksNote

func (c *cli) removeWebhooks(ctx context.Context, args []string) error {
	fs := newFlags("webhooks remove")
	rest, err := c.parseWithBusiness(fs, webhooksRemoveHelp, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("webhooks remove", "webhooks remove takes the ids or URLs of the endpoints to remove")
	}
	m, err := c.mockFor(ctx, "webhooks remove")
	if err != nil {
		return err
	}
	var errs []error
	for _, arg := range rest {
		found := false
		for _, w := range m.info.Webhooks {
			if w.ID != arg && w.URL != arg {
				continue
			}
			found = true
			err := m.DeleteWebhook(ctx, w.ID)
			var ce *invoicingtest.ControlError
			switch {
			case errors.As(err, &ce) && ce.StatusCode == http.StatusNotFound:
				// Removed meanwhile: the outcome asked for.
			case err != nil:
				errs = append(errs, fmt.Errorf("webhooks remove: %s: %w", w.URL, err))
				continue
			}
			fmt.Fprintf(c.stdout, "Removed webhook endpoint %s (%s).\n", w.ID, w.URL)
		}
		if !found {
			errs = append(errs, fmt.Errorf("webhooks remove: %s has no webhook endpoint %s ('invoicing webhooks list' lists them)", m.where(), arg))
		}
	}
	return errors.Join(errs...)
}
