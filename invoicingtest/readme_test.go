package invoicingtest_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/godoc"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// The README shows this test, word for word (TestREADMEShowsTheTests).
func TestInvoiceGoesOverdue(t *testing.T) {
	clock := invoicingtest.NewFakeClock(time.Date(2026, time.March, 10, 9, 0, 0, 0, time.UTC))
	srv := invoicingtest.NewTestServer(t, invoicingtest.WithClock(clock)) // closed with the test
	c := srv.Client()

	created := make(chan *webhooks.InvoiceCreated, 1)
	srv.NewReceiver(func(ctx context.Context, d *webhooks.Delivery) error {
		if e, ok := d.Event.(*webhooks.InvoiceCreated); ok {
			created <- e
		}
		return nil
	}, invoicingtest.Subscribe(webhooks.EventInvoiceCreated))

	customer, err := c.Clients.Get(t.Context(), invoicingtest.SeedClientID)
	require.NoError(t, err)
	inv, err := c.Invoices.Create(t.Context(), &invoicing.InvoiceCreateParams{
		ClientID:         customer.ID,
		Status:           invoicing.InvoiceStatusAwaitingPayment,
		DueDate:          invoicing.NewDate(2026, time.March, 24),
		DefaultAccountID: invoicingtest.SeedRevenueAccountID,
		DefaultTaxCodeID: invoicingtest.SeedGSTTaxCodeID,
		LineItems:        []invoicing.LineItemParams{{Description: "Design", UnitPrice: decimal.RequireFromString("250")}},
	})
	require.NoError(t, err)
	assert.Equal(t, inv.InvoiceNumber, (<-created).InvoiceNumber) // delivered before Create returned

	clock.Advance(15 * 24 * time.Hour) // 2026-03-25: the due date has passed
	overdue, err := invoicing.First(c.Invoices.List(t.Context(), &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusOverdue}))
	require.NoError(t, err)
	assert.Equal(t, inv.ID, overdue.ID)
}

// The README shows TestInvoiceGoesOverdue, and ExampleNewServer's body, as
// they are written here.
func TestREADMEShowsTheTests(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	for file, start := range map[string]string{
		"readme_test.go":  "func TestInvoiceGoesOverdue(",
		"example_test.go": "func ExampleNewServer(",
	} {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		text := string(src)
		i := strings.Index(text, start)
		require.GreaterOrEqual(t, i, 0, start)
		fn := text[i : i+strings.Index(text[i:], "\n}\n")+3]
		if file == "example_test.go" { // the body, without its output
			fn = fn[strings.Index(fn, "\n")+1 : strings.Index(fn, "\t// Output:")]
			fn = strings.ReplaceAll(strings.TrimPrefix(fn, "\t"), "\n\t", "\n")
		}
		assert.Contains(t, string(readme), "```go\n"+fn+"```\n", "README.md must show %s from %s", start, file)
	}
}

// TestEverySeedIDIsListedByGoDoc: go doc's package summary shows one line
// per declaration, so a Seed* id declared in a group with others hides
// behind the first one's "...". Each is declared on its own, with its doc.
func TestEverySeedIDIsListedByGoDoc(t *testing.T) {
	pkg := godoc.Read(t, ".", "github.com/invoicing-api/invoicing-go/invoicingtest")
	seeds := 0
	for _, v := range pkg.Consts {
		for _, name := range v.Names {
			if strings.HasPrefix(name, "Seed") {
				seeds++
				assert.Equal(t, []string{name}, v.Names, "%s is declared on its own", name)
				assert.True(t, strings.HasPrefix(v.Doc, name+" "), "%s has its own doc: %q", name, v.Doc)
			}
		}
	}
	assert.Equal(t, 23, seeds, "every Seed* id")
}
