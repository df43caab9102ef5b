package invoicingtest

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// Payment methods, the payment_method of payment.received. The service
// documents bank_transfer and says another value names the card payment
// processor and that others exist.
const (
	PaymentBankTransfer = "bank_transfer"
	PaymentCard         = "stripe"
	PaymentCash         = "cash"
)

// Payment is a payment to allocate to an invoice with RecordPayment.
type Payment struct {
	// Amount must be greater than zero and at most the invoice's amount due.
	Amount decimal.Decimal
	// Method is the payment_method; default PaymentBankTransfer.
	Method string
	// ReceivedAt defaults to the server's current time.
	ReceivedAt time.Time
}

// RecordPayment allocates a payment (deposit, partial or full) to an
// invoice that is awaiting_payment or overdue (a draft must be sent first,
// as in the service, where drafts take no payments), and returns the
// payment's id. amount_paid grows and amount_due shrinks; payment.received
// fires, and when the balance is cleared the invoice becomes paid and
// invoice.paid fires too. invoice.updated does not fire for payments.
func (s *Server) RecordPayment(invoiceID string, p Payment) (string, error) {
	var id string
	_, err := s.act(func() (events []event, err error) {
		id, events, err = s.recordPayment(invoiceID, p)
		return events, err
	})
	return id, err
}

// recordPayment allocates the payment and returns its id and the events to
// publish. The caller holds s.mu.
func (s *Server) recordPayment(invoiceID string, p Payment) (string, []event, error) {
	inv, err := s.invoiceFor(invoiceID)
	if err != nil {
		return "", nil, err
	}
	if inv.Status != invoicing.InvoiceStatusAwaitingPayment && inv.Status != invoicing.InvoiceStatusOverdue {
		return "", nil, fmt.Errorf("%w: invoice %s is %s; payments go to awaiting_payment or overdue invoices", ErrInvalidState, inv.Number, inv.Status)
	}
	due := inv.amountDue()
	if !p.Amount.IsPositive() || p.Amount.GreaterThan(due) {
		return "", nil, fmt.Errorf("invoicingtest: payment amount %s must be greater than 0 and at most the amount due %s",
			FormatMoney(p.Amount), FormatMoney(due))
	}
	if p.Method == "" {
		p.Method = PaymentBankTransfer
	}
	now := s.now()
	received := p.ReceivedAt.UTC().Truncate(time.Second)
	if p.ReceivedAt.IsZero() {
		received = now
	}
	pay := payment{ID: uuid.NewString(), InvoiceID: inv.ID, Amount: p.Amount, Method: p.Method, ReceivedAt: received}
	s.data.payments = append(s.data.payments, pay)
	inv.amountPaid = inv.amountPaid.Add(p.Amount)
	inv.UpdatedAt = &now

	body := jsonobj.Object{
		{Key: "payment_id", Value: pay.ID},
		{Key: "invoice_id", Value: inv.ID},
		{Key: "amount", Value: moneyString(pay.Amount)},
		{Key: "payment_method", Value: pay.Method},
		{Key: "received_at", Value: formatTime(received)},
		{Key: "invoice_number", Value: inv.Number},
	}
	if inv.Reference != "" {
		body = append(body, jsonobj.Field{Key: "reference", Value: inv.Reference})
	}
	events := []event{s.newEvent(webhooks.EventPaymentReceived, body)}
	if inv.amountDue().IsZero() {
		inv.Status = invoicing.InvoiceStatusPaid
		events = append(events, s.newEvent(webhooks.EventInvoicePaid, jsonobj.Object{
			{Key: "invoice_id", Value: inv.ID},
			{Key: "invoice_number", Value: inv.Number},
			{Key: "client_id", Value: inv.ClientID},
			{Key: "reference", Value: nullString(inv.Reference)},
			{Key: "amount_paid", Value: moneyString(inv.amountPaid)},
			{Key: "paid_at", Value: formatTime(received)},
		}))
	}
	return pay.ID, events, nil
}

// SendInvoice sends an invoice (or marks it sent): a draft becomes
// awaiting_payment, and invoice.sent fires. Voided invoices cannot be sent.
func (s *Server) SendInvoice(invoiceID string) error {
	_, err := s.act(func() ([]event, error) { return s.sendInvoice(invoiceID) })
	return err
}

