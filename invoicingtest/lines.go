package invoicingtest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// lineRequest is one entry of line_items in POST /invoices, /quotes and
// /bills.
type lineRequest struct {
	description *string
	quantity    reqDecimal
	unitPrice   reqDecimal
	accountID   string
	taxCodeID   string
	itemID      string
	sentOwnID   bool // the line carried "id" (its own id), which quotes refuse
}

// itemIDKeys are the accepted spellings of a line's catalog item id, in
// order of preference. JSON keys are matched exactly (encoding/json would
// match "id" to "Id"), so the line's own "id" is never taken for an alias.
var itemIDKeys = []string{"item_id", "itemId", "Id"}

// decodeWithLines decodes the body of POST /invoices, /quotes or /bills into
// req, then parses the line_items that decoding stored in *items, a field of
// req.
func decodeWithLines(r *http.Request, req any, items *[]json.RawMessage) ([]lineRequest, *apiError) {
	if err := decodeBody(r, req); err != nil {
		return nil, err
	}
	return parseLines(*items)
}

// parseLines decodes line_items entries. A line that is not an object, or a
// field with the wrong JSON type, is a 400.
func parseLines(raw []json.RawMessage) ([]lineRequest, *apiError) {
	out := make([]lineRequest, 0, len(raw))
	for i, r := range raw {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(r, &fields); err != nil || fields == nil {
			return nil, badRequest("Malformed JSON body: line_items[%d] must be an object", i)
		}
		var l lineRequest
		targets := []struct {
			key    string
			target any
		}{
			{"description", &l.description},
			{"quantity", &l.quantity},
			{"unit_price", &l.unitPrice},
			{"account_id", &l.accountID},
			{"tax_code_id", &l.taxCodeID},
		}
		for _, t := range targets {
			if v, ok := fields[t.key]; ok {
				if err := json.Unmarshal(v, t.target); err != nil {
					return nil, badRequest("Malformed JSON body: line_items[%d].%s: %v", i, t.key, err)
				}
			}
		}
		for _, key := range itemIDKeys {
			v, ok := fields[key]
			if !ok || l.itemID != "" {
				continue
			}
			var id *string
			if err := json.Unmarshal(v, &id); err != nil {
				return nil, badRequest("Malformed JSON body: line_items[%d].%s must be a string", i, key)
			}
			if id != nil {
				l.itemID = *id
			}
		}
		_, l.sentOwnID = fields["id"]
		out = append(out, l)
	}
	return out, nil
}

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
func (s *Server) buildLines(reqs []lineRequest, defs lineDefaults) ([]line, *apiError) {
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

func (s *Server) buildLine(req lineRequest, defs lineDefaults) (line, error) {
	l := line{id: uuid.NewString(), quantity: decimal.NewFromInt(1)}
	if !req.unitPrice.set {
		return l, fmt.Errorf("unit_price is required")
	}
	l.unitPrice = req.unitPrice.value
	if msg := checkDecimal("unit_price", l.unitPrice); msg != "" {
		return l, fmt.Errorf("%s", msg)
	}
	if req.quantity.set {
		l.quantity = req.quantity.value
	}
	if l.quantity.IsNegative() {
		return l, fmt.Errorf("quantity must not be negative")
	}
	if msg := checkDecimal("quantity", l.quantity); msg != "" {
		return l, fmt.Errorf("%s", msg)
	}
	if req.description != nil {
		l.description = *req.description
	}
	if req.itemID != "" {
		it := s.data.items.get(req.itemID)
		if it == nil {
			return l, fmt.Errorf("item_id %s does not match a catalog item of the business", req.itemID)
		}
		l.itemID, l.itemCode, l.itemName = it.id, it.code, it.name
		if req.description == nil {
			l.description = it.description
			if l.description == "" {
				l.description = it.name
			}
		}
	}
	l.accountID = firstNonEmpty(req.accountID, defs.accountID)
	if l.accountID == "" {
		return l, fmt.Errorf("account_id is required: set it on the line or as default_account_id")
	}
	if s.data.accounts.get(l.accountID) == nil {
		return l, fmt.Errorf("account_id %s does not match an account of the business", l.accountID)
	}
	l.taxCodeID = firstNonEmpty(req.taxCodeID, defs.taxCodeID)
	if l.taxCodeID == "" {
		return l, fmt.Errorf("tax_code_id is required: set it on the line or as default_tax_code_id")
	}
	tc := s.data.taxCodes.get(l.taxCodeID)
	if tc == nil {
		return l, fmt.Errorf("tax_code_id %s does not match a tax code of the business", l.taxCodeID)
	}
	l.taxRate = tc.Rate
	l.net, l.tax = lineAmounts(l.quantity, l.unitPrice, l.taxRate)
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
	ID          string  `json:"id"`
	Description string  `json:"description"`
	Quantity    number  `json:"quantity"`
	UnitPrice   money   `json:"unit_price"`
	Amount      money   `json:"amount"`
	TaxAmount   money   `json:"tax_amount"`
	AccountID   *string `json:"account_id"`
	TaxCodeID   *string `json:"tax_code_id"`
}

func lineViews(lines []line) []lineJSON {
	out := make([]lineJSON, 0, len(lines))
	for _, l := range lines {
		out = append(out, lineJSON{
			ID: l.id, Description: l.description,
			Quantity: number(l.quantity), UnitPrice: money(l.unitPrice),
			Amount: money(l.amount()), TaxAmount: money(l.tax),
			AccountID: nullable(l.accountID), TaxCodeID: nullable(l.taxCodeID),
		})
	}
	return out
}

// nullable gives nil (JSON null) for "".
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
