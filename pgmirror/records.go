package pgmirror

import (
	invoicing "github.com/invoicing-api/invoicing-go"
)

// The typed columns of each table, in the order of migrations/0001, and
// the functions filling them from the SDK's records. A test checks these
// lists against the tables.

var invoiceColumns = []column{
	{"invoice_number", tText}, {"client_id", tText}, {"client_name", tText}, {"status", tText},
	{"issue_date", tDate}, {"due_date", tDate},
	{"subtotal", tNumeric}, {"tax_total", tNumeric}, {"total", tNumeric}, {"amount_paid", tNumeric}, {"amount_due", tNumeric},
	{"currency", tText}, {"notes", tText}, {"reference", tText},
	{"created_at", tTimestamp}, {"updated_at", tTimestamp},
}

// invoiceLineColumns are the columns of invoice_lines and bill_lines.
var invoiceLineColumns = []column{
	{"position", tInt}, {"id", tText}, {"description", tText},
	{"quantity", tNumeric}, {"unit_price", tNumeric}, {"amount", tNumeric}, {"tax_amount", tNumeric},
	{"account_id", tText}, {"tax_code_id", tText},
}

func invoiceRow(v *invoicing.Invoice) row {
	r := row{id: v.ID, version: version(v.CreatedAt, v.UpdatedAt), values: []any{
		str(v.InvoiceNumber), str(v.ClientID), str(v.ClientName), str(string(v.Status)),
		date(v.IssueDate), date(v.DueDate),
		num(v.Subtotal), num(v.TaxTotal), num(v.Total), num(v.AmountPaid), num(v.AmountDue),
		str(v.Currency), str(v.Notes), strOrNull(v.Reference),
		ts(v.CreatedAt), v.UpdatedAt,
	}}
	for i, l := range v.LineItems {
		r.lines = append(r.lines, []any{
			position(i), str(l.ID), str(l.Description),
			num(l.Quantity), num(l.UnitPrice), num(l.Amount), num(l.TaxAmount),
			strPtr(l.AccountID), strPtr(l.TaxCodeID),
		})
	}
	return r
}

var quoteColumns = []column{
	{"quote_number", tText}, {"title", tText}, {"client_id", tText}, {"client_name", tText}, {"status", tText},
	{"issue_date", tDate}, {"valid_until", tDate},
	{"subtotal", tNumeric}, {"tax_total", tNumeric}, {"total", tNumeric},
	{"currency", tText}, {"notes", tText},
	{"created_at", tTimestamp}, {"updated_at", tTimestamp},
}

var quoteLineColumns = []column{
	{"position", tInt}, {"id", tText}, {"item_id", tText}, {"item_code", tText}, {"item_name", tText},
	{"description", tText},
	{"quantity", tNumeric}, {"unit_price", tNumeric}, {"amount", tNumeric}, {"tax_amount", tNumeric},
}

func quoteRow(v *invoicing.Quote) row {
	r := row{id: v.ID, version: version(v.CreatedAt, v.UpdatedAt), values: []any{
		str(v.QuoteNumber), str(v.Title), str(v.ClientID), str(v.ClientName), str(string(v.Status)),
		date(v.IssueDate), date(v.ValidUntil),
		num(v.Subtotal), num(v.TaxTotal), num(v.Total),
		str(v.Currency), str(v.Notes),
		ts(v.CreatedAt), v.UpdatedAt,
	}}
	for i, l := range v.LineItems {
		// item_id, item_code and item_name are sent only for lines linked
		// to a catalog item: NULL otherwise.
		r.lines = append(r.lines, []any{
			position(i), str(l.ID), strOrNull(l.ItemID), strOrNull(l.ItemCode), strOrNull(l.ItemName),
			str(l.Description),
			num(l.Quantity), num(l.UnitPrice), num(l.Amount), num(l.TaxAmount),
		})
	}
	return r
}

var itemColumns = []column{
	{"item_code", tText}, {"name", tText}, {"description", tText}, {"item_type", tText},
	{"unit_price", tNumeric}, {"is_taxable", tBool}, {"account_id", tText}, {"tax_code_id", tText},
	{"is_active", tBool}, {"created_at", tTimestamp}, {"updated_at", tTimestamp},
}

