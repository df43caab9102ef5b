package invoicingtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/codec"
	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// apiError is an error answer: an HTTP status and the {detail} text.
type apiError struct {
	status int
	detail string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.status, e.detail) }

func badRequest(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func notFound(what string) *apiError {
	return &apiError{http.StatusNotFound, what + " not found"}
}

func conflict(format string, args ...any) *apiError {
	return &apiError{http.StatusConflict, fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *apiError {
	return &apiError{http.StatusUnprocessableEntity, fmt.Sprintf(format, args...)}
}

// maxBodyBytes caps request bodies.
const maxBodyBytes = 1 << 20

// decodeBody reads a JSON object from the request body into v. A body that
// is empty, not JSON, not an object, or whose fields have the wrong JSON
// types gives 400; rule violations are checked later and give 422.
//
// It decodes with jsonopt.Decode, whose rules are those a JSON service
// plausibly has, and those the fake had with encoding/json (v1) unless
// noted:
//   - names match exactly: "Client_ID" is not client_id (v1 matched names
//     regardless of case; the service documents lower-case names);
//   - a name given twice is accepted, the last value winning;
//   - invalid UTF-8 in a string is accepted and replaced by U+FFFD;
//   - members the request type does not know are ignored;
//   - null leaves a field unset;
//   - anything after the object but spaces is a 400;
//   - a null line of a body with line items (withLines) is a 400 (decoding
//     refuses the other lines that are not objects).
func decodeBody(r *http.Request, v any) *apiError {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeJSON(raw, v)
}

// decodeOptionalBody is decodeBody for a body whose every field is
// optional: an empty body (or only white space) is taken as {}, leaving v
// as it is.
func decodeOptionalBody(r *http.Request, v any) *apiError {
	raw, err := readBody(r)
	if err != nil || len(bytes.TrimSpace(raw)) == 0 {
		return err
	}
	return decodeJSON(raw, v)
}

// readBody reads the request body, up to maxBodyBytes; a longer one is a
// 400.
func readBody(r *http.Request) ([]byte, *apiError) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, badRequest("Reading request body: %v", err)
	}
	if len(raw) > maxBodyBytes {
		return nil, badRequest("Request body is larger than %d bytes", maxBodyBytes)
	}
	return raw, nil
}

// decodeJSON decodes raw into v by the rules of decodeBody.
func decodeJSON(raw []byte, v any) *apiError {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return badRequest("Malformed JSON body: expected a JSON object")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(trimmed), jsonopt.Decode)
	if err := json.UnmarshalDecode(dec, v); err != nil {
		return badRequest("Malformed JSON body: %s", decodeErrorText(err))
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return badRequest("Malformed JSON body: unexpected data after the JSON object")
	}
	if d, ok := v.(withLines); ok {
		for i, l := range d.lineItems() {
			if l == nil {
				return badRequest("Malformed JSON body: line_items[%d] must be an object", i)
			}
		}
	}
	return nil
}

// decodeErrorText describes a decoding error for a 400's detail: the field
// (line_items[0].quantity) and what is wrong with it, without the Go types
// the error names.
func decodeErrorText(err error) string {
	var semErr *json.SemanticError
	if !errors.As(err, &semErr) {
		var synErr *jsontext.SyntacticError
		if errors.As(err, &synErr) {
			return synErr.Err.Error()
		}
		return err.Error()
	}
	field := codec.PointerPath(semErr.JSONPointer)
	switch {
	case field == "":
		return err.Error()
	case semErr.Err != nil && semErr.JSONKind == 0:
		return field + ": " + semErr.Err.Error() // from an UnmarshalJSONFrom method
	case semErr.GoType != nil && indirect(semErr.GoType).Kind() == reflect.Struct:
		return field + " must be an object"
	}
	return "field " + field + " has the wrong type"
}

