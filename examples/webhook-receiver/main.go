// Command webhook-receiver receives the Invoicing Service's webhooks on any
// path, verifies their signature and prints one line per event to standard
// output. Refused requests are logged to standard error.
//
//	INVOICING_WEBHOOK_SECRET=<signing secret> go run ./examples/webhook-receiver -addr 127.0.0.1:8080
//
// It answers 200 for a verified delivery (and for a repeat of one it already
// printed), 401 for a bad signature or a stale timestamp, and 400, 405 or 413
// for other bad requests. It stops gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

// secretEnv names the environment variable holding the signing secret.
const secretEnv = "INVOICING_WEBHOOK_SECRET"

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()

	secret := os.Getenv(secretEnv)
	if secret == "" {
		fmt.Fprintf(os.Stderr, "webhook-receiver: %s is not set; set it to the webhook's signing secret\n", secretEnv)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, *addr, secret, os.Stdout, logger); err != nil {
		logger.Error("webhook-receiver stopped", "error", err)
		os.Exit(1)
	}
}

// run serves webhooks on addr until ctx ends, then shuts down gracefully.
func run(ctx context.Context, addr, secret string, out io.Writer, logger *slog.Logger) error {
	h, err := newHandler(secret, out, logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("listening", "url", "http://"+ln.Addr().String()+"/")

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHandler returns the webhook handler: it verifies each delivery with
// secret, skips repeats of deliveries already printed, and writes one line
// per event to out.
func newHandler(secret string, out io.Writer, logger *slog.Logger) (http.Handler, error) {
	v, err := webhooks.NewVerifier(secret)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex // one line at a time
	printEvent := func(_ context.Context, d *webhooks.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := fmt.Fprintln(out, describe(d))
		return err // a failed write makes the service retry
	}
	return webhooks.Handler(v, printEvent,
		webhooks.WithDeduper(webhooks.NewMemoryDeduper(27*time.Hour)),
		webhooks.WithLogger(logger),
	), nil
}

// describe returns the line printed for d: its type, delivery id and the
// event's key fields.
func describe(d *webhooks.Delivery) string {
	return fmt.Sprintf("%s delivery=%s %s", d.Type, d.ID, strings.Join(keyFields(d.Event), " "))
}

func kv(key, value string) string {
	if value == "" || strings.ContainsAny(value, " \"=\\") || !strconv.CanBackquote(value) {
		value = strconv.Quote(value)
	}
	return key + "=" + value
}

// money writes d with the number of decimal places it was sent with
// ("1375.00", not decimal's shortest "1375").
func money(d decimal.Decimal) string {
	if d.Exponent() < 0 {
		return d.StringFixed(-d.Exponent())
	}
	return d.String()
}

func keyFields(e webhooks.Event) []string {
	switch e := e.(type) {
	case *webhooks.InvoiceCreated:
		return []string{kv("invoice", e.InvoiceNumber), kv("client", e.ClientID), kv("total", money(e.Total)), kv("status", string(e.Status))}
	case *webhooks.InvoiceSent:
		return []string{kv("invoice", e.InvoiceNumber), kv("client", e.ClientID), kv("sent_at", e.SentAt.Format(time.RFC3339))}
	case *webhooks.InvoiceUpdated:
		return []string{kv("invoice", e.InvoiceNumber), kv("total", money(e.Total)), kv("status", string(e.Status))}
	case *webhooks.InvoicePaid:
		return []string{kv("invoice", e.InvoiceNumber), kv("amount_paid", money(e.AmountPaid))}
	case *webhooks.BillCreated:
		return []string{kv("bill", e.BillNumber), kv("supplier", e.SupplierID), kv("total", money(e.Total)), kv("status", e.Status)}
	case *webhooks.BillApproved:
		return []string{kv("bill", e.BillNumber), kv("approved_at", e.ApprovedAt.Format(time.RFC3339))}
	case *webhooks.ContactCreated:
		return []string{kv("contact", e.ContactID), kv("type", string(e.ContactType)), kv("name", e.Name)}
	case *webhooks.PaymentReceived:
		fields := []string{kv("payment", e.PaymentID), kv("invoice_id", e.InvoiceID)}
		if e.InvoiceNumber != nil {
			fields = append(fields, kv("invoice", *e.InvoiceNumber))
		}
		return append(fields, kv("amount", money(e.Amount)), kv("method", string(e.PaymentMethod)))
	case *webhooks.QuoteCreated:
		return quoteFields(&e.Quote)
	case *webhooks.QuoteSent:
		return quoteFields(&e.Quote)
	case *webhooks.QuoteViewed:
		return append(quoteFields(&e.Quote), kv("views", strconv.Itoa(e.ViewCount)), kv("viewer", e.Viewer.ContactName))
	case *webhooks.QuoteAccepted:
		fields := append(quoteFields(&e.Quote), kv("accepted_by", e.AcceptedBy))
		if e.InvoiceNumber == nil {
			return append(fields, "invoice=none")
		}
		status := ""
		if e.InvoiceStatus != nil {
			status = string(*e.InvoiceStatus)
		}
		return append(fields, kv("invoice", *e.InvoiceNumber), kv("invoice_status", status))
	case *webhooks.QuoteUnaccepted:
		return append(quoteFields(&e.Quote), kv("previous_status", string(e.PreviousStatus)))
	case *webhooks.Test:
		return []string{kv("business", e.BusinessID), kv("message", e.Message)}
	case *webhooks.RawEvent:
		return []string{kv("unknown_event_bytes", strconv.Itoa(len(e.Body)))}
	}
	return []string{fmt.Sprintf("event=%T", e)}
}

func quoteFields(q *webhooks.Quote) []string {
	return []string{kv("quote", q.QuoteNumber), kv("client", q.ClientName), kv("status", string(q.Status)), kv("total", money(q.Total)+" "+q.Currency)}
}
