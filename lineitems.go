package invoicing

import (
	"strconv"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// LineItemParams is one line of an invoice, quote or bill create request.
//
//codec:params
type LineItemParams struct {
	// Description is the line's text; optional (a linked catalog item
	// supplies it on quotes).
	Description string `json:"description,omitempty"`
	// Quantity is the number of units; nil means not sent, and the service
	// uses 1. A quantity you set is always sent, zero included:
	// Quantity: invoicing.Ptr(decimal.Zero) bills nothing for the line.
	Quantity *decimal.Decimal `json:"quantity,omitempty"`
	// UnitPrice is the price per unit before tax. Required: a zero price is
	// sent as 0.
	UnitPrice decimal.Decimal `json:"unit_price"`
	// AccountID is the revenue (or, on bills, expense) account; required
	// unless the request sets DefaultAccountID.
	AccountID string `json:"account_id,omitempty"`
	// TaxCodeID is the tax code, whose rate the service looks up; required
	// unless the request sets DefaultTaxCodeID.
	TaxCodeID string `json:"tax_code_id,omitempty"`
	// ItemID links the line to a catalog item by its id (a UUID); optional.
	ItemID string `json:"item_id,omitempty"`
	// Extra holds body members the SDK does not model, sent after the
	// typed fields in name order (decimal.Decimal values as exact numbers,
	// at any depth). A name a typed field also sends is a *ParamError; one
	// whose typed field is empty (so not sent) may be used.
	Extra map[string]any `json:",embed"`
}

// validateLines checks what the API makes certain: at least one line, an
// account and a tax code on each line or through the request defaults, and
// an item id that is a UUID when one is given.
func validateLines(lines []LineItemParams, defaultAccount, defaultTaxCode string) error {
	if len(lines) == 0 {
		return paramErr("line_items", "at least one line item is required")
	}
	for i, l := range lines {
		field := "line_items[" + strconv.Itoa(i) + "]."
		if l.AccountID == "" && defaultAccount == "" {
			return paramErr(field+"account_id", "required unless default_account_id is set")
		}
		if l.TaxCodeID == "" && defaultTaxCode == "" {
			return paramErr(field+"tax_code_id", "required unless default_tax_code_id is set")
		}
		if l.ItemID != "" && uuid.Validate(l.ItemID) != nil {
			return paramErr(field+"item_id", strconv.Quote(l.ItemID)+" is not a UUID")
		}
	}
	return nil
}

func requireString(field, v string) error {
	if v == "" {
		return paramErr(field, "is required")
	}
	return nil
}
