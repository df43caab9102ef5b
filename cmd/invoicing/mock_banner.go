package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// printMockBanner writes what a user of the mock needs: the base URL, the
// keys, the webhook secrets (once, unless they came from the environment),
// where the data comes from, the line that adds each business to
// invoicing-mirror, and the export lines.
func (c *cli) printMockBanner(baseURL string, businesses []*mockBusiness, exports []string, f *mockFlags, restored bool) {
	w := c.stdout
	fmt.Fprintln(w, "Invoicing mock service (in-memory fake: the keys and secrets below are not real)")
	fmt.Fprintf(w, "base URL       %s\n", baseURL)
	named := businesses[0].name != ""
	if named {
		fmt.Fprintf(w, "businesses     %s: each its own data, keys and webhook secret; a request's API key picks its business\n", strings.Join(f.names, ", "))
	} else {
		srv := businesses[0].srv
		fmt.Fprintf(w, "full key       %s\n", srv.FullKey)
		fmt.Fprintf(w, "read-only key  %s\n", srv.ReadOnlyKey)
	}
	each := ""
	if named {
		each = " each"
	}
	switch {
	case restored:
		fmt.Fprintf(w, "data           restored from %s\n", f.state)
	case f.seed > 0:
		fmt.Fprintf(w, "data           seed data and %d sample invoices and quotes%s\n", f.seed, each)
	default:
		fmt.Fprintln(w, "data           seed data")
	}
	if !named {
		printEndpoints(w, "", businesses[0], false)
	} else {
		for _, b := range businesses {
			fmt.Fprintf(w, "\n%s\n", b.name)
			fmt.Fprintf(w, "  business id    %s\n", b.srv.BusinessID())
			fmt.Fprintf(w, "  full key       %s\n", b.srv.FullKey)
			fmt.Fprintf(w, "  read-only key  %s\n", b.srv.ReadOnlyKey)
			if b.secretFromEnv {
				fmt.Fprintf(w, "  webhook secret from $%s\n", envFor(envWebhookSecret, b.name))
			} else {
				fmt.Fprintf(w, "  webhook secret %s\n", b.srv.WebhookSecret())
			}
			printEndpoints(w, "  ", b, true)
		}
		fmt.Fprintln(w, "\nAdd each business to invoicing-mirror (INVOICING_BASE_URL, the base URL above, serves them all):")
		for _, b := range businesses {
			fmt.Fprintf(w, "  %s=%s %s=%s invoicing-mirror businesses add %s\n", envAPIKey, b.srv.FullKey, envWebhookSecret, businessSecret(b), b.name)
		}
	}
	fmt.Fprintln(w, "\nConfigure another shell with:")
	for _, e := range exports {
		fmt.Fprintln(w, "  "+e)
	}
	if named {
		other := businesses[len(businesses)-1].name
		fmt.Fprintf(w, "\nThen try:\n  invoicing invoices list --business %s\n  invoicing trigger invoice.paid --business %s   # pays a new invoice of %s: real events to its webhook endpoints\n", other, other, other)
	} else {
		fmt.Fprintln(w, "\nThen try:\n  invoicing invoices list\n  invoicing trigger invoice.paid      # pays a new invoice: real events to the webhook endpoints")
	}
	fmt.Fprintln(w, "\nServing until Ctrl-C.")
}

// printEndpoints writes the business's --webhook endpoints, indented, each
// with its secret unless secretShown (a business's secret is printed once,
// above them) or it came from the environment.
func printEndpoints(w io.Writer, indent string, b *mockBusiness, secretShown bool) {
	for _, ep := range b.endpoints {
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
		fmt.Fprintf(w, "%s%-15s%s (%s)\n", indent, "webhook", ep.URL(), events)
		switch {
		case secretShown:
		case b.secretFromEnv:
			fmt.Fprintf(w, "  secret       from $%s\n", envWebhookSecret)
		default:
			fmt.Fprintf(w, "  secret       %s\n", ep.Secret())
		}
	}
}

// businessSecret is the business's webhook secret as a shell word: the
// secret, or the variable it came from.
func businessSecret(b *mockBusiness) string {
	if b.secretFromEnv {
		return `"$` + envFor(envWebhookSecret, b.name) + `"`
	}
	return b.srv.WebhookSecret()
}

// mockExports returns the export lines that configure the other commands
// (and the SDK) for the mock: every variable the banner names. With
// several webhook endpoints, each line names the endpoint its secret signs
// for. A secret taken from the environment is not repeated. A mock of
// named businesses exports each business's key and secret under its own
// variables, and the first business's under the plain ones.
func mockExports(baseURL string, businesses []*mockBusiness) []string {
	lines := []string{"export " + envBaseURL + "=" + baseURL}
	first := businesses[0]
	if first.name == "" {
		lines = append(lines, "export "+envAPIKey+"="+first.srv.FullKey)
		if first.secretFromEnv {
			return lines
		}
		for _, ep := range first.endpoints {
			line := "export " + envWebhookSecret + "=" + ep.Secret()
			if len(first.endpoints) > 1 {
				line += "  # for " + ep.URL()
			}
			lines = append(lines, line)
		}
		return lines
	}
	lines = append(lines, "export "+envAPIKey+"="+first.srv.FullKey+"  # "+first.name+"'s; --business NAME takes "+envAPIKey+"_NAME")
	if !first.secretFromEnv {
		lines = append(lines, "export "+envWebhookSecret+"="+first.srv.WebhookSecret()+"  # "+first.name+"'s")
	}
	for _, b := range businesses {
		lines = append(lines, "export "+envFor(envAPIKey, b.name)+"="+b.srv.FullKey)
		if !b.secretFromEnv {
			lines = append(lines, "export "+envFor(envWebhookSecret, b.name)+"="+b.srv.WebhookSecret())
		}
	}
	return lines
}
