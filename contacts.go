package invoicing

import (
	"net/url"
	"time"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// ClientService reads and creates the business's clients (GET /clients,
// GET /clients/{id}, POST /clients). The service documents clients only in
// outline; see the package documentation for what that means for these
// types.
//
//gen:service path=/clients key=clients record=Contact noun=client list=ContactListParams get create=ContactCreateParams
type ClientService service

// SupplierService reads and creates the business's suppliers (GET
// /suppliers, GET /suppliers/{id}, POST /suppliers). The service documents
// suppliers only in outline; see the package documentation for what that
// means for these types.
//
//gen:service path=/suppliers key=suppliers record=Contact noun=supplier list=ContactListParams get create=ContactCreateParams
type SupplierService service

// Contact is a client or a supplier of the business; ClientService and
// SupplierService both return it. (The service's contact.created webhook
// covers both kinds, with contact_type "client" or "supplier"; the name
// Client is the SDK's API client.)
//
// The service documents clients and suppliers only in outline; see the
// package documentation for what that means for these fields. A member the
// SDK has no field for is kept in Extra: read an address, say, with
// c.Extra.Get("address", &addr). A field the service does not send is left
// zero (Has tells).
//
//codec:record lenient
//mirror:table name=clients order=1
//mirror:table name=suppliers order=2
type Contact struct {
	// ID identifies the contact, a UUID.
	ID string `json:"id"`
	// Name is the contact's name, as in the contact.created webhook.
	Name string `json:"name"`
	// Email is the contact's email address, as in the contact.created
	// webhook.
	Email string `json:"email"`
	// Phone is the contact's phone number.
	Phone string `json:"phone"`
	// CreatedAt is when the contact was created.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when the contact was last updated; nil when the service
	// sends null or nothing.
	UpdatedAt *time.Time `json:"updated_at"`
	// Extra holds the members the service sent that the SDK has no field
	// for, and those whose value did not fit their field (see
	// MismatchedFields); nil when there were none.
	Extra Extra `json:",embed"`

	meta codec.Meta
}

// ContactListParams filters GET /clients and GET /suppliers. The SDK knows
// no filters for these lists: pass any (a search by name or email, say)
// through Extra.
type ContactListParams struct {
	ListParams
	// Extra holds query parameters the SDK does not know, sent as given.
	// Setting page or page_size here is a *ParamError (use ListParams).
	Extra url.Values
}

// ContactCreateParams is the body of POST /clients and POST /suppliers.
// Empty fields are not sent. Anything else (an address, a tax number, ...)
// goes in Extra.
//
//codec:params
type ContactCreateParams struct {
	// Name is the contact's name. The SDK does not require it: a missing
	// name is the service's error to report.
	Name string `json:"name,omitempty"`
	// Email is the contact's email address.
	Email string `json:"email,omitempty"`
	// Phone is the contact's phone number.
	Phone string `json:"phone,omitempty"`
	// Extra holds body members the SDK does not model, e.g.
	// {"address": map[string]any{"city": "Sydney"}}, sent after the typed
	// fields in name order (decimal.Decimal values as exact numbers, at any
	// depth). A name a typed field also sends is a *ParamError; one whose
	// typed field is empty may be used (to send null, say).
	Extra map[string]any `json:",embed"`
}
