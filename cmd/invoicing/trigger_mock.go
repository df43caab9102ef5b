package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// realTrigger makes, on a mock, the real change that raises an event: it
// creates records through the API and changes them through the mock's
// control endpoints, as the service's user interface would. The mock then
// signs and delivers every event of the change to its webhook endpoints.
type realTrigger struct {
	c   *cli
	api *invoicing.Client
	m   *mock
	did []string        // what was done, for the report
	ids map[string]bool // the records touched, whose events are reported
}

// triggerRecipes are the changes that raise each event type, in order.
// Every recipe starts from a new record, so that it does not depend on the
// mock's data and never changes a record the user made.
var triggerRecipes = map[webhooks.EventType]func(context.Context, *realTrigger) error{
	webhooks.EventInvoiceCreated: func(ctx context.Context, t *realTrigger) error {
		_, err := t.createInvoice(ctx, invoicing.InvoiceStatusDraft)
		return err
	},
	webhooks.EventInvoiceSent: func(ctx context.Context, t *realTrigger) error {
		id, err := t.createInvoice(ctx, invoicing.InvoiceStatusDraft)
		return t.then(ctx, err, "sent it", (*invoicingtest.ControlClient).SendInvoice, id)
	},
	webhooks.EventInvoiceUpdated: func(ctx context.Context, t *realTrigger) error {
		id, err := t.createInvoice(ctx, invoicing.InvoiceStatusDraft)
		return t.then(ctx, err, "changed its notes", func(m *invoicingtest.ControlClient, ctx context.Context, id string) (*invoicingtest.ControlResult, error) {
			notes := "Changed by invoicing trigger."
			return m.UpdateInvoice(ctx, id, invoicingtest.InvoiceUpdate{Notes: &notes})
		}, id)
	},
	webhooks.EventInvoicePaid: func(ctx context.Context, t *realTrigger) error {
		id, err := t.createInvoice(ctx, invoicing.InvoiceStatusAwaitingPayment)
		return t.then(ctx, err, "recorded a payment of the whole amount due", payment(invoicingtest.Payment{}), id)
	},
	webhooks.EventPaymentReceived: func(ctx context.Context, t *realTrigger) error {
		id, err := t.createInvoice(ctx, invoicing.InvoiceStatusAwaitingPayment)
		return t.then(ctx, err, "recorded a part payment of 50.00", payment(invoicingtest.Payment{Amount: decimal.New(5000, -2)}), id)
	},
	webhooks.EventBillCreated: func(ctx context.Context, t *realTrigger) error {
		_, err := t.createBill(ctx)
		return err
	},
	webhooks.EventBillApproved: func(ctx context.Context, t *realTrigger) error {
		id, err := t.createBill(ctx)
		return t.then(ctx, err, "approved it", (*invoicingtest.ControlClient).ApproveBill, id)
	},
	webhooks.EventContactCreated: func(ctx context.Context, t *realTrigger) error {
		name := "Trigger Client " + time.Now().UTC().Format("2006-01-02 15:04:05")
		ct, err := t.api.Clients.Create(ctx, &invoicing.ContactCreateParams{Name: name, Email: "accounts@trigger.example"})
		if err != nil {
			return err
		}
		t.touched(ct.ID, fmt.Sprintf("created client %q (%s)", name, ct.ID))
		return nil
	},
	webhooks.EventQuoteCreated: func(ctx context.Context, t *realTrigger) error {
		_, err := t.createQuote(ctx)
		return err
	},
	webhooks.EventQuoteSent: func(ctx context.Context, t *realTrigger) error {
		id, err := t.createQuote(ctx)
		return t.then(ctx, err, "sent it", (*invoicingtest.ControlClient).SendQuote, id)
	},
	webhooks.EventQuoteViewed: func(ctx context.Context, t *realTrigger) error {
		id, err := t.createQuote(ctx)
		err = t.then(ctx, err, "sent it", (*invoicingtest.ControlClient).SendQuote, id)
		return t.then(ctx, err, "had its client view it", (*invoicingtest.ControlClient).ViewQuote, id)
	},
	webhooks.EventQuoteAccepted: func(ctx context.Context, t *realTrigger) error {
		id, err := t.createQuote(ctx)
		err = t.then(ctx, err, "sent it", (*invoicingtest.ControlClient).SendQuote, id)
		return t.then(ctx, err, "had its client accept it", acceptQuote, id)
	},
	webhooks.EventQuoteUnaccepted: func(ctx context.Context, t *realTrigger) error {
		id, err := t.createQuote(ctx)
		err = t.then(ctx, err, "sent it", (*invoicingtest.ControlClient).SendQuote, id)
		err = t.then(ctx, err, "had its client accept it", acceptQuote, id)
		return t.then(ctx, err, "withdrew the acceptance", (*invoicingtest.ControlClient).UnacceptQuote, id)
	},
}

// payment is the control call that records p.
func payment(p invoicingtest.Payment) controlCall {
	return func(m *invoicingtest.ControlClient, ctx context.Context, id string) (*invoicingtest.ControlResult, error) {
		return m.RecordPayment(ctx, id, p)
	}
}

