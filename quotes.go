package invoicing

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"
)

// QuoteService reads and creates quotes (scopes quotes:read and
// quotes:write).
type QuoteService service

// Quote is a sales quote. For an accepted quote the totals and lines are the
// client's saved agreement (excluded optional lines omitted, chosen
// quantities); other quotes keep their offered lines.
type Quote struct {
	ID          string      `json:"id"`
	QuoteNumber string      `json:"quote_number"`
	Title       string      `json:"title"`
	ClientID    string      `json:"client_id"`
	ClientName  string      `json:"client_name"`
	Status      QuoteStatus `json:"status"`
	IssueDate   Date        `json:"issue_date"`
	// ValidUntil is the expiry date.
	ValidUntil Date `json:"valid_until"`
	// Subtotal is before tax; Total includes tax.
	Subtotal  decimal.Decimal `json:"subtotal"`
	TaxTotal  decimal.Decimal `json:"tax_total"`
	Total     decimal.Decimal `json:"total"`
	Currency  string          `json:"currency"`
	Notes     string          `json:"notes"`
	LineItems []QuoteLineItem `json:"line_items"`
	CreatedAt time.Time       `json:"created_at"`
	// UpdatedAt is nil when the service sends null.
	UpdatedAt *time.Time `json:"updated_at"`
	// Extra holds the members the service sent that the SDK has no field
	// for (see Extra); nil when there were none.
	Extra Extra `json:",embed"`
}

func (v *Quote) decodeFrom(st *decodeState) error {
	return st.object(func(name []byte) error {
		switch string(name) {
		case "id":
			return st.str(&v.ID)
		case "quote_number":
			return st.str(&v.QuoteNumber)
		case "title":
			return st.shared(&v.Title)
		case "client_id":
			return st.shared(&v.ClientID)
		case "client_name":
			return st.shared(&v.ClientName)
		case "status":
			return v.Status.UnmarshalJSONFrom(st.dec)
		case "issue_date":
			return st.date(&v.IssueDate)
		case "valid_until":
			return st.date(&v.ValidUntil)
		case "subtotal":
			return st.decimal(&v.Subtotal)
		case "tax_total":
			return st.decimal(&v.TaxTotal)
		case "total":
			return st.decimal(&v.Total)
		case "currency":
			return st.shared(&v.Currency)
		case "notes":
			return st.shared(&v.Notes)
		case "line_items":
			return array(st, &v.LineItems, func(l *QuoteLineItem) error { return l.decodeFrom(st) })
		case "created_at":
			return st.time(&v.CreatedAt)
		case "updated_at":
			return st.timePtr(&v.UpdatedAt)
		}
		return st.extra(&v.Extra, name)
	})
}

// UnmarshalJSONFrom decodes the record from dec, keeping the members the SDK
// has no field for in Extra (the encoding/json/v2 interface).
func (v *Quote) UnmarshalJSONFrom(dec *jsontext.Decoder) error { return decodeRecord(dec, v) }

// UnmarshalJSON decodes the record as UnmarshalJSONFrom does (the
// encoding/json interface).
func (v *Quote) UnmarshalJSON(b []byte) error { return unmarshalRecord(b, v) }

// MarshalJSONTo encodes the record as the service does, money as exact
// numbers, followed by the members in Extra (the encoding/json/v2
// interface).
func (v Quote) MarshalJSONTo(enc *jsontext.Encoder) error {
	type plain Quote
	return marshalRecord(enc, (*plain)(&v))
}

// MarshalJSON encodes the record as MarshalJSONTo does (the encoding/json
// interface).
func (v Quote) MarshalJSON() ([]byte, error) { return marshalJSON(v) }

// QuoteLineItem is one line of a Quote.
type QuoteLineItem struct {
	ID string `json:"id"`
	// ItemID, ItemCode and ItemName are set only when the line is linked to
	// a catalog item ("" otherwise). ItemID is kept as the service sends it.
	ItemID      string          `json:"item_id,omitempty"`
	ItemCode    string          `json:"item_code,omitempty"`
	ItemName    string          `json:"item_name,omitempty"`
	Description string          `json:"description"`
	Quantity    decimal.Decimal `json:"quantity"`
	// UnitPrice is the price per unit before tax.
	UnitPrice decimal.Decimal `json:"unit_price"`
	// Amount is the line total including tax and discounts; TaxAmount is its
	// tax (a line of 100 with a 1% tax code: Amount 101, TaxAmount 1).
	Amount    decimal.Decimal `json:"amount"`
	TaxAmount decimal.Decimal `json:"tax_amount"`
	// Extra holds the members the service sent that the SDK has no field
	// for (see Extra); nil when there were none.
	Extra Extra `json:",embed"`
}

func (l *QuoteLineItem) decodeFrom(st *decodeState) error {
	return st.object(func(name []byte) error {
		switch string(name) {
		case "id":
			return st.str(&l.ID)
		case "item_id":
			return st.shared(&l.ItemID)
		case "item_code":
			return st.shared(&l.ItemCode)
		case "item_name":
			return st.shared(&l.ItemName)
		case "description":
			return st.shared(&l.Description)
		case "quantity":
			return st.decimal(&l.Quantity)
		case "unit_price":
			return st.decimal(&l.UnitPrice)
		case "amount":
			return st.decimal(&l.Amount)
		case "tax_amount":
			return st.decimal(&l.TaxAmount)
		}
		return st.extra(&l.Extra, name)
	})
}

