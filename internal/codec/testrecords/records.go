// Package testrecords holds a record of every field kind the record
// generator knows, so that its tests exercise the codec (internal/codec)
// and the generated code (records_gen.go, from go generate) together.
package testrecords

// The codec reads the string option of a decimal.Decimal field (money
// written as a JSON string), which encoding/json would refuse.
//lint:file-ignore SA5008 tag options are the codec's, not encoding/json's

//go:generate go run ../../cmd/recordgen

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/shopspring/decimal"

	"github.com/invoicing-api/invoicing-go/internal/codec"
)

// Status is a string type.
type Status string

// Day is a civil date.
//
//codec:date
type Day struct {
	Year  int
	Month time.Month
	Day   int
}

// Extra holds the members no field holds.
//
//codec:extra
type Extra map[string]jsontext.Value

// Custom keeps its JSON as it is.
type Custom struct{ raw jsontext.Value }

// UnmarshalJSON keeps b.
func (c *Custom) UnmarshalJSON(b []byte) error { c.raw = jsontext.Value(b).Clone(); return nil }

// MarshalJSON writes what was kept.
func (c Custom) MarshalJSON() ([]byte, error) {
	if c.raw == nil {
		return []byte("{}"), nil
	}
	return c.raw, nil
}

// Common is inlined into Record.
type Common struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Line is a nested record.
//
//codec:record
type Line struct {
	ID     string          `json:"id"`
	Amount decimal.Decimal `json:"amount"`
	Extra  Extra           `json:",embed"`
	meta   codec.Meta
}

// Record has a field of every kind.
//
//codec:record
type Record struct {
	Common
	Name     string                    `json:"name"`
	Status   Status                    `json:"status"`
	Note     *string                   `json:"note"`
	Maybe    *Status                   `json:"maybe"`
	On       bool                      `json:"on"`
	OnPtr    *bool                     `json:"on_ptr"`
	N        int                       `json:"n"`
	NPtr     *int                      `json:"n_ptr"`
	Money    decimal.Decimal           `json:"money"`
	Wire     decimal.Decimal           `json:"wire,string"`
	MoneyPtr *decimal.Decimal          `json:"money_ptr"`
	At       time.Time                 `json:"at"`
	AtPtr    *time.Time                `json:"at_ptr"`
	Day      Day                       `json:"day"`
	Raw      jsontext.Value            `json:"raw"`
	RawMap   map[string]jsontext.Value `json:"raw_map"`
	Custom   Custom                    `json:"custom"`
	Line     Line                      `json:"line"`
	LinePtr  *Line                     `json:"line_ptr"`
	Lines    []Line                    `json:"lines"`
	Optional string                    `json:"optional,omitempty"`
	Untagged string
	Skipped  string `json:"-"`
	Extra    Extra  `json:",embed"`
	meta     codec.Meta
}

// Wide has more fields than a 64-bit mask holds.
//
//codec:record lenient
type Wide struct {
	F00, F01, F02, F03, F04, F05, F06, F07, F08, F09 string
	F10, F11, F12, F13, F14, F15, F16, F17, F18, F19 string
	F20, F21, F22, F23, F24, F25, F26, F27, F28, F29 string
	F30, F31, F32, F33, F34, F35, F36, F37, F38, F39 string
	F40, F41, F42, F43, F44, F45, F46, F47, F48, F49 string
	F50, F51, F52, F53, F54, F55, F56, F57, F58, F59 string
	F60, F61, F62, F63, F64, F65, F66, F67, F68, F69 int
	Extra                                            Extra `json:",embed"`
	meta                                             codec.Meta
}

// Params is a request body.
//
//codec:params
type Params struct {
	Name  string          `json:"name"`
	Note  string          `json:"note,omitempty"`
	Price decimal.Decimal `json:"price"`
	Lines []LineParams    `json:"lines,omitempty"`
	Extra map[string]any  `json:",embed"`
}

// LineParams is a line of Params.
//
//codec:params
type LineParams struct {
	Description string         `json:"description,omitempty"`
	Extra       map[string]any `json:",embed"`
}

// marshalParams is what the package's params marshal with.
func marshalParams(encode func(*codec.Encoder)) ([]byte, error) { return codec.Marshal(encode) }
