package main

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// invoices runs "invoicing invoices SUBCOMMAND".
func (c *cli) invoices(ctx context.Context, args []string) error {
	return c.group(ctx, "invoices", "Read the business's sales invoices (INVOICING_BASE_URL, INVOICING_API_KEY), and change them on 'invoicing mock'.", args, []command{
		{"list", "list invoices [--status S] [--json|--csv]", (*cli).listInvoices},
		{"get", "show one invoice: get ID [--json]", (*cli).getInvoice},
		{"pdf", "save an invoice as PDF: pdf ID [-o FILE]", (*cli).invoicePDF},
		{"send", "mock only: send an invoice (invoice.sent): send ID", actionCommand(invoiceSendAction)},
		{"pay", "mock only: record a payment: pay ID [--amount A]", actionCommand(invoicePayAction)},
		{"void", "mock only: void an invoice (invoice.updated): void ID", actionCommand(invoiceVoidAction)},
	})
}

const invoicesListHelp = `
Usage: invoicing invoices list [--status S] [--json|--csv]

Lists every invoice of the business (or those in one status), oldest first,
as a table fitted to the terminal, as JSON lines or as CSV. Amounts are
exact, never rounded, with at least two decimals (2649.90, 0.00, 0.125) in
the table, the CSV and the JSON, where they are numbers.

Examples:
  invoicing invoices list --status overdue
  invoicing invoices list --json | jq -r '[.invoice_number, .client_name, .amount_due] | @tsv'
  invoicing invoices list --csv > invoices.csv
`

var invoiceColumns = []column[invoicing.Invoice]{
	{header: "NUMBER", field: "invoice_number", value: func(i *invoicing.Invoice) string { return i.InvoiceNumber }},
	{header: "STATUS", field: "status", value: func(i *invoicing.Invoice) string { return string(i.Status) }},
	{header: "CLIENT", field: "client_name", value: func(i *invoicing.Invoice) string { return i.ClientName }, flex: true},
	{header: "ISSUED", field: "issue_date", value: func(i *invoicing.Invoice) string { return i.IssueDate.String() }},
	{header: "DUE", field: "due_date", value: func(i *invoicing.Invoice) string { return i.DueDate.String() }},
	{header: "CUR", field: "currency", value: func(i *invoicing.Invoice) string { return i.Currency }},
	{header: "TOTAL", field: "total", value: func(i *invoicing.Invoice) string { return invoicingtest.FormatMoney(i.Total) }, right: true},
	{header: "AMOUNT DUE", field: "amount_due", value: func(i *invoicing.Invoice) string { return invoicingtest.FormatMoney(i.AmountDue) }, right: true},
	{header: "ID", field: "id", value: func(i *invoicing.Invoice) string { return i.ID }},
}

// invoiceStatuses are the values of --status.
var invoiceStatuses = []invoicing.InvoiceStatus{invoicing.InvoiceStatusDraft, invoicing.InvoiceStatusAwaitingPayment,
	invoicing.InvoiceStatusPaid, invoicing.InvoiceStatusOverdue, invoicing.InvoiceStatusVoided}

// invoiceDrop is the order in which invoice columns give way on a narrow
// terminal; the number, the total and the id (which get and pdf take) stay
// longest.
var invoiceDrop = []string{"CUR", "ISSUED", "DUE", "AMOUNT DUE", "CLIENT", "STATUS", "TOTAL", "ID"}

// invoiceListing lists invoices.
var invoiceListing = listing[invoicing.Invoice]{noun: "invoices", columns: invoiceColumns, drop: invoiceDrop, money: invoiceMoney}

// invoiceStatusFilter is --status of "invoices list".
var invoiceStatusFilter = filter[invoicing.InvoiceStatus]{"status",
	"only invoices in `STATUS`: draft, awaiting_payment, paid, overdue or voided (any case)", "status", invoiceStatuses}

func (c *cli) listInvoices(ctx context.Context, args []string) error {
	return runList(c, args, "invoices list", invoicesListHelp, invoiceStatusFilter, invoiceListing,
		func(client *invoicing.Client, st invoicing.InvoiceStatus) iter.Seq2[*invoicing.Invoice, error] {
			return client.Invoices.List(ctx, &invoicing.InvoiceListParams{Status: st})
		})
}

const invoicesGetHelp = `
Usage: invoicing invoices get ID [--json]

Shows one invoice with its lines, or prints it as one JSON object. Amounts
are exact, with at least two decimals (2649.90, 0.125).
`

func (c *cli) getInvoice(ctx context.Context, args []string) error {
	get := func(client *invoicing.Client, id string) (*invoicing.Invoice, error) {
		return client.Invoices.Get(ctx, id)
	}
	return runGet(c, args, "invoices get", invoicesGetHelp, "invoice", invoiceMoney, get, c.showInvoice)
}

// showInvoice prints an invoice's fields, then its lines.
func (c *cli) showInvoice(inv *invoicing.Invoice) {
	fmt.Fprintf(c.stdout, "Invoice %s\n\n", inv.InvoiceNumber)
	writeFields(c.stdout, [][2]string{
		{"ID", inv.ID},
		{"Status", string(inv.Status)},
		{"Client", inv.ClientName + " (" + inv.ClientID + ")"},
		{"Issued", inv.IssueDate.String()},
		{"Due", inv.DueDate.String()},
		{"Currency", inv.Currency},
		{"Subtotal", invoicingtest.FormatMoney(inv.Subtotal)},
		{"Tax", invoicingtest.FormatMoney(inv.TaxTotal)},
		{"Total", invoicingtest.FormatMoney(inv.Total)},
		{"Paid", invoicingtest.FormatMoney(inv.AmountPaid)},
		{"Amount due", invoicingtest.FormatMoney(inv.AmountDue)},
		{"Reference", inv.Reference},
		{"Notes", inv.Notes},
		{"Created", inv.CreatedAt.Format(time.RFC3339)},
		{"Updated", formatTimePtr(inv.UpdatedAt)},
	})
	t := &table{headers: []string{"DESCRIPTION", "QTY", "UNIT PRICE", "TAX", "AMOUNT"},
		right: []bool{false, true, true, true, true}, flex: []bool{true, false, false, false, false}}
	for _, l := range inv.LineItems {
		t.rows = append(t.rows, []string{l.Description, l.Quantity.String(), invoicingtest.FormatMoney(l.UnitPrice),
			invoicingtest.FormatMoney(l.TaxAmount), invoicingtest.FormatMoney(l.Amount)})
	}
	fmt.Fprintln(c.stdout)
	t.write(c.stdout, c.tableWidth())
}

const invoicesPDFHelp = `
Usage: invoicing invoices pdf ID [-o FILE]

Saves the invoice as PDF, under the name the service gives it
(Invoice-<number>.pdf) unless -o names a file; -o - writes it to stdout.
`

func (c *cli) invoicePDF(ctx context.Context, args []string) error {
	return runPDF(c, args, "invoices pdf", invoicesPDFHelp, "invoice", "Invoice", func(client *invoicing.Client, id string) (*invoicing.File, error) {
		return client.Invoices.PDF(ctx, id)
	})
}

// formatTimePtr formats a nullable datetime, "" for nil.
func formatTimePtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.Format(time.RFC3339)
}