// sendInvoice sends the invoice and returns the event to publish. The
// caller holds s.mu.
func (s *Server) sendInvoice(invoiceID string) ([]event, error) {
	inv, err := s.invoiceFor(invoiceID)
	if err == nil && inv.Status == invoicing.InvoiceStatusVoided {
		err = fmt.Errorf("%w: invoice %s is voided", ErrInvalidState, inv.Number)
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	if inv.Status == invoicing.InvoiceStatusDraft {
		inv.Status = invoicing.InvoiceStatusAwaitingPayment
	}
	if inv.ShareToken == "" {
		inv.ShareToken = randomHex(16)
	}
	inv.UpdatedAt = &now
	ev := s.newEvent(webhooks.EventInvoiceSent, jsonobj.Object{
		{Key: "invoice_id", Value: inv.ID},
		{Key: "invoice_number", Value: inv.Number},
		{Key: "client_id", Value: inv.ClientID},
		{Key: "sent_at", Value: formatTime(now)},
	})
	return []event{ev}, nil
}

// InvoiceUpdate is a change to an invoice's header made with UpdateInvoice.
// Zero fields are left unchanged.
type InvoiceUpdate struct {
	// Notes replaces the notes when not nil.
	Notes *string
	// DueDate replaces the due date (its time of day is ignored); it must
	// not be before the issue date.
	DueDate time.Time
	// Status sets draft, awaiting_payment, overdue or voided. Paid comes
	// only from payments; a paid invoice's status cannot be changed, and an
	// invoice with payments cannot become draft or voided. An invoice set
	// awaiting_payment still reads overdue while its due date is past and a
	// balance remains; one set overdue stays overdue until changed (see
	// "Statuses" in the package documentation).
	Status invoicing.InvoiceStatus
}

// UpdateInvoice changes an invoice's header, as staff would in the user
// interface, and fires invoice.updated. An invoice becomes overdue without
// it: see "Statuses" in the package documentation.
func (s *Server) UpdateInvoice(invoiceID string, u InvoiceUpdate) error {
	_, err := s.act(func() ([]event, error) { return s.updateInvoice(invoiceID, u) })
	return err
}

// updateInvoice changes the invoice and returns the event to publish. The
// caller holds s.mu.
func (s *Server) updateInvoice(invoiceID string, u InvoiceUpdate) ([]event, error) {
	inv, err := s.invoiceFor(invoiceID)
	if err != nil {
		return nil, err
	}
	if err := checkStatusChange(inv, u.Status); err != nil {
		return nil, err
	}
	due := date(dateOf(u.DueDate))
	if !u.DueDate.IsZero() && time.Time(due).Before(time.Time(inv.IssueDate)) {
		return nil, fmt.Errorf("invoicingtest: due date %s is before the issue date %s", due, inv.IssueDate)
	}
	if u.Notes != nil {
		inv.Notes = *u.Notes
	}
	if !u.DueDate.IsZero() {
		inv.DueDate = due
	}
	if u.Status != "" {
		inv.Status = u.Status
	}
	now := s.now()
	inv.UpdatedAt = &now
	return []event{s.invoiceEvent(webhooks.EventInvoiceUpdated, inv)}, nil
}

// checkStatusChange reports whether UpdateInvoice may set the status.
func checkStatusChange(inv *invoice, status invoicing.InvoiceStatus) error {
	switch status {
	case "":
		return nil
	case invoicing.InvoiceStatusDraft, invoicing.InvoiceStatusAwaitingPayment, invoicing.InvoiceStatusOverdue, invoicing.InvoiceStatusVoided:
	default:
		return fmt.Errorf("invoicingtest: UpdateInvoice cannot set status %q", status)
	}
	switch {
	case inv.Status == invoicing.InvoiceStatusPaid:
		return fmt.Errorf("%w: invoice %s is paid", ErrInvalidState, inv.Number)
	case inv.amountPaid.IsPositive() && (status == invoicing.InvoiceStatusDraft || status == invoicing.InvoiceStatusVoided):
		return fmt.Errorf("%w: invoice %s has payments and cannot become %s", ErrInvalidState, inv.Number, status)
	}
	return nil
}

// invoiceFor finds an invoice for a helper. The caller holds s.mu.
func (s *Server) invoiceFor(id string) (*invoice, error) { return s.data.invoices.find("invoice", id) }
