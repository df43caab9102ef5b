package invoicingtest

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
)

// Scopes documented by the service.
const (
	ScopeInvoicesRead  = "invoices:read"
	ScopeInvoicesWrite = "invoices:write"
	ScopeItemsRead     = "items:read"
	ScopeItemsWrite    = "items:write"
	ScopeQuotesRead    = "quotes:read"
	ScopeQuotesWrite   = "quotes:write"
)

// Scopes this fake requires for clients, suppliers, bills, accounts, tax
// codes, reports and bank data, whose scope names the service does not
// document. They follow the documented <resource>:read / <resource>:write
// pattern.
const (
	ScopeClientsRead    = "clients:read"
	ScopeClientsWrite   = "clients:write"
	ScopeSuppliersRead  = "suppliers:read"
	ScopeSuppliersWrite = "suppliers:write"
	ScopeBillsRead      = "bills:read"
	ScopeBillsWrite     = "bills:write"
	ScopeAccountsRead   = "accounts:read"
	ScopeTaxCodesRead   = "tax_codes:read"
	ScopeReportsRead    = "reports:read"
	ScopeBankingRead    = "banking:read"
)

// AllScopes returns every scope the server knows, the scopes of FullKey.
func AllScopes() []string {
	return append(ReadScopes(),
		ScopeInvoicesWrite, ScopeItemsWrite, ScopeQuotesWrite,
		ScopeClientsWrite, ScopeSuppliersWrite, ScopeBillsWrite)
}

// ReadScopes returns the :read scopes, the scopes of ReadOnlyKey.
func ReadScopes() []string {
	return []string{
		ScopeInvoicesRead, ScopeItemsRead, ScopeQuotesRead,
		ScopeClientsRead, ScopeSuppliersRead, ScopeBillsRead,
		ScopeAccountsRead, ScopeTaxCodesRead, ScopeReportsRead, ScopeBankingRead,
	}
}

// NewAPIKey mints a new API key of the business with exactly the given
// scopes and returns it. A key with no scopes authenticates (no 401) but is
// refused every endpoint with 403.
func (s *Server) NewAPIKey(scopes ...string) string {
	key := "sk_test_" + randomHex(16)
	set := make(map[string]bool, len(scopes))
	for _, sc := range scopes {
		set[sc] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[key] = set
	return key
}

// RevokeAPIKey makes key invalid: requests with it get 401 from then on.
func (s *Server) RevokeAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, key)
}

// hasKey reports whether key is an API key of the business (of any
// scopes, none included).
func (s *Server) hasKey(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.keys[key]
	return ok
}

// authorize checks the Authorization header of r against the key store and
// the scopes the endpoint needs: 401 for a missing, malformed or unknown
// key, 403 naming the first scope a known key lacks.
func (s *Server) authorize(r *http.Request, scopes ...string) *apiError {
	key, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return &apiError{http.StatusUnauthorized, "Invalid or missing API key"}
	}
	s.mu.Lock()
	granted, known := s.keys[key]
	missing := ""
	for _, sc := range scopes {
		if !granted[sc] {
			missing = sc
			break
		}
	}
	s.mu.Unlock()
	if !known {
		return &apiError{http.StatusUnauthorized, "Invalid or missing API key"}
	}
	if missing != "" {
		return &apiError{http.StatusForbidden, "API key is missing the required scope: " + missing}
	}
	return nil
}

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header; the scheme is case-insensitive (RFC 9110).
func bearerToken(header string) (string, bool) {
	scheme, token, found := strings.Cut(header, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// randomHex returns n random bytes as lowercase hex (2n characters).
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("invoicingtest: reading random bytes: " + err.Error())
	}
	return hex.EncodeToString(b)
}
