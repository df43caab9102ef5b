package invoicing

import "github.com/invoicing-api/invoicing-go/internal/codec"

// DecodePage decodes the list response b, the records under key, as List
// decodes a page.
func DecodePage[T any, P record[T]](b []byte, key string) (*Page[T], error) {
	pg := new(Page[T])
	err := codec.Decode(b, true, func(d *codec.Decoder) error { return decodePage[T, P](d, key, MaxPageSize, pg) })
	return pg, err
}