// indirect is t, or the type t points to.
func indirect(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// Pagination bounds of API.md section 4.1.
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// pageParams are the page and page_size query parameters.
type pageParams struct {
	page, size int
}

// parsePage reads page (default 1, at least 1) and page_size (default 50,
// 1 to 100). Anything else is a 400.
func parsePage(q url.Values) (pageParams, *apiError) {
	p := pageParams{page: 1, size: defaultPageSize}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return p, badRequest("page must be an integer of at least 1")
		}
		p.page = n
	}
	if v := q.Get("page_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			return p, badRequest("page_size must be an integer from 1 to %d", maxPageSize)
		}
		p.size = n
	}
	return p, nil
}

// bounds returns the indexes [lo, hi) of page p within total records; a
// page past the end (however large its number) gives lo == hi == total.
func (p pageParams) bounds(total int) (lo, hi int) {
	if p.page-1 > total/p.size {
		return total, total
	}
	lo = min((p.page-1)*p.size, total)
	return lo, min(lo+p.size, total)
}

// Dates are civil dates held as time.Time at midnight UTC.

func dateOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func parseDate(s string) (time.Time, error) {
	return time.Parse(time.DateOnly, s)
}

func formatDate(t time.Time) string { return t.Format(time.DateOnly) }

// formatTime writes a datetime as RFC 3339 in UTC with a trailing Z.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// dateQuery reads an optional YYYY-MM-DD query parameter; a malformed one is
// a 400.
func dateQuery(q url.Values, name string) (time.Time, bool, *apiError) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, false, nil
	}
	d, err := parseDate(v)
	if err != nil {
		return time.Time{}, false, badRequest("%s must be a date in YYYY-MM-DD form", name)
	}
	return d, true, nil
}

// dateRange is the from_date/to_date filter on a document's issue date.
type dateRange struct {
	from, to       time.Time
	hasFrom, hasTo bool
}

func parseDateRange(q url.Values) (dateRange, *apiError) {
	var r dateRange
	var err *apiError
	if r.from, r.hasFrom, err = dateQuery(q, "from_date"); err != nil {
		return r, err
	}
	if r.to, r.hasTo, err = dateQuery(q, "to_date"); err != nil {
		return r, err
	}
	if r.hasFrom && r.hasTo && r.to.Before(r.from) {
		return r, badRequest("to_date must not be before from_date")
	}
	return r, nil
}

// contains reports whether d is inside the range (both ends inclusive).
func (r dateRange) contains(d time.Time) bool {
	return !(r.hasFrom && d.Before(r.from)) && !(r.hasTo && d.After(r.to))
}

// oneOf reads an optional enumerated query parameter; a value outside
// allowed is a 400.
func oneOf[S ~string](q url.Values, name string, allowed ...S) (S, *apiError) {
	v := S(q.Get(name))
	if v == "" || slices.Contains(allowed, v) {
		return v, nil
	}
	return "", badRequest("%s must be one of: %s", name, joinComma(allowed))
}

func joinComma[S ~string](values []S) string {
	var b strings.Builder
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(v))
	}
	return b.String()
}

// getHandler serves GET /<things>/{id}: 200 with the view of the record in
// tbl under the path's id, or 404 "<what> not found".
func getHandler[R, V any](s *Server, tbl *table[R], what string, view func(*R) V) http.HandlerFunc {
	return recordHandler(s, tbl, what, view, func(w http.ResponseWriter, v V) { writeJSON(w, http.StatusOK, v) })
}

// recordHandler serves a GET of the record in tbl under the path's id: show
// makes the answer from the record under s.mu, and write sends it after s.mu
// is released. A missing record is a 404 "<what> not found".
func recordHandler[R, A any](s *Server, tbl *table[R], what string, show func(*R) A, write func(http.ResponseWriter, A)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		rec := tbl.get(r.PathValue("id"))
		var answer A
		if rec != nil {
			answer = show(rec)
		}
		s.mu.Unlock()
		if rec == nil {
			writeError(w, notFound(what))
			return
		}
		write(w, answer)
	}
}

