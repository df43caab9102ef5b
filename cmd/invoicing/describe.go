package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// describe returns the line listen prints for a verified delivery: the
// signing time, the event type, the delivery id and the event's key
// fields as name=value pairs.
func describe(d *webhooks.Delivery) string {
	var kv []string
	add := func(name string, value any) {
		var s string
		switch v := value.(type) {
		case decimal.Decimal:
			s = invoicingtest.FormatMoney(v)
		case *string:
			if v == nil {
				return
			}
			s = *v
		default:
			s = fmt.Sprint(v)
		}
		// Quote what would not read as one token, and any control
		// character, so that a body cannot forge output lines.
		if q := strconv.Quote(s); s == "" || strings.ContainsAny(s, " \"=") || q != `"`+s+`"` {
			s = q
		}
		kv = append(kv, name+"="+s)
	}
	switch e := d.Event.(type) {
	case *webhooks.InvoiceCreated:
		add("invoice_id", e.InvoiceID)
		add("invoice_number", e.InvoiceNumber)
		add("total", e.Total)
		add("status", e.Status)
	case *webhooks.InvoiceSent:
		add("invoice_id", e.InvoiceID)
		add("invoice_number", e.InvoiceNumber)
	case *webhooks.InvoiceUpdated:
		add("invoice_id", e.InvoiceID)
		add("invoice_number", e.InvoiceNumber)
		add("total", e.Total)
		add("status", e.Status)
	case *webhooks.InvoicePaid:
		add("invoice_id", e.InvoiceID)
		add("invoice_number", e.InvoiceNumber)
		add("amount_paid", e.AmountPaid)
	case *webhooks.BillCreated:
		add("bill_id", e.BillID)
		add("bill_number", e.BillNumber)
		add("total", e.Total)
		add("status", e.Status)
	case *webhooks.BillApproved:
		add("bill_id", e.BillID)
		add("bill_number", e.BillNumber)
	case *webhooks.ContactCreated:
		add("contact_id", e.ContactID)
		add("contact_type", e.ContactType)
		add("name", e.Name)
	case *webhooks.PaymentReceived:
		add("payment_id", e.PaymentID)
		add("invoice_id", e.InvoiceID)
		add("amount", e.Amount)
		add("payment_method", e.PaymentMethod)
	case *webhooks.QuoteCreated:
		addQuote(add, &e.Quote)
	case *webhooks.QuoteSent:
		addQuote(add, &e.Quote)
	case *webhooks.QuoteViewed:
		addQuote(add, &e.Quote)
		add("view_count", e.ViewCount)
	case *webhooks.QuoteAccepted:
		addQuote(add, &e.Quote)
		add("accepted_by", e.AcceptedBy)
		add("invoice_number", e.InvoiceNumber)
	case *webhooks.QuoteUnaccepted:
		addQuote(add, &e.Quote)
		add("previous_status", e.PreviousStatus)
	case *webhooks.Test:
		add("message", e.Message)
	case *webhooks.RawEvent:
		add("bytes", len(e.Body))
	}
	head := fmt.Sprintf("%s %s delivery=%s", d.Timestamp.Format(time.RFC3339), d.Type, d.ID)
	return strings.Join(append([]string{head}, kv...), " ")
}

// addQuote adds the key fields every quote event shares.
func addQuote(add func(string, any), q *webhooks.Quote) {
	add("quote_id", q.QuoteID)
	add("quote_number", q.QuoteNumber)
	add("status", q.Status)
	add("total", q.Total)
}
