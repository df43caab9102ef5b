package invoicingtest

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// billStatuses are the statuses a bill of the fake goes through: draft or
// awaiting_approval when created, approved (ApproveBill), paid (PayBill).
var billStatuses = []invoicing.BillStatus{
	invoicing.BillStatusDraft, invoicing.BillStatusAwaitingApproval,
	invoicing.BillStatusApproved, invoicing.BillStatusPaid,
}

// billRequest is the body of POST /bills. Lines are like invoice lines;
// account_id is an expense (or asset) account.
type billRequest struct {
	SupplierID       string               `json:"supplier_id"`
	BillNumber       string               `json:"bill_number"`
	IssueDate        string               `json:"issue_date"`
	DueDate          string               `json:"due_date"`
	Currency         string               `json:"currency"`
	DefaultAccountID string               `json:"default_account_id"`
	DefaultTaxCodeID string               `json:"default_tax_code_id"`
	Status           invoicing.BillStatus `json:"status"`
	LineItems        []*lineRequest       `json:"line_items"`
}

// billJSON is a bill as the API shows it.
type billJSON struct {
	ID           string               `json:"id"`
	BillNumber   string               `json:"bill_number"`
	SupplierID   string               `json:"supplier_id"`
	SupplierName string               `json:"supplier_name"`
	Status       invoicing.BillStatus `json:"status"`
	IssueDate    date                 `json:"issue_date"`
	DueDate      date                 `json:"due_date"`
	Currency     string               `json:"currency"`
	Subtotal     money                `json:"subtotal"`
	TaxTotal     money                `json:"tax_total"`
	Total        money                `json:"total"`
	LineItems    []lineJSON           `json:"line_items"`
	CreatedAt    datetime             `json:"created_at"`
	UpdatedAt    *datetime            `json:"updated_at"`
}

// billView shows a bill. The caller holds s.mu.
func (s *Server) billView(b *bill) billJSON {
	subtotal, tax, total := sumLines(b.Lines)
	var supplier string
	if c := s.data.suppliers.get(b.SupplierID); c != nil {
		supplier = c.Name
	}
	return billJSON{
		ID: b.ID, BillNumber: b.Number, SupplierID: b.SupplierID, SupplierName: supplier,
		Status: b.Status, IssueDate: b.IssueDate, DueDate: b.DueDate,
		Currency: b.Currency, Subtotal: money(subtotal), TaxTotal: money(tax), Total: money(total),
		LineItems: lineViews(b.Lines),
		CreatedAt: datetime(b.CreatedAt), UpdatedAt: (*datetime)(b.UpdatedAt),
	}
}

// billFilter reads the filters of GET /bills: status and supplier_id.
func billFilter(q url.Values) (func(*bill) bool, *apiError) {
	status, err := oneOf(q, "status", billStatuses...)
	if err != nil {
		return nil, err
	}
	supplierID := q.Get("supplier_id")
	return func(b *bill) bool {
		return (status == "" || b.Status == status) && (supplierID == "" || b.SupplierID == supplierID)
	}, nil
}

// billCreated builds bill.created. The caller holds s.mu.
func (s *Server) billCreated(b *bill) event {
	return s.newEvent(webhooks.EventBillCreated, jsonobj.Object{
		{Key: "bill_id", Value: b.ID},
		{Key: "bill_number", Value: b.Number},
		{Key: "supplier_id", Value: b.SupplierID},
		{Key: "total", Value: moneyString(b.total())},
		{Key: "status", Value: b.Status},
		{Key: "created_at", Value: formatTime(b.CreatedAt)},
	})
}

// insertBill validates and stores a bill: 422 for an unknown supplier, a
// status other than draft or awaiting_approval, bad dates or lines; 409 when
// the supplier already has a bill with that number. The caller holds s.mu.
func (s *Server) insertBill(req *billRequest) (*bill, *apiError) {
	if req.SupplierID == "" {
		return nil, invalid("supplier_id is required")
	}
	if s.data.suppliers.get(req.SupplierID) == nil {
		return nil, invalid("supplier_id %s does not belong to the business", req.SupplierID)
	}
	status := req.Status
	if status == "" {
		status = invoicing.BillStatusDraft
	}
	if status != invoicing.BillStatusDraft && status != invoicing.BillStatusAwaitingApproval {
		return nil, invalid("status must be one of: draft, awaiting_approval")
	}
	currency, err := checkCurrency(req.Currency)
	if err != nil {
		return nil, err
	}
	issue, err := optionalDate("issue_date", req.IssueDate, s.today())
	if err != nil {
		return nil, err
	}
	due, err := optionalDate("due_date", req.DueDate, issue.AddDate(0, 0, defaultTermsDays))
	if err != nil {
		return nil, err
	}
	if due.Before(issue) {
		return nil, invalid("due_date must not be before issue_date")
	}
	lines, err := s.buildLines(req.LineItems, lineDefaults{req.DefaultAccountID, req.DefaultTaxCodeID})
	if err != nil {
		return nil, err
	}
	number := strings.TrimSpace(req.BillNumber)
	if number != "" {
		for _, other := range s.data.bills.all() {
			if other.SupplierID == req.SupplierID && other.Number == number {
				return nil, conflict("Bill number already exists for this supplier")
			}
		}
	} else {
		s.data.billSeq++
		number = fmt.Sprintf("BILL-%04d", s.data.billSeq)
	}
	b := &bill{
		ID: uuid.NewString(), Number: number, SupplierID: req.SupplierID, Status: status,
		IssueDate: date(issue), DueDate: date(due), Currency: currency, Lines: lines, CreatedAt: s.now(),
	}
	s.data.bills.add(b.ID, b)
	return b, nil
}

// ApproveBill approves a draft or awaiting_approval bill for payment and
// fires bill.approved.
func (s *Server) ApproveBill(billID string) error {
	_, err := s.act(func() ([]event, error) { return s.approveBill(billID) })
	return err
}

// approveBill approves the bill and returns the event to publish. The
// caller holds s.mu.
func (s *Server) approveBill(billID string) ([]event, error) {
	b, err := s.billFor(billID)
	if err == nil && b.Status != invoicing.BillStatusDraft && b.Status != invoicing.BillStatusAwaitingApproval {
		err = fmt.Errorf("%w: bill %s is %s", ErrInvalidState, b.Number, b.Status)
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	b.Status = invoicing.BillStatusApproved
	b.ApprovedAt = now
	b.UpdatedAt = &now
	ev := s.newEvent(webhooks.EventBillApproved, jsonobj.Object{
		{Key: "bill_id", Value: b.ID},
		{Key: "bill_number", Value: b.Number},
		{Key: "supplier_id", Value: b.SupplierID},
		{Key: "approved_at", Value: formatTime(now)},
	})
	return []event{ev}, nil
}

// PayBill marks an approved bill paid in full at paidAt (the server's
// current time when zero). The service documents no event for it, so none
// fires.
func (s *Server) PayBill(billID string, paidAt time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.billFor(billID)
	if err != nil {
		return err
	}
	if b.Status != invoicing.BillStatusApproved {
		return fmt.Errorf("%w: bill %s is %s; only approved bills can be paid", ErrInvalidState, b.Number, b.Status)
	}
	now := s.now()
	if paidAt.IsZero() {
		paidAt = now
	}
	b.Status = invoicing.BillStatusPaid
	b.PaidAt = paidAt.UTC()
	b.UpdatedAt = &now
	return nil
}

// billFor finds a bill for a helper. The caller holds s.mu.
func (s *Server) billFor(id string) (*bill, error) { return s.data.bills.find("bill", id) }