// UnmarshalJSONFrom decodes the record from dec, keeping the members the SDK
// has no field for in Extra (the encoding/json/v2 interface).
func (l *QuoteLineItem) UnmarshalJSONFrom(dec *jsontext.Decoder) error { return decodeRecord(dec, l) }

// UnmarshalJSON decodes the record as UnmarshalJSONFrom does (the
// encoding/json interface).
func (l *QuoteLineItem) UnmarshalJSON(b []byte) error { return unmarshalRecord(b, l) }

// MarshalJSONTo encodes the record as the service does, money as exact
// numbers, followed by the members in Extra (the encoding/json/v2
// interface).
func (l QuoteLineItem) MarshalJSONTo(enc *jsontext.Encoder) error {
	type plain QuoteLineItem
	return marshalRecord(enc, (*plain)(&l))
}

// MarshalJSON encodes the record as MarshalJSONTo does (the encoding/json
// interface).
func (l QuoteLineItem) MarshalJSON() ([]byte, error) { return marshalJSON(l) }

// QuoteListParams filters GET /quotes. Zero fields are not sent.
type QuoteListParams struct {
	ListParams
	Status   QuoteStatus
	ClientID string
	FromDate Date
	ToDate   Date
}

func (p *QuoteListParams) encode(q url.Values) error {
	return encodeDocFilters(q, p.Status, p.ClientID, p.FromDate, p.ToDate)
}

// List iterates over every quote matching p (nil for all), fetching pages of
// 100 lazily. Stop early with break; a failure is yielded as the last error.
// WithPrefetch(n) fetches up to n pages ahead; Collect and First gather the
// records.
func (s *QuoteService) List(ctx context.Context, p *QuoteListParams, opts ...RequestOption) iter.Seq2[*Quote, error] {
	return listAll[Quote](ctx, s.c, "/quotes", "quotes", orNew(p), opts)
}

// ListPage fetches one page of quotes matching p; Total counts all matches.
func (s *QuoteService) ListPage(ctx context.Context, p *QuoteListParams, opts ...RequestOption) (*Page[Quote], error) {
	return listPage[Quote](ctx, s.c, "/quotes", "quotes", orNew(p), opts)
}

// Get fetches one quote with its line items. An unknown id is ErrNotFound.
func (s *QuoteService) Get(ctx context.Context, id string, opts ...RequestOption) (*Quote, error) {
	return getOne[Quote](ctx, s.c, "/quotes", id, opts)
}

// PDF streams the quote as a PDF; File.Filename is "Quote-<number>.pdf". It
// never creates a share link. The caller must Close the File.
func (s *QuoteService) PDF(ctx context.Context, id string, opts ...RequestOption) (*File, error) {
	return s.c.downloadPDF(ctx, "/quotes", id, opts)
}

// QuoteCreateParams is the body of POST /quotes. Empty optional fields are
// not sent. The service numbers the quote and always creates it as draft.
type QuoteCreateParams struct {
	// ClientID is required and must belong to the business.
	ClientID string `json:"client_id"`
	// Title defaults to the first line's description, or "Quote".
	Title string `json:"title,omitempty"`
	// IssueDate defaults to today.
	IssueDate Date `json:"issue_date,omitzero"`
	// ValidUntil is the expiry date; when set, ValidDays is ignored.
	ValidUntil Date `json:"valid_until,omitzero"`
	// ValidDays counts from IssueDate; nil means not sent.
	ValidDays *int `json:"valid_days,omitempty"`
	// Currency defaults to AUD.
	Currency string `json:"currency,omitempty"`
	// Notes are private notes.
	Notes            string `json:"notes,omitempty"`
	DefaultAccountID string `json:"default_account_id,omitempty"`
	DefaultTaxCodeID string `json:"default_tax_code_id,omitempty"`
	// LineItems are required: at least one.
	LineItems []LineItemParams `json:"line_items"`
	// Extra holds body members the SDK does not model, sent after the
	// typed fields in name order (decimal.Decimal values as exact numbers,
	// at any depth). A name a typed field also sends is a *ParamError; one
	// whose typed field is empty (so not sent) may be used.
	Extra map[string]any `json:",embed"`
}

// MarshalJSON encodes the request as the Client sends it (see Extra).
func (p QuoteCreateParams) MarshalJSON() ([]byte, error) {
	type plain QuoteCreateParams
	return encodeParams(plain(p))
}

func (p *QuoteCreateParams) validate() error {
	if p == nil {
		return paramErr("params", "Quotes.Create needs a *QuoteCreateParams with ClientID and at least one of LineItems, got nil")
	}
	if err := requireString("client_id", p.ClientID); err != nil {
		return err
	}
	if p.ValidDays != nil && *p.ValidDays < 0 {
		return paramErr("valid_days", "must not be negative")
	}
	return validateLines(p.LineItems, p.DefaultAccountID, p.DefaultTaxCodeID)
}

// Create creates a draft quote and returns it as GET would. A request that
// cannot succeed (no client, no lines, a line without account or tax code)
// is a *ParamError returned before sending. Creates are never repeated
// after a 5xx or a network error (only after a 429).
func (s *QuoteService) Create(ctx context.Context, p *QuoteCreateParams, opts ...RequestOption) (*Quote, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	q := new(Quote)
	if _, err := s.c.do(ctx, &request{method: http.MethodPost, path: "/quotes", body: p, object: true, opts: opts}, q); err != nil {
		return nil, err
	}
	return q, nil
}
