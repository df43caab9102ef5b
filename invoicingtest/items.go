package invoicingtest

import (
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// itemTypes are the item types of API.md section 2.2.
var itemTypes = []invoicing.ItemType{invoicing.ItemTypeSales, invoicing.ItemTypePurchase, invoicing.ItemTypeText}

// Detail texts of the item errors, verbatim from API.md section 7.
const (
	detailItemCodeExists     = "Item code already exists"
	detailUnitPriceRequired  = "unit_price is required for SALES and PURCHASE items"
	detailItemTypeNotAllowed = "item_type must be one of: SALES, PURCHASE, TEXT"
)

// itemRequest is the body of POST /items.
type itemRequest struct {
	Name        string              `json:"name"`
	ItemCode    string              `json:"item_code"`
	Description string              `json:"description"`
	ItemType    *invoicing.ItemType `json:"item_type"`
	UnitPrice   reqDecimal          `json:"unit_price"`
	IsTaxable   *bool               `json:"is_taxable"`
	AccountID   string              `json:"account_id"`
	TaxCodeID   string              `json:"tax_code_id"`
}

// itemJSON is a catalog item as the API shows it (API.md 2.2).
type itemJSON struct {
	ID          string             `json:"id"`
	ItemCode    string             `json:"item_code"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	ItemType    invoicing.ItemType `json:"item_type"`
	UnitPrice   money              `json:"unit_price"`
	IsTaxable   bool               `json:"is_taxable"`
	AccountID   string             `json:"account_id"`
	TaxCodeID   string             `json:"tax_code_id"`
	IsActive    bool               `json:"is_active"`
	CreatedAt   datetime           `json:"created_at"`
	UpdatedAt   *datetime          `json:"updated_at"`
}

func itemView(it *item) itemJSON {
	return itemJSON{
		ID: it.ID, ItemCode: it.Code, Name: it.Name, Description: it.Description,
		ItemType: it.ItemType, UnitPrice: money(it.UnitPrice), IsTaxable: it.IsTaxable,
		AccountID: it.AccountID, TaxCodeID: it.TaxCodeID, IsActive: it.IsActive,
		CreatedAt: datetime(it.CreatedAt), UpdatedAt: (*datetime)(it.UpdatedAt),
	}
}

// itemFilter reads the filter of GET /items: item_type. An unknown type
// is a 400 with the detail of API.md.
func itemFilter(q url.Values) (func(*item) bool, *apiError) {
	typ := invoicing.ItemType(q.Get("item_type"))
	if typ != "" && !slices.Contains(itemTypes, typ) {
		return nil, badRequest("%s", detailItemTypeNotAllowed)
	}
	return func(it *item) bool { return typ == "" || it.ItemType == typ }, nil
}

// insertItem applies the rules of POST /items and stores the item: 422 for
// a missing name, an item_type outside SALES/PURCHASE/TEXT, a missing
// unit_price on a SALES or PURCHASE item, a missing or unknown account_id or
// tax_code_id; then 409 when item_code is taken (compared exactly, after
// trimming spaces). The caller holds s.mu.
func (s *Server) insertItem(req *itemRequest) (*item, *apiError) {
	name := strings.TrimSpace(req.Name)
	if name == "" {
		return nil, invalid("name is required")
	}
	typ := invoicing.ItemTypeSales
	if req.ItemType != nil {
		typ = *req.ItemType
	}
	if !slices.Contains(itemTypes, typ) {
		return nil, invalid(detailItemTypeNotAllowed)
	}
	var price decimal.Decimal
	if req.UnitPrice.set {
		price = req.UnitPrice.value
		if msg := checkDecimal("unit_price", price); msg != "" {
			return nil, invalid("%s", msg)
		}
	} else if typ != invoicing.ItemTypeText {
		return nil, invalid(detailUnitPriceRequired)
	}
	if req.AccountID == "" {
		return nil, invalid("account_id is required")
	}
	if s.data.accounts.get(req.AccountID) == nil {
		return nil, invalid("account_id %s does not match an account of the business", req.AccountID)
	}
	if req.TaxCodeID == "" {
		return nil, invalid("tax_code_id is required")
	}
	if s.data.taxCodes.get(req.TaxCodeID) == nil {
		return nil, invalid("tax_code_id %s does not match a tax code of the business", req.TaxCodeID)
	}
	code := strings.TrimSpace(req.ItemCode)
	if code != "" && s.data.items.first(func(it *item) bool { return it.Code == code }) != nil {
		return nil, conflict(detailItemCodeExists)
	}
	taxable := true
	if req.IsTaxable != nil {
		taxable = *req.IsTaxable
	}
	it := &item{
		ID: uuid.NewString(), Code: code, Name: name, Description: req.Description,
		ItemType: typ, UnitPrice: price, IsTaxable: taxable, IsActive: true,
		AccountID: req.AccountID, TaxCodeID: req.TaxCodeID, CreatedAt: s.now(),
	}
	s.data.items.add(it.ID, it)
	return it, nil
}
