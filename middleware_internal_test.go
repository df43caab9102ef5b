package invoicing

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRouteTemplate(t *testing.T) {
	for path, want := range map[string]string{
		"/invoices": "/invoices",
		"/invoices/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f":                                 "/invoices/{id}",
		"/invoices/3F2C9A4E-8B1D-4C7A-9E55-0A1B2C3D4E5F/pdf":                             "/invoices/{id}/pdf",
		"/reports/trial-balance":                                                         "/reports/trial-balance",
		"/a/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f/b/7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d": "/a/{id}/b/{id}",
		"/x/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5fz":                                       "/x/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5fz",
		"/x/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5-":                                        "/x/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5-",
		"/x/3f2c9a4e8b1d4c7a9e550a1b2c3d4e5f":                                            "/x/3f2c9a4e8b1d4c7a9e550a1b2c3d4e5f",
	} {
		assert.Equal(t, want, routeTemplate(path), path)
	}
}

func TestRouteIsOneAllocation(t *testing.T) {
	r := &request{method: "GET", path: "/invoices/3f2c9a4e-8b1d-4c7a-9e55-0a1b2c3d4e5f/pdf"}
	assert.Equal(t, "GET /invoices/{id}/pdf", r.route())
	assert.Equal(t, "POST /", (&request{method: "POST", path: "/"}).route())
	assert.Equal(t, "GET ", (&request{method: "GET"}).route())
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { _ = r.route() }), 1.0, "a middleware asks for the route on every attempt")
}
