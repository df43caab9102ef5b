package invoicing_test

// Fuzz targets for every parser of bytes that come from the network: list
// pages and single records of every type, error bodies, Retry-After,
// Content-Disposition, dates. Each runs clean with
//
//	go test -run '^$' -fuzz '^FuzzPage$' -fuzztime 20000x .
//
// Seeds: the fixtures of testdata/, the corpus of testdata/fuzz/<target>,
// and the inputs listed below (crashers and odd shapes found before).

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

// fuzzSeed adds to f's corpus the JSON fixtures of testdata/ and, for those
// that hold arrays of records (an array, or a list page's arrays), each
// record; then the seeds.
func fuzzSeed(f *testing.F, seeds []string) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(f, err)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(b)
		var arrays []json.RawMessage
		var page map[string]json.RawMessage
		if json.Unmarshal(b, &page) == nil {
			for _, v := range page {
				arrays = append(arrays, v)
			}
		} else {
			arrays = append(arrays, b)
		}
		for _, a := range arrays {
			var recs []json.RawMessage
			if json.Unmarshal(a, &recs) == nil {
				for _, r := range recs {
					f.Add([]byte(r))
				}
			}
		}
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
}

// fuzzRecordSeeds are odd shapes for a record (from the old
// FuzzOutlineRecords and FuzzDecodeMatchesV1): names given twice or
// differing in case, invalid UTF-8, money as strings, nulls, wrong kinds.
var fuzzRecordSeeds = []string{
	` {"ID": 7, "Line_Items": [null, {}, 1], "line_items": {"a": 1}, "LINES": [{"DEBIT": "x"}], "totals": "t"} `,
	`{"id": "a", "id": 7, "\u0069d": "b", "iſsue_date": "2026-01-02", "total": null}`,
	`{"lines": [{"account_type": 3}, [], null], "report": null, "as_at": "", "totals": null}`,
	`{"line_items":[null,{}],"totals":"x","lines":[]}`, `{"a\u0000":1,"a":2,"a":3}`,
	`null`, `[]`, `"x"`, `{`, `{"a":}`, `{} {}`,
	`{"id": "a", "id": "b", "total": 1.50, "total": "2.500", "line_items": [{"quantity": 1e3}, null]}`,
	"{\"invoice_number\": \"\\u0049NV-\\ud83d\\ude00\", \"notes\": \"caf\\u00e9 \xff\xfe\", \"client_name\": \"bad \\ud800 half\"}",
	`{"status": "paid", "status": "p\u0061id", "issue_date": null, "due_date": "", "updated_at": null}`,
	`{"subtotal": -0.00, "tax_total": 123456789012345678901234567890.5, "amount_due": "  1", "amount_paid": "-0"}`,
	`{"ID": "case", "Total": 1}`, `{"ſtatus": "draft"}`, `{}`, `{"line_items": []}`,
	`{"is_taxable": true, "is_active": false, "unit_price": "10", "item_type": "SERVICE"}`,
	`{"totals": null, "lines": [{"debit": 1}, null]}`, `{"totals": [1, "x"], "as_at": "2026-02-29"}`,
	`{"created_at": "2026-01-02T03:04:05.000+10:00", "valid_until": "2024-02-29"}`,
	`{"created_at": "0000-01-01T0:00:00Z"}`, `{"0":{"":{"":0,"":0}}}`, "{\"\xff\":true}",
	`{"is_active": null, "rate": "12.50", "balance": 1E2, "date": "2026-13-01", "amount": -0.000}`,
	`{"account_id": null, "tax_code_id": 5, "quantity": "1", "item_id": null}`,
}

// fuzzPageSeeds are list pages of odd shapes (from the old FuzzInvoicePage).
var fuzzPageSeeds = []string{
	`{"invoices": [{"id": "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f", "total": 1.5, "issue_date": "2026-11-01",
		"line_items": [{"quantity": 2, "account_id": null}], "updated_at": null}], "total": 1, "page": 1, "page_size": 100, "has_more": false}`,
	`{"items": [{"amount_due": "12.30"}], "has_more": true}`,
	`{"invoices": null, "items": []}`,
	`{"invoices": [], "meta": {"a": [1, "x"]}, "items": null}`,
	`{"invoices": [], "total": 1`,
	`{"items": [{}, {"id": 1}, null], "total": "3", "page": 1.0, "page_size": -1, "has_more": "no"}`,
	`{"items": [[], "x", 1]}`, `[]`, `null`, `{"items": {}}`,
}

