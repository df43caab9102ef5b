package invoicing_test

import (
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go"
)

// The v1* types are the SDK's records as they were before the move to
// encoding/json/v2: the same fields and field types, no methods of their
// own, decoded with encoding/json (v1). They are the baseline of the
// decoding benchmarks and the reference of FuzzDecodeMatchesV1. Test code
// only.

type v1Invoice struct {
	ID            string                  `json:"id"`
	InvoiceNumber string                  `json:"invoice_number"`
	ClientID      string                  `json:"client_id"`
	ClientName    string                  `json:"client_name"`
	Status        invoicing.InvoiceStatus `json:"status"`
	IssueDate     invoicing.Date          `json:"issue_date"`
	DueDate       invoicing.Date          `json:"due_date"`
	Subtotal      decimal.Decimal         `json:"subtotal"`
	TaxTotal      decimal.Decimal         `json:"tax_total"`
	Total         decimal.Decimal         `json:"total"`
	AmountPaid    decimal.Decimal         `json:"amount_paid"`
	AmountDue     decimal.Decimal         `json:"amount_due"`
	Currency      string                  `json:"currency"`
	Notes         string                  `json:"notes"`
	Reference     string                  `json:"reference,omitempty"`
	LineItems     []v1InvoiceLine         `json:"line_items"`
	CreatedAt     time.Time               `json:"created_at"`
	UpdatedAt     *time.Time              `json:"updated_at"`
}

type v1InvoiceLine struct {
	ID          string          `json:"id"`
	Description string          `json:"description"`
	Quantity    decimal.Decimal `json:"quantity"`
	UnitPrice   decimal.Decimal `json:"unit_price"`
	Amount      decimal.Decimal `json:"amount"`
	TaxAmount   decimal.Decimal `json:"tax_amount"`
	AccountID   *string         `json:"account_id"`
	TaxCodeID   *string         `json:"tax_code_id"`
}

type v1Item struct {
	ID          string             `json:"id"`
	ItemCode    string             `json:"item_code"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	ItemType    invoicing.ItemType `json:"item_type"`
	UnitPrice   decimal.Decimal    `json:"unit_price"`
	IsTaxable   bool               `json:"is_taxable"`
	AccountID   string             `json:"account_id"`
	TaxCodeID   string             `json:"tax_code_id"`
	IsActive    bool               `json:"is_active"`
	CreatedAt   time.Time          `json:"created_at"`
	UpdatedAt   *time.Time         `json:"updated_at"`
}

type v1Quote struct {
	ID          string                `json:"id"`
	QuoteNumber string                `json:"quote_number"`
	Title       string                `json:"title"`
	ClientID    string                `json:"client_id"`
	ClientName  string                `json:"client_name"`
	Status      invoicing.QuoteStatus `json:"status"`
	IssueDate   invoicing.Date        `json:"issue_date"`
	ValidUntil  invoicing.Date        `json:"valid_until"`
	Subtotal    decimal.Decimal       `json:"subtotal"`
	TaxTotal    decimal.Decimal       `json:"tax_total"`
	Total       decimal.Decimal       `json:"total"`
	Currency    string                `json:"currency"`
	Notes       string                `json:"notes"`
	LineItems   []v1QuoteLine         `json:"line_items"`
	CreatedAt   time.Time             `json:"created_at"`
	UpdatedAt   *time.Time            `json:"updated_at"`
}

type v1QuoteLine struct {
	ID          string          `json:"id"`
	ItemID      string          `json:"item_id"`
	ItemCode    string          `json:"item_code"`
	ItemName    string          `json:"item_name"`
	Description string          `json:"description"`
	Quantity    decimal.Decimal `json:"quantity"`
	UnitPrice   decimal.Decimal `json:"unit_price"`
	Amount      decimal.Decimal `json:"amount"`
	TaxAmount   decimal.Decimal `json:"tax_amount"`
}

// The outline records, as v1 decoded them when every field fit.

type v1Contact struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Email     string     `json:"email"`
	Phone     string     `json:"phone"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
}

type v1Bill struct {
	ID           string               `json:"id"`
	BillNumber   string               `json:"bill_number"`
	SupplierID   string               `json:"supplier_id"`
	SupplierName string               `json:"supplier_name"`
	Status       invoicing.BillStatus `json:"status"`
	IssueDate    invoicing.Date       `json:"issue_date"`
	DueDate      invoicing.Date       `json:"due_date"`
	Currency     string               `json:"currency"`
	Subtotal     decimal.Decimal      `json:"subtotal"`
	TaxTotal     decimal.Decimal      `json:"tax_total"`
	Total        decimal.Decimal      `json:"total"`
	LineItems    []v1InvoiceLine      `json:"line_items"`
	CreatedAt    time.Time            `json:"created_at"`
	UpdatedAt    *time.Time           `json:"updated_at"`
}

type v1Account struct {
	ID       string                `json:"id"`
	Code     string                `json:"code"`
	Name     string                `json:"name"`
	Type     invoicing.AccountType `json:"type"`
	IsActive *bool                 `json:"is_active"`
}

type v1TaxCode struct {
	ID     string          `json:"id"`
	Code   string          `json:"code"`
	Name   string          `json:"name"`
	Rate   decimal.Decimal `json:"rate"`
	Region string          `json:"region"`
}

type v1Report struct {
	Name     string          `json:"report"`
	AsAt     invoicing.Date  `json:"as_at"`
	FromDate invoicing.Date  `json:"from_date"`
	ToDate   invoicing.Date  `json:"to_date"`
	Currency string          `json:"currency"`
	Lines    []v1ReportLine  `json:"lines"`
	Totals   json.RawMessage `json:"totals"`
}

type v1ReportLine struct {
	AccountID   string                `json:"account_id"`
	AccountCode string                `json:"account_code"`
	AccountName string                `json:"account_name"`
	AccountType invoicing.AccountType `json:"account_type"`
	Debit       decimal.Decimal       `json:"debit"`
	Credit      decimal.Decimal       `json:"credit"`
	Balance     decimal.Decimal       `json:"balance"`
}

type v1BankAccount struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	AccountNumber string          `json:"account_number"`
	Currency      string          `json:"currency"`
	Balance       decimal.Decimal `json:"balance"`
}

type v1BankTransaction struct {
	ID            string          `json:"id"`
	BankAccountID string          `json:"bank_account_id"`
	Date          invoicing.Date  `json:"date"`
	Description   string          `json:"description"`
	Amount        decimal.Decimal `json:"amount"`
	Reference     string          `json:"reference"`
	Status        string          `json:"status"`
}

// v1InvoicePage is a page of invoices as a hand-written client decodes it.
type v1InvoicePage struct {
	Invoices []v1Invoice `json:"invoices"`
	Total    int         `json:"total"`
	Page     int         `json:"page"`
	PageSize int         `json:"page_size"`
	HasMore  bool        `json:"has_more"`
}
