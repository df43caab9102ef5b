package main

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// moneyPaths names the money members of a record as JSON Pointers, "*"
// standing for any array index: "/total", "/line_items/*/unit_price".
type moneyPaths []string

// The money members of the records the tool writes; quantities and every
// other number are not money.
var (
	invoiceMoney = moneyPaths{"/subtotal", "/tax_total", "/total", "/amount_paid", "/amount_due",
		"/line_items/*/unit_price", "/line_items/*/amount", "/line_items/*/tax_amount"}
	quoteMoney = moneyPaths{"/subtotal", "/tax_total", "/total",
		"/line_items/*/unit_price", "/line_items/*/amount", "/line_items/*/tax_amount"}
	itemMoney = moneyPaths{"/unit_price"}
)

// has reports whether ptr names a money member.
func (m moneyPaths) has(ptr jsontext.Pointer) bool {
	for _, pattern := range m {
		if matchPointer(pattern, string(ptr)) {
			return true
		}
	}
	return false
}

// matchPointer matches a JSON Pointer against a pattern whose "*" segments
// stand for array indexes.
func matchPointer(pattern, ptr string) bool {
	want, got := strings.Split(pattern, "/"), strings.Split(ptr, "/")
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if want[i] == "*" && got[i] != "" && strings.Trim(got[i], "0123456789") == "" {
			continue
		}
		if want[i] != got[i] {
			return false
		}
	}
	return true
}

// withMoneyPlaces rewrites the JSON document b so that every money member
// that is a number has at least two decimal places (2649.9 becomes 2649.90,
// 0 becomes 0.00; 0.125 stays 0.125), as invoicingtest.FormatMoney writes
// every amount the tool shows: exactly, never rounded for display. Everything else
// is copied as it is.
func withMoneyPlaces(b []byte, money moneyPaths) ([]byte, error) {
	opts := []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
	dec := jsontext.NewDecoder(bytes.NewReader(b), opts...)
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, opts...)
	for {
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
		}
		if err != nil {
			return nil, err
		}
		if tok.Kind() == '0' && money.has(dec.StackPointer()) {
			d, err := decimal.NewFromString(tok.String())
			if err != nil {
				return nil, err
			}
			err = enc.WriteValue(jsontext.Value(invoicingtest.FormatMoney(d)))
			if err != nil {
				return nil, err
			}
			continue
		}
		if err := enc.WriteToken(tok); err != nil {
			return nil, err
		}
	}
}
