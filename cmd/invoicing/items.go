package main

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// items runs "invoicing items SUBCOMMAND".
func (c *cli) items(ctx context.Context, args []string) error {
	return c.group(ctx, "items", "Read the business's catalog items (INVOICING_BASE_URL, INVOICING_API_KEY).", args, []command{
		{"list", "list catalog items [--type T] [--json|--csv]", (*cli).listItems},
		{"get", "show one item: get ID [--json]", (*cli).getItem},
	})
}

const itemsListHelp = `
Usage: invoicing items list [--type T] [--json|--csv]

Lists every catalog item (or those of one type: SALES, PURCHASE or TEXT),
oldest first, as a table fitted to the terminal, as JSON lines or as CSV.
Unit prices are exact, never rounded, with at least two decimals (150.00,
0.125) in the table, the CSV and the JSON, where they are numbers.

Example:
  invoicing items list --type SALES --csv > items.csv
`

var itemColumns = []column[invoicing.Item]{
	{header: "CODE", field: "item_code", value: func(i *invoicing.Item) string { return i.ItemCode }},
	{header: "NAME", field: "name", value: func(i *invoicing.Item) string { return i.Name }, flex: true},
	{header: "TYPE", field: "item_type", value: func(i *invoicing.Item) string { return string(i.ItemType) }},
	{header: "UNIT PRICE", field: "unit_price", value: func(i *invoicing.Item) string { return invoicingtest.FormatMoney(i.UnitPrice) }, right: true},
	{header: "TAXABLE", field: "is_taxable", value: func(i *invoicing.Item) string { return strconv.FormatBool(i.IsTaxable) }},
	{header: "ACTIVE", field: "is_active", value: func(i *invoicing.Item) string { return strconv.FormatBool(i.IsActive) }},
	{header: "ID", field: "id", value: func(i *invoicing.Item) string { return i.ID }},
}

// itemTypes are the values of --type.
var itemTypes = []invoicing.ItemType{invoicing.ItemTypeSales, invoicing.ItemTypePurchase, invoicing.ItemTypeText}

// itemDrop is the order in which item columns give way on a narrow
// terminal.
var itemDrop = []string{"ACTIVE", "TAXABLE", "TYPE", "NAME", "UNIT PRICE", "ID"}

// itemListing lists items.
var itemListing = listing[invoicing.Item]{noun: "items", columns: itemColumns, drop: itemDrop, money: itemMoney}

// itemTypeFilter is --type of "items list".
var itemTypeFilter = filter[invoicing.ItemType]{"type", "only items of `TYPE`: SALES, PURCHASE or TEXT (any case)", "item type", itemTypes}

func (c *cli) listItems(ctx context.Context, args []string) error {
	return runList(c, args, "items list", itemsListHelp, itemTypeFilter, itemListing,
		func(client *invoicing.Client, typ invoicing.ItemType) iter.Seq2[*invoicing.Item, error] {
			return client.Items.List(ctx, &invoicing.ItemListParams{ItemType: typ})
		})
}

const itemsGetHelp = `
Usage: invoicing items get ID [--json]

Shows one catalog item, or prints it as one JSON object. The unit price is
exact, with at least two decimals (150.00, 0.125).
`

func (c *cli) getItem(ctx context.Context, args []string) error {
	get := func(client *invoicing.Client, id string) (*invoicing.Item, error) { return client.Items.Get(ctx, id) }
	return runGet(c, args, "items get", itemsGetHelp, "item", itemMoney, get, c.showItem)
}

// showItem prints an item's fields.
func (c *cli) showItem(it *invoicing.Item) {
	fmt.Fprintf(c.stdout, "Item %s\n\n", it.Name)
	writeFields(c.stdout, [][2]string{
		{"ID", it.ID},
		{"Code", it.ItemCode},
		{"Type", string(it.ItemType)},
		{"Description", it.Description},
		{"Unit price", invoicingtest.FormatMoney(it.UnitPrice)},
		{"Taxable", strconv.FormatBool(it.IsTaxable)},
		{"Active", strconv.FormatBool(it.IsActive)},
		{"Account", it.AccountID},
		{"Tax code", it.TaxCodeID},
		{"Created", it.CreatedAt.Format(time.RFC3339)},
		{"Updated", formatTimePtr(it.UpdatedAt)},
	})
}
