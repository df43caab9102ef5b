package invoicing

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"time"

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
}

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
// pages of 100 lazily.
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
	Name string
	// ItemCode must be unique within the business; optional.
	ItemCode    string
	Description string
	// ItemType defaults to SALES on the service.
	ItemType ItemType
	// UnitPrice is required for SALES (the default) and PURCHASE items; nil
	// means not sent (for TEXT items). Use Ptr(decimal.Zero) for a free item.
	UnitPrice *decimal.Decimal
	// IsTaxable defaults to true on the service; nil means not sent.
	IsTaxable *bool
	// AccountID (revenue or expense account) is required.
	AccountID string
	// TaxCodeID is required.
	TaxCodeID string
}

// MarshalJSON encodes the request with UnitPrice as an exact JSON number.
func (p ItemCreateParams) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name        string   `json:"name"`
		ItemCode    string   `json:"item_code,omitempty"`
		Description string   `json:"description,omitempty"`
		ItemType    ItemType `json:"item_type,omitempty"`
		UnitPrice   *number  `json:"unit_price,omitempty"`
		IsTaxable   *bool    `json:"is_taxable,omitempty"`
		AccountID   string   `json:"account_id"`
		TaxCodeID   string   `json:"tax_code_id"`
	}{p.Name, p.ItemCode, p.Description, p.ItemType, (*number)(p.UnitPrice), p.IsTaxable, p.AccountID, p.TaxCodeID})
}

func (p *ItemCreateParams) validate() error {
	if p == nil {
		return paramErr("params", "is nil")
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
