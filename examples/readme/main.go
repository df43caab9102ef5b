// Command readme is the README's quickstart, kept here so that it is
// compiled and tested: run it with INVOICING_BASE_URL (including
// /api/v1/external) and INVOICING_API_KEY set.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log"
	"os"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go"
)

func main() {
	if err := run(context.Background(), os.Getenv("INVOICING_BASE_URL"), os.Getenv("INVOICING_API_KEY"), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, baseURL, apiKey string, out io.Writer) error {
	c, err := invoicing.NewClient(baseURL, apiKey)
	if err != nil {
		return err
	}

	// Lists page lazily (100 a page) as you range; break stops fetching.
	for inv, err := range c.Invoices.List(ctx, &invoicing.InvoiceListParams{Status: invoicing.InvoiceStatusOverdue}) {
		if err != nil {
			return err
		}
		fmt.Fprintln(out, inv.InvoiceNumber, inv.AmountDue.StringFixed(2)) // exact decimal
	}

	// A client, a revenue account and a tax code of your business.
	client, err := first(c.Clients.List(ctx, nil))
	if err != nil {
		return err
	}
	account, err := first(c.Accounts.List(ctx, &invoicing.AccountListParams{Type: invoicing.AccountTypeRevenue}))
	if err != nil {
		return err
	}
	taxCode, err := first(c.TaxCodes.List(ctx, nil))
	if err != nil {
		return err
	}

	// Creating with a reference is idempotent: the second call returns the
	// existing invoice with Created == false.
	res, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID:         client.ID,
		Reference:        "ERP-7781",
		DefaultAccountID: account.ID,
		DefaultTaxCodeID: taxCode.ID,
		LineItems: []invoicing.LineItemParams{{
			Description: "Consulting",
			Quantity:    invoicing.Ptr(decimal.RequireFromString("10.5")),
			UnitPrice:   decimal.RequireFromString("150"),
		}},
	})
	var apiErr *invoicing.Error
	switch {
	case errors.Is(err, invoicing.ErrConflict):
		return errors.New("invoice number already used")
	case errors.As(err, &apiErr):
		return fmt.Errorf("%d %s (request %s)", apiErr.StatusCode, apiErr.Detail, apiErr.RequestID)
	case err != nil:
		return err
	}
	fmt.Fprintln(out, res.InvoiceNumber, res.Total.StringFixed(2), "created:", res.Created)
	return nil
}

// first returns the first record of a list.
func first[T any](records iter.Seq2[*T, error]) (*T, error) {
	for r, err := range records {
		return r, err
	}
	return nil, errors.New("the list is empty")
}
