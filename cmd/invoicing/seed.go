package main

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// sampleLine is a line the sample documents of --seed draw from.
type sampleLine struct {
	description string
	unitPrice   decimal.Decimal
	taxCodeID   string
	itemID      string
}

var sampleLines = []sampleLine{
	{"Consulting hour", decimal.New(15000, -2), invoicingtest.SeedGSTTaxCodeID, invoicingtest.SeedItemID},
	{"Website hosting (monthly)", decimal.New(4995, -2), invoicingtest.SeedGSTTaxCodeID, ""},
	{"Logo design", decimal.New(85000, -2), invoicingtest.SeedGSTTaxCodeID, ""},
	{"Support retainer", decimal.New(120000, -2), invoicingtest.SeedGSTTaxCodeID, ""},
	{"Travel to site", decimal.New(18000, -2), invoicingtest.SeedGSTFreeTaxCodeID, ""},
}

var sampleTitles = []string{"Website refresh", "Brand identity", "Support plan", "Hosting migration", "Training day"}

// sampleTermsDays are the payment terms of the sample invoices: one
// awaiting payment turns overdue two weeks after it was issued.
const sampleTermsDays = 14

// seedSamples adds n sample invoices and n sample quotes through the API
// and the server's helpers, issued a week apart, the last one on the
// server's today (UTC): samples number from to from+n-1 (a mock of several
// businesses gives each its own numbers, hence its own samples).
// Everything but the ids, the creation times and the dates follows from n
// and from; the dates follow from n and today.
func seedSamples(ctx context.Context, srv *invoicingtest.Server, n, from int) error {
	c := srv.Client()
	defer c.CloseIdleConnections()
	first := invoicing.DateOf(srv.Now().UTC()).AddDays(-7 * (n - 1))
	for i := range n {
		issue := first.AddDays(7 * i)
		if err := seedInvoice(ctx, srv, c, from+i, issue); err != nil {
			return err
		}
		if err := seedQuote(ctx, srv, c, from+i, issue); err != nil {
			return err
		}
	}
	// Draft and sent quotes whose valid_until has passed have expired, as
	// the service's daily job leaves them.
	srv.ExpireQuotes()
	return nil
}

// seedInvoice creates sample invoice i, cycling through draft, awaiting
// payment, paid, overdue (marked so by staff), awaiting payment with half
// paid, and voided. One awaiting payment reads overdue once its due date is
// past.
func seedInvoice(ctx context.Context, srv *invoicingtest.Server, c *invoicing.Client, i int, issue invoicing.Date) error {
	res, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID:         sampleClient(i),
		IssueDate:        issue,
		PaymentTermsDays: invoicing.Ptr(sampleTermsDays),
		Reference:        fmt.Sprintf("SAMPLE-%04d", i),
		Notes:            "Sample invoice from invoicing mock --seed.",
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		LineItems:        sampleLineParams(i),
	})
	if err != nil {
		return err
	}
	inv := res.Invoice
	paidAt := issue.AddDays(10).In(time.UTC)
	step := (i - 1) % 6
	switch step {
	case 0:
		return nil
	case 5:
		return srv.UpdateInvoice(inv.ID, invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusVoided})
	}
	if err := srv.SendInvoice(inv.ID); err != nil {
		return err
	}
	switch step {
	case 2:
		_, err = srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: inv.Total, ReceivedAt: paidAt})
	case 3:
		err = srv.UpdateInvoice(inv.ID, invoicingtest.InvoiceUpdate{Status: invoicing.InvoiceStatusOverdue})
	case 4:
		half := inv.Total.Div(decimal.NewFromInt(2)).Round(2)
		_, err = srv.RecordPayment(inv.ID, invoicingtest.Payment{Amount: half, ReceivedAt: paidAt})
	}
	return err
}

// seedQuote creates sample quote i, cycling through draft, sent, accepted
// (which converts it into an invoice), declined and expired.
func seedQuote(ctx context.Context, srv *invoicingtest.Server, c *invoicing.Client, i int, issue invoicing.Date) error {
	q, err := c.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
		ClientID:         sampleClient(i + 1),
		Title:            sampleTitles[(i-1)%len(sampleTitles)],
		IssueDate:        issue,
		ValidDays:        invoicing.Ptr(30),
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		LineItems:        sampleLineParams(i + 1),
	})
	if err != nil {
		return err
	}
	switch (i - 1) % 5 {
	case 1:
		err = srv.SendQuote(q.ID)
	case 2:
		if err = srv.SendQuote(q.ID); err == nil {
			_, err = srv.AcceptQuote(q.ID, invoicingtest.AcceptOptions{})
		}
	case 3:
		if err = srv.SendQuote(q.ID); err == nil {
			err = srv.DeclineQuote(q.ID)
		}
	case 4:
		err = srv.ExpireQuote(q.ID)
	}
	return err
}

// sampleClient alternates between the two seed clients.
func sampleClient(i int) string {
	if i%2 == 1 {
		return invoicingtest.SeedClientID
	}
	return invoicingtest.SeedOtherClientID
}

// sampleLineParams returns one to three lines for sample document i.
func sampleLineParams(i int) []invoicing.LineItemParams {
	lines := make([]invoicing.LineItemParams, 1+i%3)
	for j := range lines {
		s := sampleLines[(i+j)%len(sampleLines)]
		qty := decimal.NewFromInt(int64(1 + (i+j)%4))
		lines[j] = invoicing.LineItemParams{
			Description: s.description, Quantity: &qty, UnitPrice: s.unitPrice,
			TaxCodeID: s.taxCodeID, ItemID: s.itemID,
		}
	}
	return lines
}
