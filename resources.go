package invoicing

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
)

// This file holds what the services of the resources documented only in
// outline (clients, suppliers, bills, accounts, tax codes, reports, bank
// accounts and bank transactions) share. The API documentation lists those
// endpoints but shows none of their query parameters, payloads or response
// fields, so:
//
//   - every record decodes leniently and keeps in Extra every member its
//     typed fields do not hold, whatever the SDK's typed fields assume;
//   - every params type has an Extra field for query parameters (url.Values)
//     or body members (map[string]any) the SDK does not know;
//   - the SDK checks only what cannot possibly work (a malformed id, a page
//     size over 100, a date range ending before it starts, Extra clashing
//     with a typed field): requirements the documentation does not state
//     are left to the service to enforce, so a wrong assumption never
//     blocks a request.

// createOne POSTs p to path and decodes the response into a new T; method
// names the SDK method for the error of a nil p. Creates are never repeated
// after a 5xx or a network error.
func createOne[T, P any](ctx context.Context, c *Client, method, path string, p *P, opts []RequestOption) (*T, error) {
	if p == nil {
		return nil, paramErr("params", fmt.Sprintf("%s needs a *%s (an empty one is allowed), got nil", method, reflect.TypeFor[P]().Name()))
	}
	v := new(T)
	if _, err := c.do(ctx, &request{method: http.MethodPost, path: path, body: p, object: true, opts: opts}, v); err != nil {
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
