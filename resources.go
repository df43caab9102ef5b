package invoicing

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/shopspring/decimal"
)

// This file holds what the services of the resources documented only in
// outline (clients, suppliers, bills, accounts, tax codes, reports, bank
// accounts and bank transactions) share. The API documentation lists those
// endpoints but shows none of their query parameters, payloads or response
// fields, so:
//
//   - every record embeds RawObject, keeping the whole object the service
//     sent, whatever the SDK's typed fields assume;
//   - every params type has an Extra field for query parameters (url.Values)
//     or body fields (map[string]any) the SDK does not know;
//   - the SDK checks only what cannot possibly work (a malformed id, a page
//     size over 100, a date range ending before it starts, Extra clashing
//     with a typed field): requirements the documentation does not state
//     are left to the service to enforce, so a wrong assumption never
//     blocks a request.

// createOne POSTs the encoded body to path and decodes the response into a
// new T. Creates are never repeated after a 5xx or a network error.
func createOne[T any](ctx context.Context, c *Client, path string, body []byte, opts []RequestOption) (*T, error) {
	v := new(T)
	if _, err := c.do(ctx, &request{method: http.MethodPost, path: path, body: json.RawMessage(body), object: true, opts: opts}, v); err != nil {
		return nil, err
	}
	return v, nil
}

// mergeListQuery is mergeQuery for a list: page and page_size belong to
// ListParams (List sets page itself on every request), not to Extra.
func mergeListQuery(q, extra url.Values) error {
	return mergeQuery(q, extra, "page", "page_size")
}

// mergeQuery adds the Extra query parameters to q, which holds those the
// typed fields set. A parameter name that is empty, reserved, or already set
// by a typed field is a *ParamError: the SDK does not pick which value the
// caller meant. Names with no values are skipped.
func mergeQuery(q, extra url.Values, reserved ...string) error {
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		vs := extra[k]
		switch {
		case k == "":
			return paramErr("Extra", "has an empty parameter name")
		case slices.Contains(reserved, k):
			return paramErr(k, "is set through ListParams")
		case q.Has(k):
			return paramErr(k, "is set both by a typed field and in Extra")
		case len(vs) == 0:
			continue
		}
		q[k] = slices.Clone(vs)
	}
	return nil
}

// encodeBody encodes typed (a struct whose optional fields are all omitted
// when unset) and adds the Extra fields after its own, in key order. An Extra
// key that is empty or that the typed fields also send is a *ParamError; a
// key whose typed field is unset (so not sent) may be given through Extra,
// e.g. to send null or a shape the typed field cannot express. Extra values
// are encoded with encoding/json, except that a decimal.Decimal or
// *decimal.Decimal at the top level is written as an exact JSON number (nil
// as null).
func encodeBody(typed any, extra map[string]any) ([]byte, error) {
	b, err := json.Marshal(typed)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return b, nil
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(b, &sent); err != nil {
		return nil, err
	}
	out := b[:len(b)-1] // without the closing brace
	comma := len(sent) > 0
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if k == "" {
			return nil, paramErr("Extra", "has an empty field name")
		}
		if _, dup := sent[k]; dup {
			return nil, paramErr(k, "is set both by a typed field and in Extra")
		}
		v, err := encodeExtra(extra[k])
		if err != nil {
			return nil, paramErr(k, "cannot be encoded as JSON: "+err.Error())
		}
		if comma {
			out = append(out, ',')
		}
		kb, _ := json.Marshal(k) // a string always encodes
		out = append(append(append(out, kb...), ':'), v...)
		comma = true
	}
	return append(out, '}'), nil
}

func encodeExtra(v any) ([]byte, error) {
	switch d := v.(type) {
	case decimal.Decimal:
		return number(d).MarshalJSON()
	case *decimal.Decimal:
		if d == nil {
			return []byte("null"), nil
		}
		return number(*d).MarshalJSON()
	}
	return json.Marshal(v)
}