// FuzzPage decodes any bytes as a page of each listable record type, as
// List and ListPage decode a response: never a panic; a page only from a
// JSON object, never from null (duplicate names and invalid UTF-8 allowed,
// as everywhere);
// never more records than the page size; and every record it yields obeys
// the record rules of FuzzRecord.
func FuzzPage(f *testing.F) {
	fuzzSeed(f, fuzzPageSeeds)
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzPage(t, b, invoicing.DecodePage[invoicing.Invoice], "invoices")
		fuzzPage(t, b, invoicing.DecodePage[invoicing.Item], "items")
		fuzzPage(t, b, invoicing.DecodePage[invoicing.Quote], "quotes")
		fuzzPage(t, b, invoicing.DecodePage[invoicing.Contact], "clients")
		fuzzPage(t, b, invoicing.DecodePage[invoicing.Contact], "suppliers")
		fuzzPage(t, b, invoicing.DecodePage[invoicing.Bill], "bills")
		fuzzPage(t, b, invoicing.DecodePage[invoicing.Account], "accounts")
		fuzzPage(t, b, invoicing.DecodePage[invoicing.TaxCode], "tax_codes")
		fuzzPage(t, b, invoicing.DecodePage[invoicing.BankAccount], "bank_accounts")
		fuzzPage(t, b, invoicing.DecodePage[invoicing.BankTransaction], "bank_transactions")
	})
}

func fuzzPage[T any, P interface {
	*T
	json.Unmarshaler
}](t *testing.T, b []byte, decode func([]byte, string) (*invoicing.Page[T], error), key string) {
	pg, err := decode(b, key)
	if err != nil {
		return
	}
	// Only an object is a page: null is an error, not an empty page.
	require.True(t, fuzzValid(b) && bytes.TrimSpace(b)[0] == '{', "a page from something else than a JSON object: %q", b)
	require.LessOrEqual(t, len(pg.Items), invoicing.MaxPageSize, "more records than a page holds")
	for i := range pg.Items {
		fuzzRoundTrip[T, P](t, &pg.Items[i])
	}
}

// FuzzRecord decodes any bytes into every record type through its
// UnmarshalJSON. Decoding never panics. A record that decodes marshals
// (with encoding/json) to JSON that decodes again to a record marshalling
// to the same bytes, an equal JSON value; a record decoded from an object
// marshals to that object's members (the last of a name given twice).
// Outline records (lenient) decode from every JSON object, and Has finds
// every member; every record type fails on JSON that is not an object or
// null.
func FuzzRecord(f *testing.F) {
	fuzzSeed(f, fuzzRecordSeeds)
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzRecord[invoicing.Invoice](t, b, false)
		fuzzRecord[invoicing.InvoiceLineItem](t, b, false)
		fuzzRecord[invoicing.Item](t, b, false)
		fuzzRecord[invoicing.Quote](t, b, false)
		fuzzRecord[invoicing.QuoteLineItem](t, b, false)
		fuzzRecord[invoicing.Contact](t, b, true)
		fuzzRecord[invoicing.Bill](t, b, true)
		fuzzRecord[invoicing.BillLineItem](t, b, true)
		fuzzRecord[invoicing.Account](t, b, true)
		fuzzRecord[invoicing.TaxCode](t, b, true)
		fuzzRecord[invoicing.Report](t, b, true)
		fuzzRecord[invoicing.ReportLine](t, b, true)
		fuzzRecord[invoicing.BankAccount](t, b, true)
		fuzzRecord[invoicing.BankTransaction](t, b, true)
	})
}

func fuzzRecord[T any, P interface {
	*T
	json.Unmarshaler
}](t *testing.T, b []byte, lenient bool) {
	v := P(new(T))
	err := v.UnmarshalJSON(b)
	valid := fuzzValid(b)
	trimmed := bytes.TrimSpace(b)
	object := valid && trimmed[0] == '{'
	switch {
	case lenient && object:
		require.NoError(t, err, "an outline record decodes from every JSON object: %q", b)
	case err == nil:
		require.True(t, object || valid && string(trimmed) == "null", "%T from something else than an object or null: %q", v, b)
	}
	if err != nil || !object {
		return
	}
	out := fuzzRoundTrip[T, P](t, v)
	// What it was decoded from: the same members, the same values.
	require.True(t, fuzzSameJSON(b, out), "%T does not encode back what it was decoded from:\n in: %q\nout: %s", v, b, out)
	if h, ok := any(v).(interface{ Has(string) bool }); ok {
		var members map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &members))
		for name := range members {
			require.True(t, h.Has(name), "%T: member %q is kept", v, name)
		}
	}
	fuzzReaders(v)
}

// fuzzRoundTrip checks that a decoded record v marshals to JSON that
// decodes again, and that the second record marshals to the same bytes, and
// returns them.
func fuzzRoundTrip[T any, P interface {
	*T
	json.Unmarshaler
}](t *testing.T, v P) []byte {
	out, err := json.Marshal(v)
	require.NoError(t, err, "%T does not encode", v)
	again := P(new(T))
	require.NoError(t, again.UnmarshalJSON(out), "%T's own JSON does not decode: %s", v, out)
	out2, err := json.Marshal(again)
	require.NoError(t, err)
	require.True(t, fuzzSameJSON(out, out2), "%T: decode(marshal(x)) is another JSON value:\n%s\n%s", v, out, out2)
	require.Equal(t, string(out), string(out2), "%T: marshal is not stable", v)
	return out
}

