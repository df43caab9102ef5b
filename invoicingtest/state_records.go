package invoicingtest

import (
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// The JSON document of SaveState and LoadState: one saved* type per record,
// with snake_case keys, a save* function that copies a record out and a
// restore method that rebuilds it. Amounts that follow from others (line
// totals, an invoice's amount paid) are not saved but recomputed.

// stateDoc is the whole document.
type stateDoc struct {
	Version          int                    `json:"version"`
	SavedAt          time.Time              `json:"saved_at"`
	FullKey          string                 `json:"full_key"`
	ReadOnlyKey      string                 `json:"read_only_key"`
	APIKeys          []savedKey             `json:"api_keys"`
	Clients          []savedContact         `json:"clients"`
	Suppliers        []savedContact         `json:"suppliers"`
	Accounts         []savedAccount         `json:"accounts"`
	TaxCodes         []savedTaxCode         `json:"tax_codes"`
	Items            []savedItem            `json:"items"`
	Invoices         []savedInvoice         `json:"invoices"`
	Quotes           []savedQuote           `json:"quotes"`
	Bills            []savedBill            `json:"bills"`
	BankAccounts     []savedBankAccount     `json:"bank_accounts"`
	BankTransactions []savedBankTransaction `json:"bank_transactions"`
	Payments         []savedPayment         `json:"payments"`
	Counters         savedCounters          `json:"counters"`
}

type savedKey struct {
	Key    string   `json:"key"`
	Scopes []string `json:"scopes"`
}

// savedCounters are the last numbers generated for INV-, QU- and BILL-.
type savedCounters struct {
	Invoices int `json:"invoices"`
	Quotes   int `json:"quotes"`
	Bills    int `json:"bills"`
}

// savedDecimal is an exact decimal saved as a JSON string.
type savedDecimal decimal.Decimal

// MarshalJSONTo writes the decimal as a JSON string.
func (d savedDecimal) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteToken(jsontext.String(decimal.Decimal(d).String()))
}

// Bounds on saved decimals, checked from their digits and exponent alone
// (comparing a number such as 1e999999999 would take forever): below
// 10^maxSavedDigits in magnitude, at most maxSavedPlaces decimal places.
const (
	maxSavedDigits = 15
	maxSavedPlaces = 12
)

// UnmarshalJSONFrom reads a decimal from a JSON string.
func (d *savedDecimal) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	s, err := readString(dec, "a decimal")
	if err != nil {
		return err
	}
	v, err := decimal.NewFromString(s)
	if err != nil {
		return err
	}
	if v.Exponent() < -maxSavedPlaces || v.NumDigits()+int(v.Exponent()) > maxSavedDigits {
		return fmt.Errorf("decimal %.40q is out of range", s)
	}
	*d = savedDecimal(v)
	return nil
}

// savedDate is a civil date saved as "YYYY-MM-DD".
type savedDate time.Time

// MarshalJSONTo writes the date as "YYYY-MM-DD".
func (d savedDate) MarshalJSONTo(enc *jsontext.Encoder) error { return date(d).MarshalJSONTo(enc) }

// UnmarshalJSONFrom reads a "YYYY-MM-DD" date.
func (d *savedDate) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	s, err := readString(dec, "a date")
	if err != nil {
		return err
	}
	t, err := parseDate(s)
	*d = savedDate(t)
	return err
}

// readString reads a JSON string, or fails saying that what must be one.
func readString(dec *jsontext.Decoder, what string) (string, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return "", err
	}
	if tok.Kind() != '"' {
		return "", fmt.Errorf("%s must be a JSON string", what)
	}
	return tok.String(), nil
}

type savedContact struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Email     string     `json:"email"`
	Phone     string     `json:"phone"`
	Line1     string     `json:"address_line1"`
	Line2     string     `json:"address_line2"`
	City      string     `json:"city"`
	State     string     `json:"state"`
	Postcode  string     `json:"postcode"`
	Country   string     `json:"country"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at,omitzero"`
}

func saveContact(c *contact) savedContact {
	a := c.Address
	return savedContact{c.ID, c.Name, c.Email, c.Phone, a.Line1, a.Line2, a.City, a.State, a.Postcode, a.Country, c.createdAt, c.updatedAt}
}

func (c savedContact) restore() *contact {
	return &contact{
		Contact:   Contact{c.ID, c.Name, c.Email, c.Phone, Address{c.Line1, c.Line2, c.City, c.State, c.Postcode, c.Country}},
		createdAt: c.CreatedAt, updatedAt: c.UpdatedAt,
	}
}

