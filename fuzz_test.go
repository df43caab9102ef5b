package invoicing

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Fuzz targets for every parser of bytes that come from the network:
// error bodies, Retry-After, Content-Disposition, dates and list pages.

func FuzzParseDetail(f *testing.F) {
	for _, s := range []string{
		`{"detail": "Item code already exists"}`,
		`{"detail": [{"loc": ["body", "line_items", 0, "unit_price"], "msg": "field required", "type": "value_error.missing"}]}`,
		`{"detail": {"a": 1}}`, `{"detail": null}`, `<html>502</html>`, ``, `{"detail": [1, "x", null]}`,
		`{"detail": [{"loc": null, "msg": 3}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		detail, problems := parseDetail(body)
		if problems != nil && detail == "" && len(problems) > 0 {
			for _, p := range problems {
				if p.Msg != "" || p.Field() != "" {
					t.Fatalf("problems %v but empty detail", problems)
				}
			}
		}
		e := newError("GET", "/x", &http.Response{StatusCode: 418, Header: http.Header{}}, body, time.Now())
		if e.Detail == "" || !strings.Contains(e.Error(), "418") {
			t.Fatalf("useless error %q", e.Error())
		}
	})
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "5", "-1", "99999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "soon", " 7 ",
		"Wed, 01 Oct 2200 00:00:00 GMT"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d := retryAfter(http.Header{"Retry-After": {v}}, now)
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("Retry-After %q gave %v", v, d)
		}
	})
}

func FuzzDispositionFilename(f *testing.F) {
	for _, s := range []string{`attachment; filename="Invoice-INV-0042.pdf"`, `attachment; filename="../../x"`,
		`attachment; filename*=UTF-8''Quote-%E2%82%AC.pdf`, `inline`, `attachment; filename="a\\b"`, `;;;`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		name := dispositionFilename(v)
		if strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
			t.Fatalf("unsafe file name %q from %q", name, v)
		}
		for _, r := range name {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("control character in %q", name)
			}
		}
	})
}

func FuzzDate(f *testing.F) {
	for _, s := range []string{`"2026-11-21"`, `null`, `""`, `"2024-02-29"`, `"0000-01-01"`, `"9999-12-31"`, `"2026-1-1"`, `12`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Date
		if d.UnmarshalJSON(b) != nil {
			return
		}
		out, err := d.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back Date
		if err := back.UnmarshalJSON(out); err != nil || back != d {
			t.Fatalf("%s -> %s -> %v (%v)", b, out, back, err)
		}
	})
}

func FuzzInvoicePage(f *testing.F) {
	f.Add([]byte(`{"invoices": [{"id": "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f", "total": 1.5, "issue_date": "2026-11-01",
		"line_items": [{"quantity": 2, "account_id": null}], "updated_at": null}], "total": 1, "page": 1, "page_size": 100, "has_more": false}`))
	f.Add([]byte(`{"items": [{"amount_due": "12.30"}], "has_more": true}`))
	f.Add([]byte(`{"invoices": null, "items": []}`))
	f.Add([]byte(`{"invoices": [], "meta": {"a": [1, "x"]}, "items": null}`))
	f.Add([]byte(`{"invoices": [], "total": 1`))
	f.Fuzz(func(t *testing.T, b []byte) {
		env := listEnvelope[Invoice]{key: "invoices", limit: MaxPageSize}
		err := decodeBody(b, &env) // as the pipeline calls it, on unchecked bytes
		if err == nil && !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		if err != nil {
			return
		}
		p := &env.page
		if len(p.Items) > MaxPageSize {
			t.Fatalf("decoded %d records, over the limit", len(p.Items))
		}
		for i := range p.Items {
			inv := &p.Items[i]
			out, err := json.Marshal(inv)
			if err != nil {
				t.Fatalf("decoded invoice does not re-encode: %v", err)
			}
			var back Invoice
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("re-encoded invoice %s does not decode: %v", out, err)
			}
			again, err := json.Marshal(&back)
			if err != nil || string(again) != string(out) {
				t.Fatalf("invoice does not round-trip:\n%s\n%s (%v)", out, again, err)
			}
		}
	})
}