// fuzzReaders reads a decoded record's Extra (and a report's totals) as a
// caller would: errors are fine, panics are not.
func fuzzReaders(v any) {
	e := reflect.ValueOf(v).Elem().FieldByName("Extra").Interface().(invoicing.Extra)
	for _, name := range e.Names() {
		var anything any
		_ = e.Get(name, &anything)
	}
	var m map[string]any
	_ = e.Decode(&m)
	if r, ok := v.(*invoicing.Report); ok {
		for _, name := range []string{"debit", "credit", "revenue", ""} {
			_, _ = r.Totals.Amount(name)
		}
	}
}

// fuzzValid reports whether b is one JSON value as the SDK reads a
// response: names given twice and invalid UTF-8 in strings allowed.
func fuzzValid(b []byte) bool {
	return jsontext.Value(b).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
}

// fuzzSameJSON reports whether a and b hold the same JSON value: objects
// with the same members (the last of a name given twice), numbers with the
// same text, strings equal once decoded (invalid UTF-8 as U+FFFD).
func fuzzSameJSON(a, b []byte) bool {
	decode := func(b []byte) (any, bool) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	va, okA := decode(a)
	vb, okB := decode(b)
	return okA && okB && reflect.DeepEqual(va, vb)
}

// fuzzResponder is the one response of the fuzz targets below, set per
// input: status, body and header pairs.
type fuzzResponder struct {
	status int
	body   []byte
	header []string
}

// fuzzClient returns a Client whose every request gets r's response, with
// no retries and no waits: a 429 or 5xx comes back at once, and a pause
// after a 429 ends as it starts.
func fuzzClient(t *testing.T, r *fuzzResponder) *invoicing.Client {
	c, _ := newMock(t, func(w http.ResponseWriter, _ *http.Request) {
		reply(w, r.status, string(r.body), r.header...)
	}, invoicing.WithMaxRetries(0), invoicing.WithRetryWait(0, 0))
	return c
}

// fuzzErrorSeeds are error bodies: the documented {detail}, a validation
// list, other shapes, a proxy's page (from the old FuzzParseDetail).
var fuzzErrorSeeds = []string{
	`{"detail": "Item code already exists"}`,
	`{"detail": [{"loc": ["body", "line_items", 0, "unit_price"], "msg": "field required", "type": "value_error.missing"}]}`,
	`{"detail": {"a": 1}}`, `{"detail": null}`, `<html>502</html>`, ``, `{"detail": [1, "x", null]}`,
	`{"detail": [{"loc": null, "msg": 3}]}`, `{"detail": ""}`, `{"detail": []}`, `{"detail": [{"msg": ""}]}`,
	`{"detail": "a", "detail": ["b"]}`, `  {"detail": "\u001b[31mred\r\nforged log line"}`, `{"detail": 1e999}`,
}

// FuzzErrorBody answers a call with any bytes as the body of any 4xx
// status: never a panic; an *Error with the status, a non-empty Detail, the
// body kept (up to 64 KiB), and an Error() that names the status and
// cannot forge a log line.
func FuzzErrorBody(f *testing.F) {
	for _, s := range fuzzErrorSeeds {
		f.Add(400, []byte(s))
		f.Add(422, []byte(s))
	}
	for _, name := range []string{"error_422_array.json", "resources_error_422.json", "error_502.html", "resources_error_500.html"} {
		f.Add(422, []byte(fixture(f, name)))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		status = 400 + (status%100+100)%100
		r := &fuzzResponder{status: status, body: body}
		_, err := fuzzClient(t, r).Invoices.Get(t.Context(), "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f")
		e := apiError(t, err)
		require.Equal(t, status, e.StatusCode)
		require.NotEmpty(t, e.Detail, "status %d, body %q", status, body)
		require.Equal(t, string(body[:min(len(body), 64<<10)]), string(e.Body))
		msg := e.Error()
		require.Contains(t, msg, strconv.Itoa(status))
		require.NotContains(t, msg, "\n", "an error message is one line")
		require.NotContains(t, msg, "\r")
		for _, p := range e.Problems {
			require.Contains(t, e.Detail, p.Msg)
		}
	})
}

