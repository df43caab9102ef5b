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

// ItemService reads and creates catalog items (scopes items:read and
// items:write).
type ItemService service

// Item is a catalog item.
type Item struct {
	ID string `json:"id"`
	// ItemCode is unique within the business.
	ItemCode    string   `json:"item_code"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	ItemType    ItemType `json:"item_type"`
	// UnitPrice is the price per unit before tax (zero for TEXT items).
	UnitPrice decimal.Decimal `json:"unit_price"`
	IsTaxable bool            `json:"is_taxable"`
	// AccountID is the revenue (sales) or expense (purchase) account.
	AccountID string    `json:"account_id"`
	TaxCodeID string    `json:"tax_code_id"`
	IsActive  bool      `json:"is_active"`
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is nil when the item was never updated.
	UpdatedAt *time.Time `json:"updated_at"`
	// Extra holds the members the service sent that the SDK has no field
	// for (see Extra); nil when there were none.
	Extra Extra `json:",embed"`
}

func (v *Item) decodeFrom(st *decodeState) error {
	return st.object(func(name []byte) error {
		switch string(name) {
		case "id":
			return st.str(&v.ID)
		case "item_code":
			return st.str(&v.ItemCode)
		case "name":
			return st.str(&v.Name)
		case "description":
			return st.shared(&v.Description)
		case "item_type":
			return v.ItemType.UnmarshalJSONFrom(st.dec)
		case "unit_price":
			return st.decimal(&v.UnitPrice)
		case "is_taxable":
			return st.bool(&v.IsTaxable)
		case "account_id":
			return st.shared(&v.AccountID)
		case "tax_code_id":
			return st.shared(&v.TaxCodeID)
		case "is_active":
			return st.bool(&v.IsActive)
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
func (v *Item) UnmarshalJSONFrom(dec *jsontext.Decoder) error { return decodeRecord(dec, v) }

// UnmarshalJSON decodes the record as UnmarshalJSONFrom does (the
// encoding/json interface).
func (v *Item) UnmarshalJSON(b []byte) error { return unmarshalRecord(b, v) }

// MarshalJSONTo encodes the record as the service does, money as exact
// numbers, followed by the members in Extra (the encoding/json/v2
// interface).
func (v Item) MarshalJSONTo(enc *jsontext.Encoder) error {
	type plain Item
	return marshalRecord(enc, (*plain)(&v))
}

// MarshalJSON encodes the record as MarshalJSONTo does (the encoding/json
// interface).
func (v Item) MarshalJSON() ([]byte, error) { return marshalJSON(v) }

// ItemListParams filters GET /items. Zero fields are not sent.
type ItemListParams struct {
	ListParams
	ItemType ItemType
}

func (p *ItemListParams) encode(q url.Values) error {
	setString(q, "item_type", p.ItemType)
	return nil
}

// List iterates over every catalog item matching p (nil for all), fetching
// pages of 100 lazily. Stop early with break; a failure is yielded as the
// last error. WithPrefetch(n) fetches up to n pages ahead; Collect and First
// gather the records.
func (s *ItemService) List(ctx context.Context, p *ItemListParams, opts ...RequestOption) iter.Seq2[*Item, error] {
	return listAll[Item](ctx, s.c, "/items", "items", orNew(p), opts)
}

// ListPage fetches one page of catalog items matching p.
func (s *ItemService) ListPage(ctx context.Context, p *ItemListParams, opts ...RequestOption) (*Page[Item], error) {
	return listPage[Item](ctx, s.c, "/items", "items", orNew(p), opts)
}

// Get fetches one catalog item. An unknown id is ErrNotFound.
func (s *ItemService) Get(ctx context.Context, id string, opts ...RequestOption) (*Item, error) {
	return getOne[Item](ctx, s.c, "/items", id, opts)
}

// ItemCreateParams is the body of POST /items.
type ItemCreateParams struct {
	// Name is required.
	Name string `json:"name"`
	// ItemCode must be unique within the business; optional.
	ItemCode    string `json:"item_code,omitempty"`
	Description string `json:"description,omitempty"`
	// ItemType defaults to SALES on the service.
	ItemType ItemType `json:"item_type,omitempty"`
	// UnitPrice is required for SALES (the default) and PURCHASE items; nil
	// means not sent (for TEXT items). Use Ptr(decimal.Zero) for a free item.
	UnitPrice *decimal.Decimal `json:"unit_price,omitempty"`
	// IsTaxable defaults to true on the service; nil means not sent.
	IsTaxable *bool `json:"is_taxable,omitempty"`
	// AccountID (revenue or expense account) is required.
	AccountID string `json:"account_id"`
	// TaxCodeID is required.
	TaxCodeID string `json:"tax_code_id"`
	// Extra holds body members the SDK does not model, sent after the
	// typed fields in name order (decimal.Decimal values as exact numbers,
	// at any depth). A name a typed field also sends is a *ParamError; one
	// whose typed field is empty (so not sent) may be used.
	Extra map[string]any `json:",embed"`
}

// MarshalJSON encodes the request as the Client sends it: UnitPrice as an
// exact JSON number, unset optional fields omitted, then Extra.
func (p ItemCreateParams) MarshalJSON() ([]byte, error) {
	type plain ItemCreateParams
	return encodeParams(plain(p))
}

func (p *ItemCreateParams) validate() error {
	if p == nil {
		return paramErr("params", "Items.Create needs a *ItemCreateParams with Name, AccountID, TaxCodeID and (for SALES and PURCHASE items) UnitPrice, got nil")
	}
	if err := requireString("name", p.Name); err != nil {
		return err
	}
	if err := requireString("account_id", p.AccountID); err != nil {
		return err
	}
	if err := requireString("tax_code_id", p.TaxCodeID); err != nil {
		return err
	}
	switch p.ItemType {
	case "", ItemTypeSales, ItemTypePurchase:
		if p.UnitPrice == nil {
			return &ParamError{Field: "unit_price", Reason: "is required for SALES and PURCHASE items", kind: ErrUnitPriceRequired}
		}
	case ItemTypeText:
	default:
		return &ParamError{Field: "item_type", Reason: "must be one of: SALES, PURCHASE, TEXT", kind: ErrInvalidItemType}
	}
	return nil
}

// Create creates a catalog item. A used item code is ErrItemCodeExists (and
// ErrConflict). A SALES or PURCHASE item without UnitPrice, or an unknown
// ItemType, fails before sending with a *ParamError that also matches
// ErrUnitPriceRequired or ErrInvalidItemType, as the service's 422 would.
func (s *ItemService) Create(ctx context.Context, p *ItemCreateParams, opts ...RequestOption) (*Item, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	it := new(Item)
	if _, err := s.c.do(ctx, &request{method: http.MethodPost, path: "/items", body: p, object: true, opts: opts}, it); err != nil {
		return nil, err
	}
	return it, nil
}
