// Command quickstart is the first program to run with the SDK. It needs no
// account and no network:
//
//	go run ./examples/quickstart [-out DIR]
//
// starts the in-memory Invoicing Service (package invoicingtest) on a
// loopback address and walks through the main flows against it, printing a
// short report: a catalog item; an invoice created twice with one reference
// (the second call returns the first invoice, Created false); a quote
// accepted and converted into an invoice; ranging over invoices; saving an
// invoice PDF (into DIR, or a new temporary directory that is left for you
// to open); and typed errors. The webhooks all that raises are received by a
// local http.Server running webhooks.Handler, which verifies each with the
// endpoint's signing secret; the report prints one line per verified event.
//
// With INVOICING_BASE_URL (including /api/v1/external) and INVOICING_API_KEY
// set, it instead tours that service read-only: it lists a few invoices,
// items and quotes and fetches one invoice. It never writes to a real
// account, and never prints the key.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// The environment variables that switch to a real service: the SDK's own
// (NewClient reads the same two when given empty arguments).
const (
	envBaseURL = invoicing.EnvBaseURL
	envAPIKey  = invoicing.EnvAPIKey
)

func main() {
	outDir := flag.String("out", "", "directory to save the invoice PDF in (default: a new temporary directory)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, *outDir, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run tours the service named by the environment read-only when getenv
// gives an API key, and otherwise runs the demo against an in-memory
// server. PDFs go to outDir ("" for a new temporary directory).
func run(ctx context.Context, w io.Writer, outDir string, getenv func(string) string) error {
	if key := getenv(envAPIKey); key != "" {
		baseURL := getenv(envBaseURL)
		if baseURL == "" {
			return fmt.Errorf("%s is set but %s is not: set it to the API's base URL, including /api/v1/external", envAPIKey, envBaseURL)
		}
		c, err := invoicing.NewClient(baseURL, key, invoicing.WithUserAgent("invoicing-quickstart/"+invoicing.Version))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "Read-only tour of %s (nothing is written)\n\n", c.BaseURL())
		return readOnlyTour(ctx, w, c)
	}

	srv := invoicingtest.NewServer()
	defer srv.Close()
	fmt.Fprintf(w, "In-memory Invoicing Service at %s\n", srv.URL)
	fmt.Fprintf(w, "(set %s and %s to tour a real account read-only instead)\n\n", envBaseURL, envAPIKey)
	return demo(ctx, w, srv, srv.Client(), outDir)
}

// demo walks through the main flows against the in-memory server srv,
// through c. The server stands in for what only the service's user
// interface or the client can do: registering the webhook endpoint and
// accepting the quote.
func demo(ctx context.Context, w io.Writer, srv *invoicingtest.Server, c *invoicing.Client, outDir string) error {
	rcv, err := startReceiver(srv)
	if err != nil {
		return err
	}
	defer rcv.close()
	fmt.Fprintf(w, "Webhook receiver listening at %s (webhooks.Handler, verifying with the endpoint's secret)\n\n", rcv.url)

	fmt.Fprintln(w, "1. Catalog item")
	item, err := createItem(ctx, w, c)
	if err != nil {
		return err
	}
	rcv.flush(w)

	fmt.Fprintln(w, "\n2. Invoice created twice with one reference")
	inv, err := createInvoiceTwice(ctx, w, c, item)
	if err != nil {
		return err
	}
	rcv.flush(w)

	fmt.Fprintln(w, "\n3. Quote accepted and converted into an invoice")
	accept := func(quoteID string) (string, error) {
		// Staff accept on the client's behalf; the business's rule turns
		// the accepted quote into a draft invoice.
		res, err := srv.AcceptQuote(quoteID, invoicingtest.AcceptOptions{ByStaff: true})
		return res.InvoiceID, err
	}
	if err := quoteToInvoice(ctx, w, c, accept, rcv.flush); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n4. Ranging over invoices")
	if err := listInvoices(ctx, w, c); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n5. Invoice PDF")
	if outDir == "" {
		if outDir, err = os.MkdirTemp("", "invoicing-quickstart-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	if _, err := savePDF(ctx, w, c, inv.ID, outDir); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n6. Typed errors")
	if err := typedErrors(ctx, w, c, item.ItemCode); err != nil {
		return err
	}

	sent, ok := rcv.deliveries()
	fmt.Fprintf(w, "\nDone: the service sent %d webhooks; %d were verified and acknowledged by the receiver.\n", sent, rcv.count())
	if ok != sent || rcv.count() != sent {
		return fmt.Errorf("%d of %d webhook deliveries failed", sent-ok, sent)
	}
	return nil
}

// createItem creates a catalog item, priced before tax, that invoice lines
// can link to.
func createItem(ctx context.Context, w io.Writer, c *invoicing.Client) (*invoicing.Item, error) {
	item, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
		ItemCode:    "QS-WIDGET",
		Name:        "Widget",
		Description: "Blue widget, boxed",
		UnitPrice:   invoicing.Ptr(decimal.RequireFromString("49.95")),
		AccountID:   invoicingtest.SeedRevenueAccountID,
		TaxCodeID:   invoicingtest.SeedGSTTaxCodeID,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the catalog item: %w", err)
	}
	fmt.Fprintf(w, "   created item %s %q: %s, %s before tax, active %t\n",
		item.ItemCode, item.Name, item.ItemType, money(item.UnitPrice), item.IsActive)
	return item, nil
}

// createInvoiceTwice creates an invoice carrying an external reference, then
// sends the same request again, as an import that is re-run would: the
// service returns the existing invoice instead of a duplicate.
func createInvoiceTwice(ctx context.Context, w io.Writer, c *invoicing.Client, item *invoicing.Item) (*invoicing.Invoice, error) {
	terms := 14
	p := &invoicing.InvoiceCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		Reference:        "QS-ORDER-1001",
		PaymentTermsDays: &terms,
		Status:           invoicing.InvoiceStatusAwaitingPayment,
		Notes:            "Thank you for your order.",
		LineItems: []invoicing.LineItemParams{{
			ItemID:    item.ID,
			Quantity:  invoicing.Ptr(decimal.NewFromInt(3)),
			UnitPrice: item.UnitPrice,
			AccountID: item.AccountID,
			TaxCodeID: item.TaxCodeID,
		}},
	}
	first, err := c.Invoices.Create(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("creating the invoice: %w", err)
	}
	fmt.Fprintf(w, "   1st call: %s created=%t  %s  total %s %s  issued %s, due %s\n",
		first.InvoiceNumber, first.Created, first.Status, money(first.Total), first.Currency, first.IssueDate, first.DueDate)
	second, err := c.Invoices.Create(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("creating the invoice again: %w", err)
	}
	fmt.Fprintf(w, "   2nd call: %s created=%t same id=%t (reference %q: no duplicate)\n",
		second.InvoiceNumber, second.Created, second.ID == first.ID, p.Reference)
	return first.Invoice, nil
}

