package invoicingtest

import (
	invoicing "github.com/invoicing-api/invoicing-go"
)

// Client returns an SDK client wired to the server (its URL, FullKey), with
// the SDK's default settings changed only by opts. It panics if the SDK
// refuses the options, which is a mistake in the test's setup.
func (s *Server) Client(opts ...invoicing.Option) *invoicing.Client {
	return s.ClientWithKey(s.FullKey, opts...)
}

// ClientWithKey is Client with another API key, such as ReadOnlyKey or one
// made with NewAPIKey.
func (s *Server) ClientWithKey(key string, opts ...invoicing.Option) *invoicing.Client {
	c, err := invoicing.NewClient(s.URL, key, opts...)
	if err != nil {
		panic("invoicingtest: " + err.Error())
	}
	return c
}