type savedAccount struct {
	ID       string `json:"id"`
	Code     string `json:"code"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Inactive bool   `json:"inactive,omitzero"`
}

func saveAccount(a *Account) savedAccount { return savedAccount(*a) }

func (a savedAccount) restore() *Account { return &Account{a.ID, a.Code, a.Name, a.Type, a.Inactive} }

type savedTaxCode struct {
	ID     string       `json:"id"`
	Code   string       `json:"code"`
	Name   string       `json:"name"`
	Rate   savedDecimal `json:"rate"`
	Region string       `json:"region"`
}

func saveTaxCode(t *TaxCode) savedTaxCode {
	return savedTaxCode{t.ID, t.Code, t.Name, savedDecimal(t.Rate), t.Region}
}

func (t savedTaxCode) restore() *TaxCode {
	return &TaxCode{t.ID, t.Code, t.Name, decimal.Decimal(t.Rate), t.Region}
}

type savedItem struct {
	ID          string             `json:"id"`
	ItemCode    string             `json:"item_code"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	ItemType    invoicing.ItemType `json:"item_type"`
	UnitPrice   savedDecimal       `json:"unit_price"`
	IsTaxable   bool               `json:"is_taxable"`
	IsActive    bool               `json:"is_active"`
	AccountID   string             `json:"account_id"`
	TaxCodeID   string             `json:"tax_code_id"`
	CreatedAt   time.Time          `json:"created_at"`
	UpdatedAt   *time.Time         `json:"updated_at,omitzero"`
}

func saveItem(it *item) savedItem {
	return savedItem{
		ID: it.id, ItemCode: it.code, Name: it.name, Description: it.description, ItemType: it.itemType,
		UnitPrice: savedDecimal(it.unitPrice), IsTaxable: it.isTaxable, IsActive: it.isActive,
		AccountID: it.accountID, TaxCodeID: it.taxCodeID, CreatedAt: it.createdAt, UpdatedAt: it.updatedAt,
	}
}

func (it savedItem) restore() *item {
	return &item{
		id: it.ID, code: it.ItemCode, name: it.Name, description: it.Description, itemType: it.ItemType,
		unitPrice: decimal.Decimal(it.UnitPrice), isTaxable: it.IsTaxable, isActive: it.IsActive,
		accountID: it.AccountID, taxCodeID: it.TaxCodeID, createdAt: it.CreatedAt, updatedAt: it.UpdatedAt,
	}
}

// savedLine is a line of an invoice, quote or bill; its amounts are
// recomputed on restore.
type savedLine struct {
	ID               string       `json:"id"`
	ItemID           string       `json:"item_id,omitempty"`
	ItemCode         string       `json:"item_code,omitempty"`
	ItemName         string       `json:"item_name,omitempty"`
	Description      string       `json:"description"`
	Quantity         savedDecimal `json:"quantity"`
	UnitPrice        savedDecimal `json:"unit_price"`
	TaxRate          savedDecimal `json:"tax_rate"`
	AccountID        string       `json:"account_id"`
	TaxCodeID        string       `json:"tax_code_id"`
	Optional         bool         `json:"optional,omitzero"`
	QuantityEditable bool         `json:"quantity_editable,omitzero"`
}

func saveLines(lines []line) []savedLine {
	return mapAll(pointers(lines), func(l *line) savedLine {
		return savedLine{
			ID: l.id, ItemID: l.itemID, ItemCode: l.itemCode, ItemName: l.itemName, Description: l.description,
			Quantity: savedDecimal(l.quantity), UnitPrice: savedDecimal(l.unitPrice), TaxRate: savedDecimal(l.taxRate),
			AccountID: l.accountID, TaxCodeID: l.taxCodeID, Optional: l.optional, QuantityEditable: l.quantityEditable,
		}
	})
}

// restore rebuilds the line, computing its amounts as buildLine does.
func (l *savedLine) restore() line {
	out := line{
		id: l.ID, itemID: l.ItemID, itemCode: l.ItemCode, itemName: l.ItemName, description: l.Description,
		quantity: decimal.Decimal(l.Quantity), unitPrice: decimal.Decimal(l.UnitPrice), taxRate: decimal.Decimal(l.TaxRate),
		accountID: l.AccountID, taxCodeID: l.TaxCodeID, optional: l.Optional, quantityEditable: l.QuantityEditable,
	}
	out.setAmounts()
	return out
}

// savedInvoice is an invoice; its amount paid is added up from the payments
// on restore.
type savedInvoice struct {
	ID         string                  `json:"id"`
	Number     string                  `json:"invoice_number"`
	ClientID   string                  `json:"client_id"`
	Status     invoicing.InvoiceStatus `json:"status"`
	IssueDate  savedDate               `json:"issue_date"`
	DueDate    savedDate               `json:"due_date"`
	Currency   string                  `json:"currency"`
	Notes      string                  `json:"notes"`
	Reference  string                  `json:"reference"`
	Lines      []savedLine             `json:"line_items"`
	CreatedAt  time.Time               `json:"created_at"`
	UpdatedAt  *time.Time              `json:"updated_at,omitzero"`
	ShareToken string                  `json:"share_token,omitempty"`
}

