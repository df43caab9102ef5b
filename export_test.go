package invoicing

// DecodePage decodes the list response b, the records under key, as List
// decodes a page.
func DecodePage[T any, P record[T]](b []byte, key string) (*Page[T], error) {
	pg := new(Page[T])
	err := decodePage[T, P](b, key, MaxPageSize, pg)
	return pg, err
}
