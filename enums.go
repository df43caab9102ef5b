package invoicing

import "slices"

// The string enums of the API. Each keeps values the SDK does not know yet
// as they are: compare against the constants rather than switching
// exhaustively, and ask Known.

// InvoiceStatus is the status of an invoice. Values the SDK does not know yet
// are kept as they are, so compare against the constants rather than switching
// exhaustively.
type InvoiceStatus string

// Invoice statuses documented by the API.
const (
	InvoiceStatusDraft           InvoiceStatus = "draft"
	InvoiceStatusAwaitingPayment InvoiceStatus = "awaiting_payment"
	InvoiceStatusPaid            InvoiceStatus = "paid"
	InvoiceStatusOverdue         InvoiceStatus = "overdue"
	InvoiceStatusVoided          InvoiceStatus = "voided"
)

// Known reports whether s is one of the documented invoice statuses.
func (s InvoiceStatus) Known() bool { return slices.Contains(knownInvoiceStatuses, s) }

// QuoteStatus is the status of a quote. Unknown values are kept as they are.
type QuoteStatus string

// Quote statuses documented by the API.
const (
	QuoteStatusDraft    QuoteStatus = "draft"
	QuoteStatusSent     QuoteStatus = "sent"
	QuoteStatusAccepted QuoteStatus = "accepted"
	QuoteStatusDeclined QuoteStatus = "declined"
	QuoteStatusExpired  QuoteStatus = "expired"
)

// Known reports whether s is one of the documented quote statuses.
func (s QuoteStatus) Known() bool { return slices.Contains(knownQuoteStatuses, s) }

// ItemType is the type of a catalog item. Unknown values are kept as they are.
type ItemType string

// Item types documented by the API.
const (
	ItemTypeSales    ItemType = "SALES"
	ItemTypePurchase ItemType = "PURCHASE"
	ItemTypeText     ItemType = "TEXT"
)

// Known reports whether t is one of the documented item types.
func (t ItemType) Known() bool { return slices.Contains(knownItemTypes, t) }

// AccountType is the type of a ledger account, as in the list filter
// type=revenue. Values the SDK does not know are kept as they are, so
// compare against the constants rather than switching exhaustively.
type AccountType string

// Account types: AccountTypeRevenue is the value of the service's list
// filter type=revenue; the others name the usual types of a chart of
// accounts.
const (
	AccountTypeRevenue   AccountType = "revenue"
	AccountTypeExpense   AccountType = "expense"
	AccountTypeAsset     AccountType = "asset"
	AccountTypeLiability AccountType = "liability"
	AccountTypeEquity    AccountType = "equity"
)

// Known reports whether t is one of the constants above.
func (t AccountType) Known() bool { return slices.Contains(knownAccountTypes, t) }

// BillStatus is the status of a bill, as in the bill.created webhook. The
// service does not list a bill's statuses, so a bill may carry others than
// the constants: values the SDK does not know are kept as they are, so
// compare against the constants rather than switching exhaustively.
type BillStatus string

// Bill statuses the SDK knows. A bill may carry others; see BillStatus.
const (
	BillStatusDraft            BillStatus = "draft"
	BillStatusAwaitingApproval BillStatus = "awaiting_approval"
	BillStatusApproved         BillStatus = "approved"
	BillStatusPaid             BillStatus = "paid"
)

// Known reports whether s is one of the statuses above.
func (s BillStatus) Known() bool { return slices.Contains(knownBillStatuses, s) }

// The constants of each enum, for Known.
var (
	knownInvoiceStatuses = []InvoiceStatus{InvoiceStatusDraft, InvoiceStatusAwaitingPayment, InvoiceStatusPaid, InvoiceStatusOverdue, InvoiceStatusVoided}
	knownQuoteStatuses   = []QuoteStatus{QuoteStatusDraft, QuoteStatusSent, QuoteStatusAccepted, QuoteStatusDeclined, QuoteStatusExpired}
	knownItemTypes       = []ItemType{ItemTypeSales, ItemTypePurchase, ItemTypeText}
	knownAccountTypes    = []AccountType{AccountTypeRevenue, AccountTypeExpense, AccountTypeAsset, AccountTypeLiability, AccountTypeEquity}
	knownBillStatuses    = []BillStatus{BillStatusDraft, BillStatusAwaitingApproval, BillStatusApproved, BillStatusPaid}
)
