package invoicing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An https API that redirects to plain http on a non-loopback host: the
// default client must not follow it, or the key would travel in clear text.
func TestRedirectToPlainHTTPRefused(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "http://api.example.test"+r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL+"/api/v1/external", "sk_test_secret_key")
	require.NoError(t, err)
	// Trust the test server's certificate, keeping the default redirect policy.
	c.hc.Transport = srv.Client().Transport

	_, err = c.Invoices.Get(context.Background(), "3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f")
	require.ErrorIs(t, err, errInsecureRedirect)
	assert.NotContains(t, err.Error(), "sk_test_secret_key")
	assert.Equal(t, int32(1), hits.Load(), "a refused redirect is not retried")
}

func TestRedirectPolicy(t *testing.T) {
	req := func(u string) *http.Request { r, _ := http.NewRequest("GET", u, nil); return r }
	strict, lax := redirectPolicy(false, nil), redirectPolicy(true, nil)
	assert.NoError(t, strict(req("https://other.example.test/x"), nil))
	assert.NoError(t, strict(req("http://127.0.0.1:8080/x"), nil))
	assert.ErrorIs(t, strict(req("http://api.example.test/x"), nil), errInsecureRedirect)
	assert.NoError(t, lax(req("http://api.example.test/x"), nil))
	assert.Error(t, strict(req("https://a.test/"), make([]*http.Request, 10)))
}