// listInvoices ranges over every invoice; the iterator fetches pages lazily.
func listInvoices(ctx context.Context, w io.Writer, c *invoicing.Client) error {
	n := 0
	for inv, err := range c.Invoices.List(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing invoices: %w", err)
		}
		n++
		fmt.Fprintf(w, "   %s  %-16s  %s  total %s %s, amount due %s by %s\n",
			inv.InvoiceNumber, inv.Status, inv.ClientName, money(inv.Total), inv.Currency, money(inv.AmountDue), inv.DueDate)
	}
	fmt.Fprintf(w, "   %d invoice(s)\n", n)
	return nil
}

// savePDF streams an invoice's PDF into dir under the file name the service
// gives, and returns the file's path.
func savePDF(ctx context.Context, w io.Writer, c *invoicing.Client, invoiceID, dir string) (string, error) {
	f, err := c.Invoices.PDF(ctx, invoiceID)
	if err != nil {
		return "", fmt.Errorf("downloading the PDF: %w", err)
	}
	defer f.Close()
	name := f.Filename
	if name == "" {
		name = "invoice-" + invoiceID + ".pdf"
	}
	path := filepath.Join(dir, name)
	out, err := os.Create(path)
	if err != nil {
		return "", err
	}
	n, err := io.Copy(out, f)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("saving the PDF: %w", err)
	}
	fmt.Fprintf(w, "   saved %s (%d bytes, %s) in %s\n", name, n, f.ContentType, dir)
	return path, nil
}

