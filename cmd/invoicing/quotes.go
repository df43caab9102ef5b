package main

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// quotes runs "invoicing quotes SUBCOMMAND".
func (c *cli) quotes(ctx context.Context, args []string) error {
	return c.group(ctx, "quotes", "Read the business's quotes (INVOICING_BASE_URL, INVOICING_API_KEY), and change them on 'invoicing mock'.", args, []command{
		{"list", "list quotes [--status S] [--json|--csv]", (*cli).listQuotes},
		{"get", "show one quote: get ID [--json]", (*cli).getQuote},
		{"pdf", "save a quote as PDF: pdf ID [-o FILE]", (*cli).quotePDF},
		{"send", "mock only: send a quote (quote.sent): send ID", actionCommand(quoteSendAction)},
		{"accept", "mock only: accept a quote, making an invoice: accept ID", actionCommand(quoteAcceptAction)},
		{"decline", "mock only: decline a quote: decline ID", actionCommand(quoteDeclineAction)},
	})
}

const quotesListHelp = `
Usage: invoicing quotes list [--status S] [--json|--csv]

Lists every quote of the business (or those in one status), oldest first,
as a table fitted to the terminal, as JSON lines or as CSV. An accepted
quote shows the client's accepted selection. Amounts are exact, never
rounded, with at least two decimals (2649.90, 0.00, 0.125) in the table,
the CSV and the JSON, where they are numbers.

Examples:
  invoicing quotes list --status sent
  invoicing quotes list --json | jq -r '[.quote_number, .title, .total] | @tsv'
`

var quoteColumns = []column[invoicing.Quote]{
	{header: "NUMBER", field: "quote_number", value: func(q *invoicing.Quote) string { return q.QuoteNumber }},
	{header: "STATUS", field: "status", value: func(q *invoicing.Quote) string { return string(q.Status) }},
	{header: "CLIENT", field: "client_name", value: func(q *invoicing.Quote) string { return q.ClientName }, flex: true},
	{header: "TITLE", field: "title", value: func(q *invoicing.Quote) string { return q.Title }, flex: true},
	{header: "ISSUED", field: "issue_date", value: func(q *invoicing.Quote) string { return q.IssueDate.String() }},
	{header: "VALID UNTIL", field: "valid_until", value: func(q *invoicing.Quote) string { return q.ValidUntil.String() }},
	{header: "CUR", field: "currency", value: func(q *invoicing.Quote) string { return q.Currency }},
	{header: "TOTAL", field: "total", value: func(q *invoicing.Quote) string { return invoicingtest.FormatMoney(q.Total) }, right: true},
	{header: "ID", field: "id", value: func(q *invoicing.Quote) string { return q.ID }},
}

// quoteStatuses are the values of --status.
var quoteStatuses = []invoicing.QuoteStatus{invoicing.QuoteStatusDraft, invoicing.QuoteStatusSent,
	invoicing.QuoteStatusAccepted, invoicing.QuoteStatusDeclined, invoicing.QuoteStatusExpired}

// quoteDrop is the order in which quote columns give way on a narrow
// terminal.
var quoteDrop = []string{"CUR", "ISSUED", "VALID UNTIL", "CLIENT", "TITLE", "STATUS", "TOTAL", "ID"}

// quoteListing lists quotes.
var quoteListing = listing[invoicing.Quote]{noun: "quotes", columns: quoteColumns, drop: quoteDrop, money: quoteMoney}

// quoteStatusFilter is --status of "quotes list".
var quoteStatusFilter = filter[invoicing.QuoteStatus]{"status",
	"only quotes in `STATUS`: draft, sent, accepted, declined or expired (any case)", "status", quoteStatuses}

func (c *cli) listQuotes(ctx context.Context, args []string) error {
	return runList(c, args, "quotes list", quotesListHelp, quoteStatusFilter, quoteListing,
		func(client *invoicing.Client, st invoicing.QuoteStatus) iter.Seq2[*invoicing.Quote, error] {
			return client.Quotes.List(ctx, &invoicing.QuoteListParams{Status: st})
		})
}

const quotesGetHelp = `
Usage: invoicing quotes get ID [--json]

Shows one quote with its lines, or prints it as one JSON object. Amounts
are exact, with at least two decimals (2649.90, 0.125).
`

func (c *cli) getQuote(ctx context.Context, args []string) error {
	get := func(client *invoicing.Client, id string) (*invoicing.Quote, error) { return client.Quotes.Get(ctx, id) }
	return runGet(c, args, "quotes get", quotesGetHelp, "quote", quoteMoney, get, c.showQuote)
}

// showQuote prints a quote's fields, then its lines.
func (c *cli) showQuote(q *invoicing.Quote) {
	fmt.Fprintf(c.stdout, "Quote %s: %s\n\n", q.QuoteNumber, q.Title)
	writeFields(c.stdout, [][2]string{
		{"ID", q.ID},
		{"Status", string(q.Status)},
		{"Client", q.ClientName + " (" + q.ClientID + ")"},
		{"Issued", q.IssueDate.String()},
		{"Valid until", q.ValidUntil.String()},
		{"Currency", q.Currency},
		{"Subtotal", invoicingtest.FormatMoney(q.Subtotal)},
		{"Tax", invoicingtest.FormatMoney(q.TaxTotal)},
		{"Total", invoicingtest.FormatMoney(q.Total)},
		{"Notes", q.Notes},
		{"Created", q.CreatedAt.Format(time.RFC3339)},
		{"Updated", formatTimePtr(q.UpdatedAt)},
	})
	t := &table{headers: []string{"ITEM", "DESCRIPTION", "QTY", "UNIT PRICE", "TAX", "AMOUNT"},
		right: []bool{false, false, true, true, true, true}, flex: []bool{false, true, false, false, false, false},
		drop: []int{0}}
	for _, l := range q.LineItems {
		t.rows = append(t.rows, []string{l.ItemCode, l.Description, l.Quantity.String(), invoicingtest.FormatMoney(l.UnitPrice),
			invoicingtest.FormatMoney(l.TaxAmount), invoicingtest.FormatMoney(l.Amount)})
	}
	fmt.Fprintln(c.stdout)
	t.write(c.stdout, c.tableWidth())
}

const quotesPDFHelp = `
Usage: invoicing quotes pdf ID [-o FILE]

Saves the quote as PDF, under the name the service gives it
(Quote-<number>.pdf) unless -o names a file; -o - writes it to stdout.
The service never creates a share link for it.
`

func (c *cli) quotePDF(ctx context.Context, args []string) error {
	return runPDF(c, args, "quotes pdf", quotesPDFHelp, "quote", "Quote", func(client *invoicing.Client, id string) (*invoicing.File, error) {
		return client.Quotes.PDF(ctx, id)
	})
}
