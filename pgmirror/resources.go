package pgmirror

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// pageSize is the page size of every walk: the API's maximum.
const pageSize = invoicing.MaxPageSize

// A resource is one kind of record the mirror copies: its table (and lines
// table), how to list it, count it and fetch one record.
type resource struct {
	name  string // the table's name, and the resource's name in logs and metrics
	table table
	lines *table // nil when the record has no lines
	// list walks the records from page start (pages of pageSize).
	list func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error]
	// total returns the number of records the service counts now.
	total func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error)
	// get fetches one record; nil when the service has no endpoint for it
	// (bank accounts).
	get func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (row, error)
}

// Resource names, as the tables are named. Metrics and logs use them.
const (
	Invoices         = "invoices"
	Quotes           = "quotes"
	Items            = "items"
	Clients          = "clients"
	Suppliers        = "suppliers"
	Bills            = "bills"
	Accounts         = "accounts"
	TaxCodes         = "tax_codes"
	BankAccounts     = "bank_accounts"
	BankTransactions = "bank_transactions"
)

// Resources returns the names of the mirrored resources, in the order the
// backfill and the reconciler walk them.
func Resources() []string {
	out := make([]string, len(allResources))
	for i, r := range allResources {
		out[i] = r.name
	}
	return out
}

// paging is the ListParams of a walk from page start.
func paging(start int) invoicing.ListParams {
	return invoicing.ListParams{Page: start, PageSize: pageSize}
}

