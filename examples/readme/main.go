// Command readme is the README's quickstart, kept here so that it is
// compiled and tested: run it with INVOICING_BASE_URL (including
// /api/v1/external) and INVOICING_API_KEY set.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go"
)

func main() {
	// Empty arguments: NewClient reads INVOICING_BASE_URL and INVOICING_API_KEY.
	if err := run(context.Background(), "", "", os.Stdout); err != nil {
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

	// A customer (a client of your business), a revenue account and a tax
	// code. First takes a list's first record; an empty list matches
	// invoicing.ErrNotFound.
	customer, err := invoicing.First(c.Clients.List(ctx, nil))
	if err != nil {
		return err
	}
	account, err := invoicing.First(c.Accounts.List(ctx, &invoicing.AccountListParams{Type: invoicing.AccountTypeRevenue}))
	if err != nil {
		return err
	}
	taxCode, err := invoicing.First(c.TaxCodes.List(ctx, nil))
	if err != nil {
		return err
	}

	// Creating with a reference is idempotent: the second call returns the
	// existing invoice with Created == false.
	res, err := c.Invoices.Create(ctx, &invoicing.InvoiceCreateParams{
		ClientID:         customer.ID,
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
