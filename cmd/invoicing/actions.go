package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// An action is a mock-only subcommand that changes one record through the
// mock's control endpoints, as the service's user interface or a client
// would, so that the mock raises and delivers the real events.
type action struct {
	cmd, help string // "invoices pay" and its help
	noun      string // the kind of record the id names: "invoice"
	// call makes the change, for an action without flags of its own.
	call controlCall
	// flags, for an action with flags, adds them to fs and returns the
	// function that makes the call from their values once fs is parsed.
	flags func(fs *flag.FlagSet) func() (controlCall, error)
	// done says what happened, from the mock's answer.
	done func(id string, r *invoicingtest.ControlResult) string
}

// controlCall is a control action on the record id: a method of
// invoicingtest.ControlClient.
type controlCall func(m *invoicingtest.ControlClient, ctx context.Context, id string) (*invoicingtest.ControlResult, error)

const mockOnlyNote = `
It works only against 'invoicing mock' (INVOICING_BASE_URL and
INVOICING_API_KEY as the mock printed them): the API has no endpoint for
it. On a mock of several businesses, --business NAME acts on that one (its
key is INVOICING_API_KEY_NAME). It prints each event the change raised and
how the mock's webhook endpoints answered; --json prints the mock's answer
as one JSON object.

Exit status: 0 done; 1 the mock refused the change (a record in a status
that does not allow it, an unknown id) or cannot be reached, or the
service is not a mock; 2 a usage mistake.`

var invoiceSendAction = action{
	cmd: "invoices send", noun: "invoice", call: (*invoicingtest.ControlClient).SendInvoice,
	help: `
Usage: invoicing invoices send ID [--json]

Sends the invoice, as the user interface does: a draft becomes
awaiting_payment, and invoice.sent fires. A voided invoice cannot be sent.
` + mockOnlyNote,
	done: func(id string, r *invoicingtest.ControlResult) string { return "Sent invoice " + id + "." },
}

var invoicePayAction = action{
	cmd: "invoices pay", noun: "invoice",
	help: `
Usage: invoicing invoices pay ID [--amount A] [--method M] [--json]

Allocates a payment to the invoice (awaiting_payment or overdue; send a
draft first): by default the whole amount due, or --amount A, exact (12.50).
payment.received fires, and invoice.paid too when the payment clears the
balance.
` + mockOnlyNote,
	flags: func(fs *flag.FlagSet) func() (controlCall, error) {
		amount := fs.String("amount", "", "pay `A` (default: the amount due)")
		method := fs.String("method", "", "the payment_method `M` of payment.received (default bank_transfer)")
		return func() (controlCall, error) {
			p := invoicingtest.Payment{Method: *method} // a zero Amount pays the amount due
			if *amount != "" {
				d, err := decimal.NewFromString(*amount)
				if err != nil || !d.IsPositive() {
					return nil, usagef("invoices pay", "--amount %q is not a positive amount such as 12.50", *amount)
				}
				p.Amount = d
			}
			return func(m *invoicingtest.ControlClient, ctx context.Context, id string) (*invoicingtest.ControlResult, error) {
				return m.RecordPayment(ctx, id, p)
			}, nil
		}
	},
	done: func(id string, r *invoicingtest.ControlResult) string {
		return "Recorded payment " + r.PaymentID + " on invoice " + id + "."
	},
}

var invoiceVoidAction = action{
	cmd: "invoices void", noun: "invoice", call: (*invoicingtest.ControlClient).VoidInvoice,
	help: `
Usage: invoicing invoices void ID [--json]

Voids the invoice, as staff do in the user interface: its status becomes
voided and invoice.updated fires. A paid invoice, or one with payments,
cannot be voided.
` + mockOnlyNote,
	done: func(id string, r *invoicingtest.ControlResult) string { return "Voided invoice " + id + "." },
}

var quoteSendAction = action{
	cmd: "quotes send", noun: "quote", call: (*invoicingtest.ControlClient).SendQuote,
	help: `
Usage: invoicing quotes send ID [--json]

Sends the quote to its client, as the user interface does: a draft becomes
sent and quote.sent fires.
` + mockOnlyNote,
	done: func(id string, r *invoicingtest.ControlResult) string { return "Sent quote " + id + "." },
}

var quoteAcceptAction = action{
	cmd: "quotes accept", noun: "quote",
	help: `
Usage: invoicing quotes accept ID [--by NAME] [--json]

Accepts a draft or sent quote on the client's behalf (as staff do, or as
its recipient does through the share link): the quote becomes accepted,
quote.accepted fires, and the quote is converted into an invoice
(invoice.created), a draft as the mock's business prefers.
` + mockOnlyNote,
	flags: func(fs *flag.FlagSet) func() (controlCall, error) {
		by := fs.String("by", "", "record `NAME` as who accepted (accepted_by)")
		return func() (controlCall, error) {
			return func(m *invoicingtest.ControlClient, ctx context.Context, id string) (*invoicingtest.ControlResult, error) {
				return m.AcceptQuote(ctx, id, *by)
			}, nil
		}
	},
	done: func(id string, r *invoicingtest.ControlResult) string {
		s := "Accepted quote " + id + "."
		if r.InvoiceID != "" {
			s += fmt.Sprintf(" It became invoice %s (%s, %s).", r.InvoiceNumber, r.InvoiceStatus, r.InvoiceID)
		}
		return s
	},
}

var quoteDeclineAction = action{
	cmd: "quotes decline", noun: "quote", call: (*invoicingtest.ControlClient).DeclineQuote,
	help: `
Usage: invoicing quotes decline ID [--json]

Marks a draft or sent quote declined. The service documents no event for
it, so none fires: a mirror learns it when it reconciles.
` + mockOnlyNote,
	done: func(id string, r *invoicingtest.ControlResult) string { return "Declined quote " + id + "." },
}