// createHandler serves POST /<things>: it decodes the body into a Req, then
// under s.mu insert applies the rules and stores the record. The answer is
// 201 with the record's view, and the event that created builds fires (none
// when created is nil). When existing (nil: never) finds the record the
// request asks for already stored, the answer is 200 with it, and nothing is
// stored or fires. An error is the answer instead, and nothing fires.
func createHandler[Req, R, V any](s *Server, existing func(*Req) *R, insert func(*Req) (*R, *apiError), view func(*R) V, created func(*R) event) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := decodeBody(r, &req); err != nil {
			writeError(w, err)
			return
		}
		var (
			rec    *R
			err    *apiError
			status = http.StatusOK
			events []event
			v      V
		)
		s.mu.Lock()
		if existing != nil {
			rec = existing(&req)
		}
		if rec == nil {
			status = http.StatusCreated
			rec, err = insert(&req)
			if err == nil && created != nil {
				events = []event{created(rec)}
			}
		}
		if err == nil {
			v = view(rec)
		}
		s.mu.Unlock()
		if err != nil {
			writeError(w, err)
			return
		}
		s.publish(events...)
		writeJSON(w, status, v)
	}
}

// listHandler serves GET /<things>: page p of the records of tbl, under
// key, shown with view. After page and page_size, filter (nil: none) reads
// the endpoint's filters from the query and returns which records to keep
// (nil: all of them); a malformed parameter is a 400.
func listHandler[R, V any](s *Server, key string, tbl *table[R], filter func(url.Values) (func(*R) bool, *apiError), view func(*R) V) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		p, err := parsePage(q)
		var keep func(*R) bool
		if err == nil && filter != nil {
			keep, err = filter(q)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		serveList(s, w, p, key, tbl, keep, view)
	}
}

// serveList serves a list endpoint: 200 with page p, under key, of the
// records of tbl that keep accepts (all of them, without looking at each,
// when keep is nil), in insertion order. Only the page's records are shown
// under s.mu; the JSON encoding happens after it is released, so that
// concurrent list requests do not wait for each other's encoding.
func serveList[R, V any](s *Server, w http.ResponseWriter, p pageParams, key string, tbl *table[R], keep func(*R) bool, view func(*R) V) {
	s.mu.Lock()
	matched := tbl.all()
	if keep != nil {
		matched = nil
		for _, rec := range tbl.all() {
			if keep(rec) {
				matched = append(matched, rec)
			}
		}
	}
	lo, hi := p.bounds(len(matched))
	views := make([]V, 0, hi-lo)
	for _, rec := range matched[lo:hi] {
		views = append(views, view(rec))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, listPage[V]{key: key, records: views, total: len(matched), page: p, hasMore: hi < len(matched)})
}

// docQuery is the filter of GET /invoices and GET /quotes: status, client_id,
// and from_date and to_date on issue_date (both inclusive).
type docQuery[S ~string] struct {
	status   S
	clientID string
	dates    dateRange
}

// parseDocQuery reads status (one of statuses), from_date, to_date and
// client_id. A malformed one is a 400.
func parseDocQuery[S ~string](q url.Values, statuses []S) (docQuery[S], *apiError) {
	var f docQuery[S]
	var err *apiError
	if f.status, err = oneOf(q, "status", statuses...); err != nil {
		return f, err
	}
	if f.dates, err = parseDateRange(q); err != nil {
		return f, err
	}
	f.clientID = q.Get("client_id")
	return f, nil
}

// filters reports whether the query filters the documents at all.
func (f docQuery[S]) filters() bool { return f != docQuery[S]{} }

// keep reports whether a document with the status, client and issue date
// passes the filter.
func (f docQuery[S]) keep(status S, clientID string, issueDate time.Time) bool {
	return (f.status == "" || status == f.status) &&
		(f.clientID == "" || clientID == f.clientID) &&
		f.dates.contains(issueDate)
}