// acceptQuote is the control call that accepts a quote, as its recipient.
func acceptQuote(m *invoicingtest.ControlClient, ctx context.Context, id string) (*invoicingtest.ControlResult, error) {
	return m.AcceptQuote(ctx, id, "")
}

// mockTarget is where trigger's --to sends on a mock: the receiver's URL
// ("" for every endpoint of the mock), the secret to sign with ("": the
// endpoint's, or the mock's choice) and whether the endpoint stays after
// the trigger (--keep).
type mockTarget struct {
	url, secret string
	keep        bool
}

// triggerOnMock makes the real change that raises event on the mock m and
// reports the deliveries of every event it raised. to.url, when set, is
// made a webhook endpoint of the mock first, and put back as it was
// afterwards unless to.keep. The trigger fails unless every delivery of
// event got expect (any 2xx when expect is 0).
func (c *cli) triggerOnMock(ctx context.Context, m *mock, event webhooks.EventType, to mockTarget, expect int) (err error) {
	if to.url != "" {
		undo, err := c.ensureEndpoint(ctx, m, to.url, to.secret)
		if err != nil {
			return err
		}
		if undo != nil && !to.keep {
			defer func() {
				// Also when ctx ended: the mock is left as it was found.
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), controlTimeout)
				defer cancel()
				err = errors.Join(err, undo(ctx))
			}()
		}
	}
	var receivers []invoicingtest.ControlWebhook
	for _, w := range m.info.Webhooks {
		if !w.Paused && (w.Subscribed(event) || event == webhooks.EventTest) && (to.url == "" || w.URL == to.url) {
			receivers = append(receivers, w)
		}
	}
	if len(receivers) == 0 {
		return usagef("trigger", "%s has no webhook endpoint that receives %s: start the mock with --webhook URL, add one with 'invoicing webhooks add URL', or give --to URL", m.where(), event)
	}

	var events []invoicingtest.ControlEventReport
	if event == webhooks.EventTest {
		for _, w := range receivers {
			r, err := m.TestWebhook(ctx, w.ID)
			if err != nil {
				return fmt.Errorf("trigger: %w", err)
			}
			events = append(events, r.Events...)
		}
		fmt.Fprintf(c.stdout, "On %s: sent a test delivery.\n", m.where())
	} else {
		api, err := c.apiClient("trigger")
		if err != nil {
			return err
		}
		t := &realTrigger{c: c, api: api, m: m, ids: map[string]bool{}}
		after := m.info.LastEventSeq
		if err := triggerRecipes[event](ctx, t); err != nil {
			return fmt.Errorf("trigger: %w", err)
		}
		if events, err = t.events(ctx, after); err != nil {
			return fmt.Errorf("trigger: %w", err)
		}
		fmt.Fprintf(c.stdout, "On %s: %s.\n", m.where(), strings.Join(t.did, ", then "))
	}
	c.printEvents(events)

	delivered, failed := 0, 0
	for _, e := range events {
		if e.Type != event {
			continue
		}
		for _, d := range e.Deliveries {
			if to.url != "" && d.URL != to.url {
				continue
			}
			delivered++
			if !answered(d, expect) {
				failed++
			}
		}
	}
	switch {
	case delivered == 0:
		return fmt.Errorf("trigger: the change raised %s but the mock delivered none", event)
	case failed > 0 && expect != 0:
		return fmt.Errorf("trigger: %d of %d deliveries of %s were not answered %d %s", failed, delivered, event, expect, http.StatusText(expect))
	case failed > 0:
		return fmt.Errorf("trigger: %d of %d deliveries of %s were not answered 2xx", failed, delivered, event)
	}
	return nil
}

// ensureEndpoint makes url a webhook endpoint of the mock, receiving every
// event, unless it is one already; with secret set, the endpoint signs
// with it. It returns what puts the mock back as it was (nil when nothing
// changed): deleting the endpoint it added, or giving an existing one its
// secret back. A new endpoint's secret, when the mock chose it, is printed
// with its export line.
func (c *cli) ensureEndpoint(ctx context.Context, m *mock, url, secret string) (undo func(context.Context) error, err error) {
	for _, w := range m.info.Webhooks {
		if w.URL != url {
			continue
		}
		if secret == "" {
			return nil, nil
		}
		set, err := m.SetWebhookSecret(ctx, w.ID, secret)
		if err != nil {
			return nil, fmt.Errorf("trigger: setting the signing secret of %s: %w", url, err)
		}
		if set.PreviousSecret == secret {
			return nil, nil
		}
		return func(ctx context.Context) error {
			if _, err := m.SetWebhookSecret(ctx, w.ID, set.PreviousSecret); err != nil {
				return fmt.Errorf("trigger: putting back the signing secret of %s: %w", url, err)
			}
			fmt.Fprintf(c.stdout, "Put back the signing secret of the webhook endpoint %s (--keep keeps the one given).\n", url)
			return nil
		}, nil
	}
	w, err := m.AddWebhook(ctx, invoicingtest.ControlWebhookRequest{URL: url, Secret: secret})
	if err != nil {
		return nil, fmt.Errorf("trigger: adding %s as a webhook endpoint of the mock: %w", url, err)
	}
	m.info.Webhooks = append(m.info.Webhooks, *w)
	if secret == "" {
		fmt.Fprintf(c.stdout, "Added %s as a webhook endpoint of the mock; it signs with the secret the mock chose:\n  export %s=%s\n", url, c.secretVar(), w.Secret)
	} else {
		fmt.Fprintf(c.stdout, "Added %s as a webhook endpoint of the mock, signing with the secret given.\n", url)
	}
	return func(ctx context.Context) error {
		if err := m.DeleteWebhook(ctx, w.ID); err != nil {
			return fmt.Errorf("trigger: removing the webhook endpoint %s it added: %w", url, err)
		}
		fmt.Fprintf(c.stdout, "Removed the webhook endpoint %s (--keep keeps it).\n", url)
		return nil
	}, nil
}