// quoteToInvoice creates a quote, has it accepted with accept (which returns
// the id of the invoice the quote became), and reads the accepted quote and
// that invoice back through the API. flush prints the webhooks received so
// far. A real integration learns the invoice's id from the invoice_id of the
// quote.accepted webhook.
func quoteToInvoice(ctx context.Context, w io.Writer, c *invoicing.Client, accept func(quoteID string) (string, error), flush func(io.Writer)) error {
	validDays := 21
	q, err := c.Quotes.Create(ctx, &invoicing.QuoteCreateParams{
		ClientID:         invoicingtest.SeedClientID,
		ValidDays:        &validDays,
		DefaultAccountID: invoicingtest.SeedOtherRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems: []invoicing.LineItemParams{
			{Description: "Website refresh: design", Quantity: invoicing.Ptr(decimal.NewFromInt(1)), UnitPrice: decimal.RequireFromString("1200")},
			{Description: "Hosting, 12 months", Quantity: invoicing.Ptr(decimal.NewFromInt(12)), UnitPrice: decimal.RequireFromString("19.90")},
		},
	})
	if err != nil {
		return fmt.Errorf("creating the quote: %w", err)
	}
	fmt.Fprintf(w, "   created quote %s %q: %s, total %s %s, valid until %s\n",
		q.QuoteNumber, q.Title, q.Status, money(q.Total), q.Currency, q.ValidUntil)
	flush(w)

	invoiceID, err := accept(q.ID)
	if err != nil {
		return fmt.Errorf("accepting the quote: %w", err)
	}
	q, err = c.Quotes.Get(ctx, q.ID)
	if err != nil {
		return fmt.Errorf("reading the accepted quote: %w", err)
	}
	fmt.Fprintf(w, "   accepted: quote %s is now %s\n", q.QuoteNumber, q.Status)
	flush(w)

	inv, err := c.Invoices.Get(ctx, invoiceID)
	if err != nil {
		return fmt.Errorf("reading the invoice made from the quote: %w", err)
	}
	fmt.Fprintf(w, "   invoice %s from quote %s: %s, total %s %s, %d line(s)\n",
		inv.InvoiceNumber, q.QuoteNumber, inv.Status, money(inv.Total), inv.Currency, len(inv.LineItems))
	return nil
}

// typedErrors shows errors.Is and errors.As on the SDK's errors.
func typedErrors(ctx context.Context, w io.Writer, c *invoicing.Client, usedCode string) error {
	_, err := c.Items.Create(ctx, &invoicing.ItemCreateParams{
		ItemCode:  usedCode,
		Name:      "Another widget",
		UnitPrice: invoicing.Ptr(decimal.RequireFromString("10")),
		AccountID: invoicingtest.SeedRevenueAccountID,
		TaxCodeID: invoicingtest.SeedGSTTaxCodeID,
	})
	var apiErr *invoicing.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("creating an item with a used code: want an *invoicing.Error, got %v", err)
	}
	fmt.Fprintf(w, "   item code %s again: errors.Is(err, invoicing.ErrItemCodeExists) = %t (HTTP %d %q)\n",
		usedCode, errors.Is(err, invoicing.ErrItemCodeExists), apiErr.StatusCode, apiErr.Detail)

	_, err = c.Invoices.Get(ctx, "00000000-0000-4000-8000-000000000000")
	if err == nil {
		return errors.New("fetching an unknown invoice succeeded")
	}
	fmt.Fprintf(w, "   unknown invoice id: errors.Is(err, invoicing.ErrNotFound) = %t\n", errors.Is(err, invoicing.ErrNotFound))
	return nil
}

// readOnlyTour lists a few invoices, items and quotes and fetches the first
// invoice. It only reads.
func readOnlyTour(ctx context.Context, w io.Writer, c *invoicing.Client) error {
	few := invoicing.ListParams{PageSize: 5}

	invs, err := c.Invoices.ListPage(ctx, &invoicing.InvoiceListParams{ListParams: few})
	if err != nil {
		return fmt.Errorf("listing invoices: %w", err)
	}
	heading(w, "Invoices", invs.Total, len(invs.Items))
	for _, inv := range invs.Items {
		fmt.Fprintf(w, "   %s  %-16s %s  total %s %s  due %s\n",
			inv.InvoiceNumber, inv.Status, inv.ClientName, money(inv.Total), inv.Currency, inv.DueDate)
	}

	items, err := c.Items.ListPage(ctx, &invoicing.ItemListParams{ListParams: few})
	if err != nil {
		return fmt.Errorf("listing items: %w", err)
	}
	heading(w, "Items", items.Total, len(items.Items))
	for _, it := range items.Items {
		fmt.Fprintf(w, "   %-12s %-8s %s  %s\n", it.ItemCode, it.ItemType, it.Name, money(it.UnitPrice))
	}

	quotes, err := c.Quotes.ListPage(ctx, &invoicing.QuoteListParams{ListParams: few})
	if err != nil {
		return fmt.Errorf("listing quotes: %w", err)
	}
	heading(w, "Quotes", quotes.Total, len(quotes.Items))
	for _, q := range quotes.Items {
		fmt.Fprintf(w, "   %s  %-9s %q  total %s %s\n", q.QuoteNumber, q.Status, q.Title, money(q.Total), q.Currency)
	}

	if len(invs.Items) == 0 {
		fmt.Fprintln(w, "No invoice to fetch.")
		return nil
	}
	inv, err := c.Invoices.Get(ctx, invs.Items[0].ID)
	if err != nil {
		return fmt.Errorf("fetching invoice %s: %w", invs.Items[0].InvoiceNumber, err)
	}
	fmt.Fprintf(w, "Invoice %s (%s), %s:\n", inv.InvoiceNumber, inv.ID, inv.ClientName)
	for _, l := range inv.LineItems {
		fmt.Fprintf(w, "   %s x %s %q = %s (tax %s)\n", l.Quantity, money(l.UnitPrice), l.Description, money(l.Amount), money(l.TaxAmount))
	}
	fmt.Fprintf(w, "   subtotal %s + tax %s = total %s %s; paid %s, due %s\n",
		money(inv.Subtotal), money(inv.TaxTotal), money(inv.Total), inv.Currency, money(inv.AmountPaid), money(inv.AmountDue))
	return nil
}