// FuzzRetryAfter answers a call with a 429 carrying any Retry-After value:
// Error.RetryAfter is never negative, never more than a year, and is the
// number of seconds asked for when the value is one (RFC 9110
// delay-seconds), capped.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "5", "-1", "99999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "soon", " 7 ",
		"Wed, 01 Oct 2200 00:00:00 GMT", "+3", "1.5", "", "\t9\t", "9223372036", "31536001", "Sun, 06 Nov 1994 08:49:37 GMT"} {
		f.Add(s)
	}
	const maxWait = 365 * 24 * time.Hour // a year: the SDK's cap on what a Retry-After can ask for
	f.Fuzz(func(t *testing.T, v string) {
		r := &fuzzResponder{status: http.StatusTooManyRequests, body: []byte(`{"detail": "Rate limit exceeded"}`), header: []string{"Retry-After", v}}
		_, err := fuzzClient(t, r).Invoices.Get(t.Context(), "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f")
		e := apiError(t, err)
		require.ErrorIs(t, err, invoicing.ErrRateLimited)
		require.GreaterOrEqual(t, e.RetryAfter, time.Duration(0), "Retry-After %q", v)
		require.LessOrEqual(t, e.RetryAfter, maxWait, "Retry-After %q", v)
		if digits := strings.TrimSpace(v); digits != "" && strings.Trim(digits, "0123456789") == "" {
			want := maxWait
			if n, err := strconv.ParseInt(digits, 10, 64); err == nil && n < int64(maxWait/time.Second) {
				want = time.Duration(n) * time.Second
			}
			require.Equal(t, want, e.RetryAfter, "Retry-After %q", v)
		}
	})
}

// FuzzDispositionFilename answers a PDF download with any
// Content-Disposition: File.Filename is safe to create (no directory part,
// no control or bidi characters, valid UTF-8, not "." or "..", at most 255
// bytes), and is the name the header gave when that one was already safe.
func FuzzDispositionFilename(f *testing.F) {
	for _, s := range []string{`attachment; filename="Invoice-INV-0042.pdf"`, `attachment; filename="../../x"`,
		`attachment; filename*=UTF-8''Quote-%E2%82%AC.pdf`, `inline`, `attachment; filename="a\\b"`, `;;;`,
		`attachment; filename=".."`, `attachment; filename="fdp.exe` + "\u202e" + `.pdf"`, `attachment; filename*=UTF-8''%C2%85x%E2%81%A6.pdf`,
		`attachment; filename="` + strings.Repeat("é", 200) + `.pdf"`, `attachment; filename*=UTF-8''%FF%FE.pdf`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := &fuzzResponder{status: http.StatusOK, body: []byte("%PDF-1.4\n"), header: []string{"Content-Type", "application/pdf", "Content-Disposition", v}}
		file, err := fuzzClient(t, r).Invoices.PDF(t.Context(), "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f")
		require.NoError(t, err)
		require.NoError(t, file.Close())
		name := file.Filename
		require.LessOrEqual(t, len(name), 255, "%q", name)
		require.True(t, utf8.ValidString(name), "%q", name)
		require.NotContains(t, []string{".", ".."}, name)
		for _, c := range name {
			switch {
			case c == '/' || c == '\\',
				c < 0x20 || c >= 0x7f && c <= 0x9f,
				c >= 0x202a && c <= 0x202e, c >= 0x2066 && c <= 0x2069, c == 0x200e || c == 0x200f || c == 0x061c:
				t.Fatalf("unsafe character %U in %q from %q", c, name, v)
			}
		}
		if _, params, err := mime.ParseMediaType(v); err == nil {
			if given := params["filename"]; len(given) <= 255 && strings.Trim(given, ".") != "" &&
				strings.Trim(given, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == "" {
				require.Equal(t, given, name, "a safe name is kept as given")
			}
		}
	})
}

// FuzzDate decodes any bytes as a Date: what decodes encodes back to JSON
// that decodes to the same Date, and a non-zero Date's text is a valid
// YYYY-MM-DD that ParseDate reads back.
func FuzzDate(f *testing.F) {
	for _, s := range []string{`"2026-11-21"`, `null`, `""`, `"2024-02-29"`, `"0000-01-01"`, `"9999-12-31"`, `"2026-1-1"`, `12`,
		`"2025-02-29"`, `"2026-11-21T00:00:00Z"`, `" 2026-11-21"`, `"+2026-11-21"`, `"２０２６-11-21"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d invoicing.Date
		if d.UnmarshalJSON(b) != nil {
			return
		}
		out, err := d.MarshalJSON()
		require.NoError(t, err)
		var back invoicing.Date
		require.NoError(t, back.UnmarshalJSON(out), "%s -> %s", b, out)
		require.Equal(t, d, back, "%s -> %s", b, out)
		if !d.IsZero() {
			p, err := invoicing.ParseDate(d.String())
			require.NoError(t, err)
			require.Equal(t, d, p)
			_, err = time.Parse(time.DateOnly, d.String())
			require.NoError(t, err, "%q", d.String())
		}
	})
}