func saveInvoice(inv *invoice) savedInvoice {
	return savedInvoice{
		ID: inv.id, Number: inv.number, ClientID: inv.clientID, Status: inv.status,
		IssueDate: savedDate(inv.issueDate), DueDate: savedDate(inv.dueDate),
		Currency: inv.currency, Notes: inv.notes, Reference: inv.reference, Lines: saveLines(inv.lines),
		CreatedAt: inv.createdAt, UpdatedAt: inv.updatedAt, ShareToken: inv.shareToken,
	}
}

func (inv savedInvoice) restore(lines []line) *invoice {
	return &invoice{
		id: inv.ID, number: inv.Number, clientID: inv.ClientID, status: inv.Status,
		issueDate: time.Time(inv.IssueDate), dueDate: time.Time(inv.DueDate),
		currency: inv.Currency, notes: inv.Notes, reference: inv.Reference, lines: lines,
		createdAt: inv.CreatedAt, updatedAt: inv.UpdatedAt, shareToken: inv.ShareToken,
	}
}

type savedRecipient struct {
	QuoteContactID string `json:"quote_contact_id"`
	ContactID      string `json:"contact_id"`
	Name           string `json:"name"`
	Email          string `json:"email"`
	Type           string `json:"type"`
}

func saveRecipient(r *Recipient) savedRecipient {
	return savedRecipient{r.QuoteContactID, r.ContactID, r.Name, r.Email, r.Type}
}

func (r *savedRecipient) restore() Recipient {
	return Recipient{ContactID: r.ContactID, Name: r.Name, Email: r.Email, Type: r.Type, QuoteContactID: r.QuoteContactID}
}

// savedQuote is a quote with its offered lines, sharing and viewing
// history, and acceptance (while accepted).
type savedQuote struct {
	ID           string                `json:"id"`
	Number       string                `json:"quote_number"`
	Title        string                `json:"title"`
	ClientID     string                `json:"client_id"`
	Status       invoicing.QuoteStatus `json:"status"`
	IssueDate    savedDate             `json:"issue_date"`
	ValidUntil   savedDate             `json:"valid_until"`
	Currency     string                `json:"currency"`
	Notes        string                `json:"notes"`
	Lines        []savedLine           `json:"line_items"`
	CreatedAt    time.Time             `json:"created_at"`
	UpdatedAt    *time.Time            `json:"updated_at,omitzero"`
	ShareToken   string                `json:"share_token,omitempty"`
	Recipients   []savedRecipient      `json:"recipients,omitempty"`
	ViewCount    int                   `json:"view_count,omitzero"`
	LastViewedAt *time.Time            `json:"last_viewed_at,omitzero"`
	Acceptance   *savedAcceptance      `json:"acceptance,omitzero"`
}

type savedAcceptance struct {
	Lines          []savedLine           `json:"line_items"`
	PreviousStatus invoicing.QuoteStatus `json:"previous_status"`
	ByStaff        bool                  `json:"by_staff"`
	Contact        *savedRecipient       `json:"contact,omitzero"`
	AcceptedBy     string                `json:"accepted_by"`
	AcceptedAt     time.Time             `json:"accepted_at"`
	Comments       string                `json:"comments"`
	OrderNumber    string                `json:"order_number"`
	Selections     map[string]any        `json:"interactive_selections"`
	InvoiceID      string                `json:"invoice_id,omitempty"`
}

func saveQuote(q *quote) savedQuote {
	st := savedQuote{
		ID: q.id, Number: q.number, Title: q.title, ClientID: q.clientID, Status: q.status,
		IssueDate: savedDate(q.issueDate), ValidUntil: savedDate(q.validUntil),
		Currency: q.currency, Notes: q.notes, Lines: saveLines(q.lines),
		CreatedAt: q.createdAt, UpdatedAt: q.updatedAt, ShareToken: q.shareToken,
		Recipients: mapAll(pointers(q.recipients), saveRecipient),
		ViewCount:  q.viewCount, LastViewedAt: q.lastViewedAt,
	}
	if a := q.acceptance; a != nil {
		st.Acceptance = &savedAcceptance{
			Lines: saveLines(a.lines), PreviousStatus: a.previousStatus, ByStaff: a.byStaff,
			AcceptedBy: a.acceptedBy, AcceptedAt: a.acceptedAt, Comments: a.comments, OrderNumber: a.orderNumber,
			Selections: a.selections, InvoiceID: a.invoiceID,
		}
		if a.contact != nil {
			c := saveRecipient(a.contact)
			st.Acceptance.Contact = &c
		}
	}
	return st
}