// heading introduces a list of the first shown of total records.
func heading(w io.Writer, what string, total, shown int) {
	if shown == 0 {
		fmt.Fprintf(w, "%s: none\n", what)
		return
	}
	fmt.Fprintf(w, "%s: %d in all; the first %d:\n", what, total, shown)
}

// receiver is a local webhook endpoint: an HTTP server running
// webhooks.Handler, registered with the in-memory service.
type receiver struct {
	url string
	srv *http.Server
	ep  *invoicingtest.WebhookEndpoint

	mu      sync.Mutex
	pending []string // lines of events received and not yet printed
	total   int
}

// startReceiver listens on a loopback port, registers the address as a
// webhook endpoint of srv and serves webhooks.Handler there, verifying
// deliveries with the endpoint's signing secret.
func startReceiver(srv *invoicingtest.Server) (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the webhook receiver: %w", err)
	}
	r := &receiver{url: "http://" + ln.Addr().String() + "/webhooks"}
	ep := srv.AddWebhookEndpoint(r.url)
	v, err := webhooks.NewVerifier(ep.Secret())
	if err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks", webhooks.Handler(v, r.record, webhooks.WithDeduper(webhooks.NewMemoryDeduper(27*time.Hour))))
	r.ep = ep
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// record is the webhooks.Handler function: it is called only for verified
// deliveries.
func (r *receiver) record(_ context.Context, d *webhooks.Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(r.pending, describe(d.Event))
	r.total++
	return nil
}

// flush prints the events received since the last flush. The in-memory
// service delivers webhooks before the call that raised them returns, so
// they are all here by then.
func (r *receiver) flush(w io.Writer) {
	r.mu.Lock()
	lines := r.pending
	r.pending = nil
	r.mu.Unlock()
	for _, l := range lines {
		fmt.Fprintf(w, "   webhook verified: %s\n", l)
	}
}

// deliveries returns how many deliveries the service made to the receiver
// and how many of them succeeded (got a 2xx answer).
func (r *receiver) deliveries() (sent, succeeded int) {
	for _, d := range r.ep.Deliveries() {
		sent++
		if d.Status == invoicingtest.DeliverySucceeded {
			succeeded++
		}
	}
	return sent, succeeded
}

// count returns how many verified deliveries the handler function received.
func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

func (r *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

// describe is the one line printed for a verified event.
func describe(e webhooks.Event) string {
	switch e := e.(type) {
	case *webhooks.InvoiceCreated:
		return fmt.Sprintf("%s %s status=%s total=%s", e.EventType(), e.InvoiceNumber, e.Status, money(e.Total))
	case *webhooks.QuoteCreated:
		return fmt.Sprintf("%s %s %q status=%s total=%s", e.EventType(), e.QuoteNumber, e.Title, e.Status, money(e.Total))
	case *webhooks.QuoteAccepted:
		s := fmt.Sprintf("%s %s accepted_by=%q total=%s", e.EventType(), e.QuoteNumber, e.AcceptedBy, money(e.Total))
		if e.InvoiceNumber == nil {
			return s + " (not converted into an invoice)"
		}
		status := ""
		if e.InvoiceStatus != nil {
			status = string(*e.InvoiceStatus)
		}
		return s + fmt.Sprintf(" -> invoice %s status=%s", *e.InvoiceNumber, status)
	case *webhooks.PaymentReceived:
		return fmt.Sprintf("%s invoice=%s amount=%s", e.EventType(), e.InvoiceID, money(e.Amount))
	case *webhooks.InvoicePaid:
		return fmt.Sprintf("%s %s amount_paid=%s", e.EventType(), e.InvoiceNumber, money(e.AmountPaid))
	case *webhooks.ContactCreated:
		return fmt.Sprintf("%s %s %q", e.EventType(), e.ContactType, e.Name)
	default:
		return string(e.EventType())
	}
}

// money writes an amount with two decimal places.
func money(d decimal.Decimal) string {
	return strings.TrimSpace(d.StringFixed(2))
}