// touched records a record the trigger made or changed, and what it did.
func (t *realTrigger) touched(id, did string) {
	t.ids[id] = true
	t.did = append(t.did, did)
}

// then, unless err is set, makes one control call on the record id the
// trigger made, and records what it did (and any invoice it made).
func (t *realTrigger) then(ctx context.Context, err error, did string, call controlCall, id string) error {
	if err != nil {
		return err
	}
	r, err := call(t.m.ControlClient, ctx, id)
	if err != nil {
		return err
	}
	t.did = append(t.did, did)
	if r.InvoiceID != "" && r.QuoteID != "" {
		t.touched(r.InvoiceID, fmt.Sprintf("it became invoice %s (%s)", r.InvoiceNumber, r.InvoiceID))
	}
	return nil
}

// createInvoice creates an invoice of 100.00 plus GST for the seed client.
func (t *realTrigger) createInvoice(ctx context.Context, status invoicing.InvoiceStatus) (string, error) {
	res, err := t.api.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		Status:           status,
		PaymentTermsDays: invoicing.Ptr(14),
		Notes:            "Made by invoicing trigger.",
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Triggered work", UnitPrice: decimal.New(10000, -2)}},
	})
	if err != nil {
		return "", fmt.Errorf("creating an invoice: %w", err)
	}
	inv := res.Invoice
	t.touched(inv.ID, fmt.Sprintf("created invoice %s (%s, %s, total %s)", inv.InvoiceNumber, inv.Status, inv.ID, invoicingtest.FormatMoney(inv.Total)))
	return inv.ID, nil
}

// createQuote creates a quote of 100.00 plus GST for the seed client.
func (t *realTrigger) createQuote(ctx context.Context) (string, error) {
	q, err := t.api.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		Title:            "Triggered quote",
		ValidDays:        invoicing.Ptr(30),
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Triggered work", UnitPrice: decimal.New(10000, -2)}},
	})
	if err != nil {
		return "", fmt.Errorf("creating a quote: %w", err)
	}
	t.touched(q.ID, fmt.Sprintf("created quote %s (%s, total %s)", q.QuoteNumber, q.ID, invoicingtest.FormatMoney(q.Total)))
	return q.ID, nil
}

// createBill creates a bill of 100.00 plus GST from the seed supplier,
// awaiting approval.
func (t *realTrigger) createBill(ctx context.Context) (string, error) {
	number := "TRIG-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	b, err := t.api.Bills.Create(ctx, &invoicing.BillCreateParams{
		SupplierID:       invoicingtest.SeedSupplierID,
		BillNumber:       number,
		Status:           invoicing.BillStatusAwaitingApproval,
		DefaultAccountID: invoicingtest.SeedExpenseAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Triggered purchase", UnitPrice: decimal.New(10000, -2)}},
	})
	if err != nil {
		return "", fmt.Errorf("creating a bill: %w", err)
	}
	t.touched(b.ID, fmt.Sprintf("created bill %s (%s)", number, b.ID))
	return b.ID, nil
}

// recordIDFields are the payload members that name the record an event is
// about.
var recordIDFields = []string{"invoice_id", "quote_id", "bill_id", "contact_id"}

// events returns the events the mock raised after the afterth about the
// records the trigger touched, with their deliveries.
func (t *realTrigger) events(ctx context.Context, after int) ([]invoicingtest.ControlEventReport, error) {
	feed, err := t.m.Events(ctx, after)
	if err != nil {
		return nil, err
	}
	var out []invoicingtest.ControlEventReport
	for _, e := range feed.Events {
		var body map[string]jsontext.Value
		if err := json.Unmarshal(e.Body, &body, jsonopt.Decode); err != nil {
			return nil, fmt.Errorf("the body of event %d: %w", e.Seq, err)
		}
		for _, f := range recordIDFields {
			var id string
			if v, ok := body[f]; ok && json.Unmarshal(v, &id, jsonopt.Decode) == nil && t.ids[id] {
				out = append(out, invoicingtest.ControlEventReport{Type: e.Type, Deliveries: e.Deliveries})
				break
			}
		}
	}
	return out, nil
}