// restore rebuilds the quote without its acceptance, which the caller adds.
func (q savedQuote) restore(lines []line) *quote {
	return &quote{
		id: q.ID, number: q.Number, title: q.Title, clientID: q.ClientID, status: q.Status,
		issueDate: time.Time(q.IssueDate), validUntil: time.Time(q.ValidUntil),
		currency: q.Currency, notes: q.Notes, lines: lines, createdAt: q.CreatedAt, updatedAt: q.UpdatedAt,
		shareToken: q.ShareToken, recipients: mapAll(pointers(q.Recipients), (*savedRecipient).restore),
		viewCount: q.ViewCount, lastViewedAt: q.LastViewedAt,
	}
}

func (a *savedAcceptance) restore(lines []line) *acceptance {
	acc := &acceptance{
		lines: lines, previousStatus: a.PreviousStatus, byStaff: a.ByStaff,
		acceptedBy: a.AcceptedBy, acceptedAt: a.AcceptedAt, comments: a.Comments, orderNumber: a.OrderNumber,
		selections: a.Selections, invoiceID: a.InvoiceID,
	}
	if a.Contact != nil {
		c := a.Contact.restore()
		acc.contact = &c
	}
	return acc
}

type savedBill struct {
	ID         string               `json:"id"`
	Number     string               `json:"bill_number"`
	SupplierID string               `json:"supplier_id"`
	Status     invoicing.BillStatus `json:"status"`
	IssueDate  savedDate            `json:"issue_date"`
	DueDate    savedDate            `json:"due_date"`
	Currency   string               `json:"currency"`
	Lines      []savedLine          `json:"line_items"`
	CreatedAt  time.Time            `json:"created_at"`
	UpdatedAt  *time.Time           `json:"updated_at,omitzero"`
	ApprovedAt time.Time            `json:"approved_at,omitzero"`
	PaidAt     time.Time            `json:"paid_at,omitzero"`
}

func saveBill(b *bill) savedBill {
	return savedBill{
		ID: b.id, Number: b.number, SupplierID: b.supplierID, Status: b.status,
		IssueDate: savedDate(b.issueDate), DueDate: savedDate(b.dueDate), Currency: b.currency,
		Lines: saveLines(b.lines), CreatedAt: b.createdAt, UpdatedAt: b.updatedAt,
		ApprovedAt: b.approvedAt, PaidAt: b.paidAt,
	}
}

func (b savedBill) restore(lines []line) *bill {
	return &bill{
		id: b.ID, number: b.Number, supplierID: b.SupplierID, status: b.Status,
		issueDate: time.Time(b.IssueDate), dueDate: time.Time(b.DueDate), currency: b.Currency,
		lines: lines, createdAt: b.CreatedAt, updatedAt: b.UpdatedAt, approvedAt: b.ApprovedAt, paidAt: b.PaidAt,
	}
}

type savedBankAccount struct {
	ID             string       `json:"id"`
	Name           string       `json:"name"`
	AccountNumber  string       `json:"account_number"`
	Currency       string       `json:"currency"`
	OpeningBalance savedDecimal `json:"opening_balance"`
}

func saveBankAccount(b *BankAccount) savedBankAccount {
	return savedBankAccount{b.ID, b.Name, b.AccountNumber, b.Currency, savedDecimal(b.OpeningBalance)}
}

func (b savedBankAccount) restore() *BankAccount {
	return &BankAccount{b.ID, b.Name, b.AccountNumber, b.Currency, decimal.Decimal(b.OpeningBalance)}
}

type savedBankTransaction struct {
	ID            string       `json:"id"`
	BankAccountID string       `json:"bank_account_id"`
	Date          savedDate    `json:"date"`
	Description   string       `json:"description"`
	Reference     string       `json:"reference"`
	Amount        savedDecimal `json:"amount"`
	Status        string       `json:"status"`
}

func saveBankTransaction(t *BankTransaction) savedBankTransaction {
	return savedBankTransaction{t.ID, t.BankAccountID, savedDate(t.Date), t.Description, t.Reference, savedDecimal(t.Amount), t.Status}
}

func (t savedBankTransaction) restore() *BankTransaction {
	return &BankTransaction{t.ID, t.BankAccountID, time.Time(t.Date), t.Description, t.Reference, decimal.Decimal(t.Amount), t.Status}
}

type savedPayment struct {
	ID         string       `json:"id"`
	InvoiceID  string       `json:"invoice_id"`
	Amount     savedDecimal `json:"amount"`
	Method     string       `json:"payment_method"`
	ReceivedAt time.Time    `json:"received_at"`
}

func savePayment(p *payment) savedPayment {
	return savedPayment{p.id, p.invoiceID, savedDecimal(p.amount), p.method, p.receivedAt}
}

func (p savedPayment) restore() payment {
	return payment{p.ID, p.InvoiceID, decimal.Decimal(p.Amount), p.Method, p.ReceivedAt}
}