// actionCommand returns the subcommand that runs a.
func actionCommand(a action) func(*cli, context.Context, []string) error {
	return func(c *cli, ctx context.Context, args []string) error { return c.runAction(ctx, args, a) }
}

// runAction runs a mock-only action on the record whose id args give.
func (c *cli) runAction(ctx context.Context, args []string, a action) error {
	fs := newFlags(a.cmd)
	asJSON := fs.Bool("json", false, "print the mock's answer as one JSON object")
	call := func() (controlCall, error) { return a.call, nil }
	if a.flags != nil {
		call = a.flags(fs)
	}
	id, _, err := c.parseID(fs, a.help, a.noun, args)
	if err != nil {
		return err
	}
	change, err := call()
	if err != nil {
		return err
	}
	m, err := c.mockFor(ctx, a.cmd)
	if err != nil {
		return err
	}
	r, err := change(m.ControlClient, ctx, id)
	if err != nil {
		return fmt.Errorf("%s: %w", a.cmd, err)
	}
	if *asJSON {
		return writeJSONLine(c.stdout, r, nil)
	}
	fmt.Fprintln(c.stdout, a.done(id, r))
	c.printEvents(r.Events)
	return nil
}

// mockFor returns the control client of the mock the environment names,
// for a mock-only command: against anything else it is an error that says
// why.
func (c *cli) mockFor(ctx context.Context, cmd string) (*mock, error) {
	m, err := c.probeMock(ctx, cmd)
	if errors.Is(err, errNotMock) {
		return nil, fmt.Errorf("%w; '%s' works only against 'invoicing mock', because the API has no endpoint for it", err, "invoicing "+cmd)
	}
	return m, err
}

// printEvents writes one line per delivery of each event (or one saying
// that no endpoint receives it).
func (c *cli) printEvents(events []invoicingtest.ControlEventReport) {
	if len(events) == 0 {
		fmt.Fprintln(c.stdout, "No event fired (the service documents none for this change).")
		return
	}
	width := 0
	for _, e := range events {
		width = max(width, len(e.Type))
	}
	for _, e := range events {
		if len(e.Deliveries) == 0 {
			fmt.Fprintf(c.stdout, "  %-*s  no webhook endpoint receives it\n", width, e.Type)
			continue
		}
		for _, d := range e.Deliveries {
			fmt.Fprintf(c.stdout, "  %-*s  -> %s  %s\n", width, e.Type, d.URL, outcome(d))
		}
	}
}

// outcome says how the first attempt of the delivery ended.
func outcome(d invoicingtest.ControlDelivery) string {
	var s string
	switch {
	case d.StatusCode != 0:
		s = fmt.Sprintf("%d %s", d.StatusCode, http.StatusText(d.StatusCode))
	case d.Error != "":
		s = "no answer: " + d.Error
	default:
		s = "no answer"
	}
	switch d.Status {
	case invoicingtest.DeliveryPending:
		s += " (the mock retries it on the service's schedule)"
	case invoicingtest.DeliveryFailed:
		s += " (failed)"
	}
	return s + " (delivery " + d.DeliveryID + ")"
}

// answered reports whether the delivery's first attempt was answered with
// want, or with any 2xx when want is 0.
func answered(d invoicingtest.ControlDelivery, want int) bool {
	if want != 0 {
		return d.StatusCode == want
	}
	return d.StatusCode >= 200 && d.StatusCode <= 299
}

const mockAdvanceHelp = `
Usage: invoicing mock advance DURATION [--business NAME] [--json]

Moves the clock of the running mock forward by DURATION (15d, 36h, 1d12h;
d is 24 hours): the business's "today" moves on, invoices awaiting payment
past their due date read overdue, draft and sent quotes past valid_until
expire, and webhook retries that fall due in that span are made. Webhook
deliveries stay signed with the real time, so receivers accept them. The
businesses of a mock of several share its clock: each one's day moves, and
the overdue invoices and expired quotes listed are those of the business
of the key (--business NAME).
` + mockOnlyNote

// mockAdvance runs "invoicing mock advance".
func (c *cli) mockAdvance(ctx context.Context, args []string) error {
	fs := newFlags("mock advance")
	asJSON := fs.Bool("json", false, "print the mock's answer as one JSON object")
	rest, err := c.parseWithBusiness(fs, mockAdvanceHelp, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("mock advance", "mock advance takes one duration, such as 15d or 36h")
	}
	m, err := c.mockFor(ctx, "mock advance")
	if err != nil {
		return err
	}
	r, err := m.AdvanceClock(ctx, rest[0])
	if err != nil {
		var ce *invoicingtest.ControlError
		if errors.As(err, &ce) && ce.StatusCode == http.StatusUnprocessableEntity {
			return usagef("mock advance", "%s", ce.Detail)
		}
		return fmt.Errorf("mock advance: %w", err)
	}
	if *asJSON {
		return writeJSONLine(c.stdout, r, nil)
	}
	fmt.Fprintf(c.stdout, "The mock's clock reads %s (today is %s).\n", r.Now.Format("2006-01-02 15:04:05Z07:00"), r.Today)
	in := ""
	if m.info.Business != "" {
		in = "In business " + m.info.Business + ": " // the others' are theirs to list
	}
	fmt.Fprintf(c.stdout, "%s%s now overdue, %s expired.\n", in, count(len(r.OverdueInvoices), "invoice", "invoices"), count(len(r.ExpiredQuotes), "quote", "quotes"))
	return nil
}

// count writes n and the noun that fits it.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