func itemRow(v *invoicing.Item) row {
	return row{id: v.ID, version: version(v.CreatedAt, v.UpdatedAt), values: []any{
		str(v.ItemCode), str(v.Name), str(v.Description), str(string(v.ItemType)),
		num(v.UnitPrice), boolean(v.IsTaxable), str(v.AccountID), str(v.TaxCodeID),
		boolean(v.IsActive), ts(v.CreatedAt), v.UpdatedAt,
	}}
}

// The records below are documented only in outline: a member the service
// did not send, or sent in a shape its field cannot hold, is NULL in its
// column (and as sent in raw).

var contactColumns = []column{
	{"name", tText}, {"email", tText}, {"phone", tText}, {"created_at", tTimestamp}, {"updated_at", tTimestamp},
}

func contactRow(v *invoicing.Contact) row {
	f := fields(v)
	return row{id: v.ID, version: version(v.CreatedAt, v.UpdatedAt), values: []any{
		f("name", str(v.Name)), f("email", str(v.Email)), f("phone", str(v.Phone)),
		f("created_at", ts(v.CreatedAt)), f("updated_at", v.UpdatedAt),
	}}
}

var billColumns = []column{
	{"bill_number", tText}, {"supplier_id", tText}, {"supplier_name", tText}, {"status", tText},
	{"issue_date", tDate}, {"due_date", tDate}, {"currency", tText},
	{"subtotal", tNumeric}, {"tax_total", tNumeric}, {"total", tNumeric},
	{"created_at", tTimestamp}, {"updated_at", tTimestamp},
}

func billRow(v *invoicing.Bill) row {
	f := fields(v)
	r := row{id: v.ID, version: version(v.CreatedAt, v.UpdatedAt), values: []any{
		f("bill_number", str(v.BillNumber)), f("supplier_id", str(v.SupplierID)), f("supplier_name", str(v.SupplierName)),
		f("status", str(string(v.Status))),
		f("issue_date", date(v.IssueDate)), f("due_date", date(v.DueDate)), f("currency", str(v.Currency)),
		f("subtotal", num(v.Subtotal)), f("tax_total", num(v.TaxTotal)), f("total", num(v.Total)),
		f("created_at", ts(v.CreatedAt)), f("updated_at", v.UpdatedAt),
	}}
	for i, l := range v.LineItems {
		lf := fields(l)
		r.lines = append(r.lines, []any{
			position(i), lf("id", str(l.ID)), lf("description", str(l.Description)),
			lf("quantity", num(l.Quantity)), lf("unit_price", num(l.UnitPrice)),
			lf("amount", num(l.Amount)), lf("tax_amount", num(l.TaxAmount)),
			lf("account_id", l.AccountID), lf("tax_code_id", l.TaxCodeID),
		})
	}
	return r
}

var accountColumns = []column{{"code", tText}, {"name", tText}, {"type", tText}, {"is_active", tBool}}

func accountRow(v *invoicing.Account) row {
	f := fields(v)
	return row{id: v.ID, values: []any{
		f("code", str(v.Code)), f("name", str(v.Name)), f("type", str(string(v.Type))), f("is_active", v.IsActive),
	}}
}

var taxCodeColumns = []column{{"code", tText}, {"name", tText}, {"rate", tNumeric}, {"region", tText}}

func taxCodeRow(v *invoicing.TaxCode) row {
	f := fields(v)
	return row{id: v.ID, values: []any{
		f("code", str(v.Code)), f("name", str(v.Name)), f("rate", num(v.Rate)), f("region", str(v.Region)),
	}}
}

var bankAccountColumns = []column{{"name", tText}, {"account_number", tText}, {"currency", tText}, {"balance", tNumeric}}

func bankAccountRow(v *invoicing.BankAccount) row {
	f := fields(v)
	return row{id: v.ID, values: []any{
		f("name", str(v.Name)), f("account_number", str(v.AccountNumber)), f("currency", str(v.Currency)),
		f("balance", num(v.Balance)),
	}}
}

var bankTransactionColumns = []column{
	{"bank_account_id", tText}, {"date", tDate}, {"description", tText}, {"amount", tNumeric},
	{"reference", tText}, {"status", tText},
}

func bankTransactionRow(v *invoicing.BankTransaction) row {
	f := fields(v)
	return row{id: v.ID, values: []any{
		f("bank_account_id", str(v.BankAccountID)), f("date", date(v.Date)), f("description", str(v.Description)),
		f("amount", num(v.Amount)), f("reference", str(v.Reference)), f("status", str(v.Status)),
	}}
}
