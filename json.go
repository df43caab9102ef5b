package invoicing

//go:generate go run ./internal/cmd/recordgen

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// ErrFieldMissing is returned (wrapped) by Extra.Get when the object has no
// member of the requested name.
var ErrFieldMissing = errors.New("invoicing: field not present in the JSON object")

// Extra holds the members of a JSON object that a record has no typed field
// for, by name, each exactly as the service sent it. Every record has one,
// in its field Extra: Invoice, Item, Quote and their lines, the records the
// service documents only in outline (Contact, Bill, Account, ...), and the
// webhook events. When the service adds a field, it is there at once:
//
//	var po string
//	if err := inv.Extra.Get("purchase_order", &po); err == nil { ... }
//
// A record marshals back (with encoding/json or encoding/json/v2) to every
// member it was decoded from, these included, so storing a record as JSON
// loses nothing. Extra is nil when there were no such members; names match
// exactly (case-sensitively). For a record documented only in outline, it
// also holds each member whose value did not fit its typed field (see that
// record's MismatchedFields). A member of Extra named like a typed field is
// written in the field's place.
//
//codec:extra
type Extra map[string]jsontext.Value

// Has reports whether the object had a member named name that no typed field
// holds, even one whose value is null.
func (e Extra) Has(name string) bool {
	_, ok := e[name]
	return ok
}

// Get decodes the member named name into dst as encoding/json does (money
// decodes exactly into a decimal.Decimal, from a JSON number or a numeric
// string). It returns an error wrapping ErrFieldMissing when there is no
// such member, and the decoding error when the value does not fit dst. A
// null value leaves dst unchanged.
func (e Extra) Get(name string, dst any) error {
	v, ok := e[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrFieldMissing, name)
	}
	if err := json.Unmarshal(v, dst, codec.User); err != nil {
		return fmt.Errorf("invoicing: decoding field %q: %w", name, err)
	}
	return nil
}

// Decode decodes the members, as one JSON object, into dst as encoding/json
// does: typically a struct of your own declaring the fields the SDK does not
// type. With no members it leaves dst unchanged and returns nil.
func (e Extra) Decode(dst any) error {
	if len(e) == 0 {
		return nil
	}
	b, err := json.Marshal(map[string]jsontext.Value(e), codec.User)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst, codec.User)
}

// Names returns the members' names, sorted.
func (e Extra) Names() []string { return slices.Sorted(maps.Keys(e)) }

// marshalParams is the MarshalJSON of every params type (generated): a
// member it cannot send (an Extra member clashing with a field, say) is a
// *ParamError naming it.
func marshalParams(encode func(*codec.Encoder)) ([]byte, error) {
	b, err := codec.Marshal(encode)
	var fe *codec.FieldError
	if errors.As(err, &fe) {
		return nil, paramErr(fe.Path, fe.Reason)
	}
	return b, err
}
