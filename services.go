package invoicing

import (
	"context"
	"fmt"
	"net/http"
	"reflect"

	"github.com/google/uuid"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// The helpers every service method is a line over: one for each kind of
// endpoint (get one, run a report, create), and list and listPage in
// pagination.go.
//
// The services of the resources documented only in outline (clients,
// suppliers, bills, accounts, tax codes, reports, bank accounts and bank
// transactions) check only what cannot possibly work (a malformed id, a
// page size over 100, a date range ending before it starts, Extra clashing
// with a typed field): requirements the documentation does not state are
// left to the service to enforce, so a wrong assumption never blocks a
// request.

// get fetches collection/id into a new T. An id that is not a UUID is a
// *ParamError.
func get[T any, P record[T]](ctx context.Context, c *Client, collection, id string, opts []RequestOption) (*T, error) {
	path, err := resourcePath(collection, id, "")
	if err != nil {
		return nil, err
	}
	return getQuery[T, P](ctx, c, path, nil, opts)
}

// getQuery fetches path with the query of params p into a new T.
func getQuery[T any, P record[T]](ctx context.Context, c *Client, path string, p any, opts []RequestOption) (*T, error) {
	q, _, err := query(p)
	if err != nil {
		return nil, err
	}
	cfg, err := config(opts)
	if err != nil {
		return nil, err
	}
	v := new(T)
	if _, err := c.do(ctx, &request{method: http.MethodGet, path: path, query: q}, cfg, decodeInto[T, P](v)); err != nil {
		return nil, err
	}
	return v, nil
}

// create POSTs the params p to path and decodes the response into a new T;
// it returns the response's status too. Creates are repeated after a 5xx or
// a network error only when repeatable (or WithIdempotentRetry).
func create[T any, P record[T]](ctx context.Context, c *Client, path string, p interface{ MarshalJSON() ([]byte, error) }, repeatable bool, opts []RequestOption) (*T, int, error) {
	body, err := p.MarshalJSON()
	if err != nil {
		return nil, 0, err
	}
	cfg, err := config(opts)
	if err != nil {
		return nil, 0, err
	}
	v := new(T)
	resp, err := c.do(ctx, &request{method: http.MethodPost, path: path, body: body, repeatable: repeatable}, cfg, decodeInto[T, P](v))
	if err != nil {
		return nil, 0, err
	}
	return v, resp.StatusCode, nil
}

// decodeInto returns the decoder of a response holding one record into v:
// the body must be a JSON object.
func decodeInto[T any, P record[T]](v *T) func([]byte) error {
	return func(b []byte) error {
		if err := wantJSON(b, '{'); err != nil {
			return err
		}
		return codec.Decode(b, false, P(v).decodeJSON)
	}
}

// createRequired is create for a params type the SDK checks nothing of but
// that it is not nil (an empty one is allowed): method names the SDK method
// in the error, e.g. "Clients.Create".
func createRequired[T any, P record[T]](ctx context.Context, c *Client, method, path string, p interface{ MarshalJSON() ([]byte, error) }, opts []RequestOption) (*T, error) {
	if v := reflect.ValueOf(p); v.IsNil() {
		return nil, paramErr("params", fmt.Sprintf("%s needs a *%s (an empty one is allowed), got nil", method, v.Type().Elem().Name()))
	}
	v, _, err := create[T, P](ctx, c, path, p, false, opts)
	return v, err
}

// resourcePath returns collection + "/" + id + suffix after checking that id
// is a UUID, so no id can change the path. Non-canonical UUID forms (braces,
// urn:uuid:, no hyphens) are sent in canonical form.
func resourcePath(collection, id, suffix string) (string, error) {
	if len(id) != 36 || uuid.Validate(id) != nil {
		u, err := uuid.Parse(id)
		if err != nil {
			return "", paramErr("id", fmt.Sprintf("%q is not a UUID", id))
		}
		id = u.String()
	}
	return collection + "/" + id + suffix, nil
}
