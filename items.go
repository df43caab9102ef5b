package invoicing

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// ItemService reads and creates catalog items (scopes items:read and
// items:write).
//
//gen:service path=/items key=items record=Item noun=catalog_item list=ItemListParams get
type ItemService service

// Item is a catalog item.
//
//codec:record
//mirror:table name=items order=5
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

	meta codec.Meta
}

// ItemListParams filters GET /items. Zero fields are not sent.
type ItemListParams struct {
	ListParams
	ItemType ItemType `query:"item_type"`
}

// ItemCreateParams is the body of POST /items.
//
//codec:params
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
	it, _, err := create[Item](ctx, s.c, "/items", p, false, opts)
	return it, err
}
