package invoicing

import (
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
)

// query returns the query parameters of params p (a pointer to a list or
// report params type; nil for none), the one way every call turns params
// into a query: each field tagged `query:"name"` that is set (a string
// type, a Date or an int), then the members of its Extra url.Values; and its
// embedded ListParams apart, since a list sets page itself. A parameter
// named twice (by a field and by Extra, or page and page_size in Extra) is
// a *ParamError, and so is a to_date before the from_date.
func query(p any) (url.Values, ListParams, error) {
	var lp ListParams
	v := reflect.ValueOf(p)
	if !v.IsValid() || v.IsNil() {
		return nil, lp, nil
	}
	q := url.Values{}
	v = v.Elem()
	var extra url.Values
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		switch name := f.Tag.Get("query"); {
		case f.Type == reflect.TypeFor[ListParams]():
			lp = fv.Interface().(ListParams)
		case f.Name == "Extra":
			extra = fv.Interface().(url.Values)
		case name == "":
			panic(fmt.Sprintf("invoicing: %s.%s has no query tag", v.Type(), f.Name)) // caught by the tests
		case fv.IsZero():
		case f.Type == reflect.TypeFor[Date]():
			q.Set(name, fv.Interface().(Date).String())
		case fv.Kind() == reflect.Int:
			q.Set(name, strconv.FormatInt(fv.Int(), 10))
		default:
			q.Set(name, fv.String())
		}
	}
	switch {
	case lp.Page < 0:
		return nil, lp, paramErr("page", "must be 1 or more")
	case lp.PageSize < 0 || lp.PageSize > MaxPageSize:
		return nil, lp, paramErr("page_size", "must be between 1 and 100")
	case q.Has("from_date") && q.Has("to_date") && q.Get("from_date") > q.Get("to_date"): // YYYY-MM-DD sorts as dates do
		return nil, lp, paramErr("from_date", "is after to_date")
	}
	return q, lp, mergeQuery(q, extra, "page", "page_size")
}

// mergeQuery adds the extra query parameters (a params type's Extra, or the
// WithQuery options) to q, which holds those the call sets. A name that is
// empty, reserved, or already set is a *ParamError: the SDK does not pick
// which value the caller meant. Names with no values are skipped.
func mergeQuery(q, extra url.Values, reserved ...string) error {
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		switch vs := extra[k]; {
		case k == "":
			return paramErr("Extra", "has an empty parameter name")
		case slices.Contains(reserved, k):
			return paramErr(k, "is set through ListParams")
		case q.Has(k):
			return paramErr(k, "is set both by a typed field and in Extra")
		case len(vs) > 0:
			q[k] = slices.Clone(vs)
		}
	}
	return nil
}