// rows turns a List of records into a sequence of rows.
func rows[T any](seq iter.Seq2[*T, error], conv func(*T) row) iter.Seq2[row, error] {
	return func(yield func(row, error) bool) {
		for rec, err := range seq {
			if err != nil {
				yield(row{}, err)
				return
			}
			r, err := recordRow(rec, conv)
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// one turns a Get into a row.
func one[T any](rec *T, err error, conv func(*T) row) (row, error) {
	if err != nil {
		return row{}, err
	}
	return recordRow(rec, conv)
}

// recordRow is the row conv makes of rec, with rec's raw JSON.
func recordRow[T any](rec *T, conv func(*T) row) (row, error) {
	r := conv(rec)
	raw, err := rawJSON(r.id, rec)
	if err != nil {
		return row{}, err
	}
	r.raw = raw
	return r, nil
}

// totalOf returns the total of a one-record page.
func totalOf[T any](p *invoicing.Page[T], err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return p.Total, nil
}

// rawJSON is the record as the service sent it, every member included: the
// SDK's records marshal back to what they were decoded from.
func rawJSON(id string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("pgmirror: encoding record %s: %w", id, err)
	}
	return b, nil
}

// firstPage is a page of one record: what total asks for.
var firstPage = invoicing.ListParams{Page: 1, PageSize: 1}

// allResources are the mirrored resources, small ones first.
var allResources = []*resource{
	{
		name:  Clients,
		table: table{name: Clients, columns: contactColumns},
		list: func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error] {
			return rows(c.Clients.List(ctx, &invoicing.ContactListParams{ListParams: paging(start)}, opts...), contactRow)
		},
		total: func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
			return totalOf(c.Clients.ListPage(ctx, &invoicing.ContactListParams{ListParams: firstPage}, opts...))
		},
		get: func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (row, error) {
			rec, err := c.Clients.Get(ctx, id, opts...)
			return one(rec, err, contactRow)
		},
	},
	{
		name:  Suppliers,
		table: table{name: Suppliers, columns: contactColumns},
		list: func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error] {
			return rows(c.Suppliers.List(ctx, &invoicing.ContactListParams{ListParams: paging(start)}, opts...), contactRow)
		},
		total: func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
			return totalOf(c.Suppliers.ListPage(ctx, &invoicing.ContactListParams{ListParams: firstPage}, opts...))
		},
		get: func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (row, error) {
			rec, err := c.Suppliers.Get(ctx, id, opts...)
			return one(rec, err, contactRow)
		},
	},
	{
		name:  Accounts,
		table: table{name: Accounts, columns: accountColumns},
		list: func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error] {
			return rows(c.Accounts.List(ctx, &invoicing.AccountListParams{ListParams: paging(start)}, opts...), accountRow)
		},
		total: func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
			return totalOf(c.Accounts.ListPage(ctx, &invoicing.AccountListParams{ListParams: firstPage}, opts...))
		},
		get: func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (row, error) {
			rec, err := c.Accounts.Get(ctx, id, opts...)
			return one(rec, err, accountRow)
		},
	},
	{
		name:  TaxCodes,
		table: table{name: TaxCodes, columns: taxCodeColumns},
		list: func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error] {
			return rows(c.TaxCodes.List(ctx, &invoicing.TaxCodeListParams{ListParams: paging(start)}, opts...), taxCodeRow)
		},
		total: func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
			return totalOf(c.TaxCodes.ListPage(ctx, &invoicing.TaxCodeListParams{ListParams: firstPage}, opts...))
		},
		get: func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (row, error) {
			rec, err := c.TaxCodes.Get(ctx, id, opts...)
			return one(rec, err, taxCodeRow)
		},
	},
	{
		name:  Items,
		table: table{name: Items, columns: itemColumns},
		list: func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error] {
			return rows(c.Items.List(ctx, &invoicing.ItemListParams{ListParams: paging(start)}, opts...), itemRow)
		},
		total: func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
			return totalOf(c.Items.ListPage(ctx, &invoicing.ItemListParams{ListParams: firstPage}, opts...))
		},
		get: func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (row, error) {
			rec, err := c.Items.Get(ctx, id, opts...)
			return one(rec, err, itemRow)
		},
	},
	{
		name:  BankAccounts,
		table: table{name: BankAccounts, columns: bankAccountColumns},
		list: func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error] {
			return rows(c.BankAccounts.List(ctx, &invoicing.BankAccountListParams{ListParams: paging(start)}, opts...), bankAccountRow)
		},
		total: func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
			return totalOf(c.BankAccounts.ListPage(ctx, &invoicing.BankAccountListParams{ListParams: firstPage}, opts...))
		},
	},
	{
		name:  BankTransactions,
		table: table{name: BankTransactions, columns: bankTransactionColumns},
		list: func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error] {
			return rows(c.BankTransactions.List(ctx, &invoicing.BankTransactionListParams{ListParams: paging(start)}, opts...), bankTransactionRow)
		},
		total: func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
			return totalOf(c.BankTransactions.ListPage(ctx, &invoicing.BankTransactionListParams{ListParams: firstPage}, opts...))
		},
		get: func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (row, error) {
			rec, err := c.BankTransactions.Get(ctx, id, opts...)
			return one(rec, err, bankTransactionRow)
		},
	},
	{
		name:  Bills,
		table: table{name: Bills, columns: billColumns},
		lines: &table{name: "bill_lines", parent: "bill_id", columns: invoiceLineColumns},
		list: func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error] {
			return rows(c.Bills.List(ctx, &invoicing.BillListParams{ListParams: paging(start)}, opts...), billRow)
		},
		total: func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
			return totalOf(c.Bills.ListPage(ctx, &invoicing.BillListParams{ListParams: firstPage}, opts...))
		},
		get: func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (row, error) {
			rec, err := c.Bills.Get(ctx, id, opts...)
			return one(rec, err, billRow)
		},
	},
	{
		name:  Quotes,
		table: table{name: Quotes, columns: quoteColumns},
		lines: &table{name: "quote_lines", parent: "quote_id", columns: quoteLineColumns},
		list: func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error] {
			return rows(c.Quotes.List(ctx, &invoicing.QuoteListParams{ListParams: paging(start)}, opts...), quoteRow)
		},
		total: func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
			return totalOf(c.Quotes.ListPage(ctx, &invoicing.QuoteListParams{ListParams: firstPage}, opts...))
		},
		get: func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (row, error) {
			rec, err := c.Quotes.Get(ctx, id, opts...)
			return one(rec, err, quoteRow)
		},
	},
	{
		name:  Invoices,
		table: table{name: Invoices, columns: invoiceColumns},
		lines: &table{name: "invoice_lines", parent: "invoice_id", columns: invoiceLineColumns},
		list: func(ctx context.Context, c *invoicing.Client, start int, opts ...invoicing.ListOption) iter.Seq2[row, error] {
			return rows(c.Invoices.List(ctx, &invoicing.InvoiceListParams{ListParams: paging(start)}, opts...), invoiceRow)
		},
		total: func(ctx context.Context, c *invoicing.Client, opts ...invoicing.RequestOption) (int, error) {
			return totalOf(c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{ListParams: firstPage}, opts...))
		},
		get: func(ctx context.Context, c *invoicing.Client, id string, opts ...invoicing.RequestOption) (row, error) {
			rec, err := c.Invoices.Get(ctx, id, opts...)
			return one(rec, err, invoiceRow)
		},
	},
}

// resourceNamed returns the resource called name, or nil.
func resourceNamed(name string) *resource {
	for _, r := range allResources {
		if r.name == name {
			return r
		}
	}
	return nil
}
