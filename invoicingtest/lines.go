package invoicingtest

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// lineRequest is one entry of line_items in POST /invoices, /quotes and
// /bills. Names match exactly, so the line's own "id" and the item id
// alias "Id" are different members.
type lineRequest struct {
	Description *string    `json:"description"`
	Quantity    reqDecimal `json:"quantity"`
	UnitPrice   reqDecimal `json:"unit_price"`
	AccountID   string     `json:"account_id"`
	TaxCodeID   string     `json:"tax_code_id"`
	// The catalog item id under each of its accepted names, in order of
	// preference (see itemID).
	ItemID      *string `json:"item_id"`
	ItemIDCamel *string `json:"itemId"`
	ItemIDAlias *string `json:"Id"`
	// OwnID is the line's own id, which quotes refuse: set when the line
	// carried "id", even as null.
	OwnID jsontext.Value `json:"id"`
}

// itemID is the catalog item id of the first of item_id, itemId and Id that
// holds one, or "".
func (l *lineRequest) itemID() string {
	for _, id := range []*string{l.ItemID, l.ItemIDCamel, l.ItemIDAlias} {
		if id != nil && *id != "" {
			return *id
		}
	}
	return ""
}

// withLines is the body of POST /invoices, /quotes or /bills, which has
// line items.
type withLines interface {
	lineItems() []*lineRequest
}

func (req *invoiceRequest) lineItems() []*lineRequest { return req.LineItems }
func (req *quoteRequest) lineItems() []*lineRequest   { return req.LineItems }
func (req *billRequest) lineItems() []*lineRequest    { return req.LineItems }

// lineDefaults are the request-level default_account_id and
// default_tax_code_id.
type lineDefaults struct {
	accountID, taxCodeID string
}

// buildLines validates line requests against the business's catalog,
// accounts and tax codes and computes their amounts. Rules (all 422):
// at least one line; unit_price required; quantity (default 1) not negative
// (a line of quantity 0 bills nothing); account_id and tax_code_id from the
// line or the defaults, naming an existing account and tax code; item_id
// naming a catalog item. The caller holds s.mu.
func (s *Server) buildLines(reqs []*lineRequest, defs lineDefaults) ([]line, *apiError) {
	if len(reqs) == 0 {
		return nil, invalid("line_items must contain at least one line")
	}
	lines := make([]line, 0, len(reqs))
	for i, req := range reqs {
		l, err := s.buildLine(req, defs)
		if err != nil {
			return nil, invalid("line_items[%d]: %s", i, err)
		}
		lines = append(lines, l)
	}
	return lines, nil
}

func (s *Server) buildLine(req *lineRequest, defs lineDefaults) (line, error) {
	l := line{ID: uuid.NewString(), Quantity: decimal.NewFromInt(1)}
	if !req.UnitPrice.set {
		return l, fmt.Errorf("unit_price is required")
	}
	l.UnitPrice = req.UnitPrice.value
	if msg := checkDecimal("unit_price", l.UnitPrice); msg != "" {
		return l, fmt.Errorf("%s", msg)
	}
	if req.Quantity.set {
		l.Quantity = req.Quantity.value
	}
	if l.Quantity.IsNegative() {
		return l, fmt.Errorf("quantity must not be negative")
	}
	if msg := checkDecimal("quantity", l.Quantity); msg != "" {
		return l, fmt.Errorf("%s", msg)
	}
	if req.Description != nil {
		l.Description = *req.Description
	}
	if itemID := req.itemID(); itemID != "" {
		it := s.data.items.get(itemID)
		if it == nil {
			return l, fmt.Errorf("item_id %s does not match a catalog item of the business", itemID)
		}
		l.ItemID, l.ItemCode, l.ItemName = it.ID, it.Code, it.Name
		if req.Description == nil {
			l.Description = it.Description
			if l.Description == "" {
				l.Description = it.Name
			}
		}
	}
	l.AccountID = firstNonEmpty(req.AccountID, defs.accountID)
	if l.AccountID == "" {
		return l, fmt.Errorf("account_id is required: set it on the line or as default_account_id")
	}
	if s.data.accounts.get(l.AccountID) == nil {
		return l, fmt.Errorf("account_id %s does not match an account of the business", l.AccountID)
	}
	l.TaxCodeID = firstNonEmpty(req.TaxCodeID, defs.taxCodeID)
	if l.TaxCodeID == "" {
		return l, fmt.Errorf("tax_code_id is required: set it on the line or as default_tax_code_id")
	}
	tc := s.data.taxCodes.get(l.TaxCodeID)
	if tc == nil {
		return l, fmt.Errorf("tax_code_id %s does not match a tax code of the business", l.TaxCodeID)
	}
	l.TaxRate = tc.Rate
	l.setAmounts()
	return l, nil
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// lineJSON is a line of an invoice or a bill as the API shows it.
type lineJSON struct {
	ID          string     `json:"id"`
	Description string     `json:"description"`
	Quantity    number     `json:"quantity"`
	UnitPrice   money      `json:"unit_price"`
	Amount      money      `json:"amount"`
	TaxAmount   money      `json:"tax_amount"`
	AccountID   nullString `json:"account_id"`
	TaxCodeID   nullString `json:"tax_code_id"`
}

func lineViews(lines []line) []lineJSON {
	out := make([]lineJSON, 0, len(lines))
	for _, l := range lines {
		out = append(out, lineJSON{
			ID: l.ID, Description: l.Description,
			Quantity: number(l.Quantity), UnitPrice: money(l.UnitPrice),
			Amount: money(l.amount), TaxAmount: money(l.tax),
			AccountID: nullString(l.AccountID), TaxCodeID: nullString(l.TaxCodeID),
		})
	}
	return out
}
