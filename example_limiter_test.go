package invoicing_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"golang.org/x/time/rate"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

func ExampleWithLimiter() {
	srv := invoicingtest.NewServer()
	defer srv.Close()
	// One Client serves every business; each business's calls wait on its
	// own budget (here in memory; a Limiter may as well keep it in a
	// database shared by every process).
	c := srv.Client()
	ctx := context.Background()
	exampleInvoices(c, 10, 20, 30)
	// The test server has one business: three of its keys stand in for
	// three businesses.
	type business struct {
		key    string
		budget invoicing.Limiter
	}
	// Budgets in requests a second, with a burst.
	businesses := map[string]business{
		"acme":    {srv.ReadOnlyKey, rate.NewLimiter(10, 5)},
		"globex":  {srv.NewAPIKey(invoicingtest.ReadScopes()...), rate.NewLimiter(rate.Every(time.Second), 1)},
		"initech": {srv.FullKey, rate.NewLimiter(2, 2)},
	}
	for _, name := range []string{"acme", "globex", "initech"} {
		b := businesses[name]
		var n int
		for _, err := range c.Invoices.List(ctx, nil, invoicing.WithAPIKey(b.key), invoicing.WithLimiter(b.budget)) {
			if err != nil {
				log.Fatal(err)
			}
			n++
		}
		fmt.Println(name, n, "invoices")
	}
	// Output:
	// acme 3 invoices
	// globex 3 invoices
	// initech 3 invoices
}
