package invoicing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestContactsGet(t *testing.T) {
	for _, tc := range []struct {
		name, path, fixture, id string
		get                     func(*invoicing.Client) (*invoicing.Contact, error)
	}{
		{"clients", "/clients/", "contacts_client.json", idClient, func(c *invoicing.Client) (*invoicing.Contact, error) {
			return c.Clients.Get(context.Background(), idClient)
		}},
		{"suppliers", "/suppliers/", "contacts_supplier.json", idSupplier, func(c *invoicing.Client) (*invoicing.Contact, error) {
			return c.Suppliers.Get(context.Background(), idSupplier)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, body := getFixture(t, tc.fixture, tc.path+tc.id, "", tc.get)

			assert.Equal(t, tc.id, ct.ID)
			assert.NotEmpty(t, ct.Name)
			assert.Contains(t, ct.Email, "@")
			assert.NotEmpty(t, ct.Phone)
			assert.False(t, ct.CreatedAt.IsZero())
			assert.Nil(t, ct.UpdatedAt)
			assert.True(t, ct.Has("updated_at"), "a null field is present")
			assert.False(t, ct.Has("address"))
			assert.Nil(t, ct.MismatchedFields())
			assert.Nil(t, ct.Extra)
			assert.JSONEq(t, body, string(rawJSON(t, ct)))
		})
	}
}

func TestContactsGetDecodesKnownFieldsExactly(t *testing.T) {
	ct := answered(t, fixture(t, "contacts_client.json"), func(c *invoicing.Client) (*invoicing.Contact, error) {
		return c.Clients.Get(context.Background(), idClient)
	})
	assert.Equal(t, "Acme Pty Ltd", ct.Name)
	assert.Equal(t, "accounts@acme.example", ct.Email)
	assert.Equal(t, "+61 2 9000 0000", ct.Phone)
	assert.Equal(t, time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC), ct.CreatedAt)
}

func TestContactsGetKeepsUnknownFields(t *testing.T) {
	body := fixture(t, "contacts_client_unknown.json")
	ct := answered(t, body, func(c *invoicing.Client) (*invoicing.Contact, error) {
		return c.Clients.Get(context.Background(), idClient)
	})

	// The typed fields still decode beside the unknown ones.
	assert.Equal(t, "Acme Pty Ltd", ct.Name)
	require.NotNil(t, ct.UpdatedAt)
	assert.Equal(t, time.Date(2026, 10, 2, 9, 15, 30, 0, time.UTC), *ct.UpdatedAt)
	assert.Nil(t, ct.MismatchedFields())

	var addr struct {
		Line1    string `json:"address_line1"`
		City     string `json:"city"`
		Postcode string `json:"postcode"`
	}
	require.NoError(t, ct.Extra.Get("address", &addr))
	assert.Equal(t, "1 George St", addr.Line1)
	assert.Equal(t, "Sydney", addr.City)
	assert.Equal(t, "2000", addr.Postcode)

	var limit decimal.Decimal
	require.NoError(t, ct.Extra.Get("credit_limit", &limit))
	assert.Equal(t, "5000.1", limit.String(), "money read exactly")

	var tags []string
	require.NoError(t, ct.Extra.Get("tags", &tags))
	assert.Equal(t, []string{"wholesale", "nsw"}, tags)

	assert.True(t, ct.Has("archived_at"))
	assert.True(t, ct.Has("contact_type"))
	assert.False(t, ct.Has("Contact_Type"), "names match exactly")
	assert.Equal(t, []string{"address", "archived_at", "contact_type", "credit_limit", "tags", "tax_number"}, ct.Extra.Names())

	var own struct {
		ContactType string `json:"contact_type"`
		TaxNumber   string `json:"tax_number"`
	}
	require.NoError(t, ct.Extra.Decode(&own))
	assert.Equal(t, "client", own.ContactType)
	assert.Equal(t, "51 824 753 556", own.TaxNumber)

	out, err := json.Marshal(ct)
	require.NoError(t, err)
	assert.JSONEq(t, body, string(out), "re-marshalling loses nothing")
}

func TestContactsListReadsBothKeysAcrossPages(t *testing.T) {
	for _, tc := range []struct {
		key  string
		list func(*invoicing.Client) iter.Seq2[*invoicing.Contact, error]
	}{
		{"clients", func(c *invoicing.Client) iter.Seq2[*invoicing.Contact, error] {
			return c.Clients.List(context.Background(), nil)
		}},
		{"suppliers", func(c *invoicing.Client) iter.Seq2[*invoicing.Contact, error] {
			return c.Suppliers.List(context.Background(), nil)
		}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			first := strings.Replace(fixture(t, "contacts_list_clients.json"), `"clients"`, `"`+tc.key+`"`, 1)
			c, api := newMock(t, sequence(always(200, first), always(200, fixture(t, "contacts_list_items.json"))))
			var names []string
			var website string
			for ct, err := range tc.list(c) {
				require.NoError(t, err)
				names = append(names, ct.Name)
				if ct.Has("website") {
					require.NoError(t, ct.Extra.Get("website", &website))
				}
			}
			assert.Equal(t, []string{"Acme Pty Ltd", "Globex", "Initech"}, names)
			assert.Equal(t, "https://globex.example", website)
			reqs := api.requests()
			require.Len(t, reqs, 2)
			svcAssertGET(t, reqs[0], "/"+tc.key, "page=1&page_size=100")
			svcAssertGET(t, reqs[1], "/"+tc.key, "page=2&page_size=100")
		})
	}
}

func TestContactsClientsListPage(t *testing.T) {
	pg, _ := getFixture(t, "contacts_list_clients.json", "/clients", "email=accounts%40acme.example&page_size=2", func(c *invoicing.Client) (*invoicing.Page[invoicing.Contact], error) {
		return c.Clients.ListPage(context.Background(), &invoicing.ContactListParams{
			ListParams: invoicing.ListParams{PageSize: 2},
			Extra:      url.Values{"email": {"accounts@acme.example"}},
		})
	})
	assert.Equal(t, 3, pg.Total)
	assert.True(t, pg.HasMore)
	require.Len(t, pg.Items, 2)
	assert.Equal(t, idClient, pg.Items[0].ID)
	assert.Equal(t, "Globex", pg.Items[1].Name)
	assert.True(t, pg.Items[1].Has("email"), `"" is present`)
	assert.Empty(t, pg.Items[1].Email)
}

func TestContactsSuppliersListPageQueryWithExtra(t *testing.T) {
	pg, _ := getFixture(t, "contacts_list_suppliers.json", "/suppliers", "name=paper+%26+co&page=2&page_size=10&status=active&status=archived", func(c *invoicing.Client) (*invoicing.Page[invoicing.Contact], error) {
		return c.Suppliers.ListPage(context.Background(), &invoicing.ContactListParams{
			ListParams: invoicing.ListParams{Page: 2, PageSize: 10},
			Extra:      url.Values{"name": {"paper & co"}, "status": {"active", "archived"}, "unused": {}},
		})
	})

	require.Equal(t, []any{1, 2, 10, false, 1}, svcPaging(pg), "total, page, page_size, has_more, records")
	s := pg.Items[0]
	assert.Equal(t, idSupplier, s.ID)
	assert.Equal(t, "Paper Supplies Co", s.Name)
	assert.Equal(t, "12 345 678 901", extraValue[string](t, s.Extra, "abn"))
}

func TestContactsListPageItemsKey(t *testing.T) {
	pg, _ := getFixture(t, "contacts_list_items.json", "/suppliers", "", func(c *invoicing.Client) (*invoicing.Page[invoicing.Contact], error) {
		return c.Suppliers.ListPage(context.Background(), nil)
	})
	require.Len(t, pg.Items, 1)
	assert.Equal(t, "Initech", pg.Items[0].Name)
	assert.Empty(t, pg.Items[0].Phone, "null phone")
	assert.True(t, pg.Items[0].Has("phone"))
	assert.Nil(t, pg.Items[0].MismatchedFields(), "null is not a mismatch")
	assert.Equal(t, 3, pg.Total)
}

func TestContactsCreateSendsExactBody(t *testing.T) {
	created := fixture(t, "contacts_client_unknown.json")
	c, api := newMock(t, always(201, created))
	ct, err := c.Clients.Create(context.Background(), &invoicing.ContactCreateParams{
		Name:  "Acme Pty Ltd",
		Email: "accounts@acme.example",
		Phone: "+61 2 9000 0000",
		Extra: map[string]any{
			"address":      map[string]any{"city": "Sydney", "address_line1": "1 George St"},
			"credit_limit": svcDec("5000.10"),
			"tax_number":   "51 824 753 556",
			"is_company":   true,
		},
	})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/clients",
		`{"name":"Acme Pty Ltd","email":"accounts@acme.example","phone":"+61 2 9000 0000",`+
			`"address":{"address_line1":"1 George St","city":"Sydney"},"credit_limit":5000.10,"is_company":true,"tax_number":"51 824 753 556"}`)
	assert.Equal(t, idClient, ct.ID)
	assert.True(t, ct.Has("tax_number"))
	assert.JSONEq(t, created, string(rawJSON(t, ct)))
}

func TestContactsCreateMinimalAndExtraForUnsetField(t *testing.T) {
	c, api := newMock(t, always(201, fixture(t, "contacts_supplier.json")))
	s, err := c.Suppliers.Create(context.Background(), &invoicing.ContactCreateParams{Name: "Paper Supplies Co"})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/suppliers", `{"name":"Paper Supplies Co"}`)
	assert.Equal(t, "Paper Supplies Co", s.Name)

	// Email is unset, so Extra may send it (here as null); a nil decimal is
	// null too.
	_, err = c.Suppliers.Create(context.Background(), &invoicing.ContactCreateParams{
		Name:  "Paper Supplies Co",
		Extra: map[string]any{"email": nil, "opening_balance": (*decimal.Decimal)(nil)},
	})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/suppliers", `{"name":"Paper Supplies Co","email":null,"opening_balance":null}`)

	// Only Extra: the typed part is empty, and nothing is required.
	_, err = c.Suppliers.Create(context.Background(), &invoicing.ContactCreateParams{
		Extra: map[string]any{"name": "Raw Name", "credit": invoicing.Ptr(svcDec("-0.10"))},
	})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/suppliers", `{"credit":-0.10,"name":"Raw Name"}`)
	_, err = c.Clients.Create(context.Background(), &invoicing.ContactCreateParams{})
	require.NoError(t, err)
	svcAssertPOST(t, api.last(t), "/clients", `{}`)
	assert.Len(t, api.requests(), 4)
}

func TestContactsCreateRejectsBadParamsBeforeSending(t *testing.T) {
	c, api := newMock(t, always(201, "{}"))
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		p     *invoicing.ContactCreateParams
		field string
	}{
		{"nil", nil, "params"},
		{"clash with a typed field", &invoicing.ContactCreateParams{Name: "A", Extra: map[string]any{"name": "B"}}, "name"},
		{"empty key", &invoicing.ContactCreateParams{Name: "A", Extra: map[string]any{"": 1}}, "Extra"},
		{"not encodable", &invoicing.ContactCreateParams{Name: "A", Extra: map[string]any{"hook": func() {}}}, "hook"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, create := range []func(context.Context, *invoicing.ContactCreateParams, ...invoicing.RequestOption) (*invoicing.Contact, error){
				c.Clients.Create, c.Suppliers.Create,
			} {
				ct, err := create(ctx, tc.p)
				assert.Nil(t, ct)
				var pe *invoicing.ParamError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, tc.field, pe.Field)
				assert.ErrorIs(t, err, invoicing.ErrInvalidParams)
			}
		})
	}
	assert.Empty(t, api.requests())
}

func TestContactsCreateServiceValidationError(t *testing.T) {
	c, api := newMock(t, always(422, fixture(t, "resources_error_422.json")))
	_, err := c.Clients.Create(context.Background(), &invoicing.ContactCreateParams{Email: "x@example.com"})
	apiErr := apiError(t, err)
	assert.ErrorIs(t, err, invoicing.ErrValidation)
	assert.Equal(t, "POST", apiErr.Method)
	assert.Equal(t, "/clients", apiErr.Path)
	require.Len(t, apiErr.Problems, 2)
	assert.Equal(t, "name", apiErr.Problems[0].Field())
	assert.Equal(t, "line_items.0.account_id", apiErr.Problems[1].Field())
	assert.Equal(t, "name: field required; line_items.0.account_id: unknown account", apiErr.Detail)
	svcAssertPOST(t, api.last(t), "/clients", `{"email":"x@example.com"}`)
	assert.Len(t, api.requests(), 1)
}

// A contact the service sends with odd members still decodes; what does
// not fit is named and kept.
func TestContactsLenientGet(t *testing.T) {
	recs := svcLenientRecords(t, "lenient_contacts.json")
	ct := answered(t, string(recs[5]), func(c *invoicing.Client) (*invoicing.Contact, error) {
		return c.Clients.Get(context.Background(), idClient)
	})
	assert.Equal(t, []string{"name", "email", "updated_at"}, ct.MismatchedFields())
	assert.Empty(t, ct.Name)
	assert.Empty(t, ct.Email)
	assert.Equal(t, "+61 400 000 000", ct.Phone)
	var name struct{ First, Last string }
	require.NoError(t, ct.Extra.Get("name", &name))
	assert.Equal(t, "Lee", name.Last)
	var emails []string
	require.NoError(t, ct.Extra.Get("email", &emails))
	assert.Len(t, emails, 2)
	assert.JSONEq(t, string(recs[5]), string(rawJSON(t, ct)))
}

// A member the SDK has no field for is read from Extra.
func ExampleExtra_Get_contact() {
	var ct invoicing.Contact
	body := `{"id": "7b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e", "name": "Acme Pty Ltd",
		"address": {"city": "Sydney", "postcode": "2000"}, "credit_limit": 5000.10}`
	if err := json.Unmarshal([]byte(body), &ct); err != nil {
		panic(err)
	}
	var addr struct {
		City string `json:"city"`
	}
	var limit decimal.Decimal
	if err := ct.Extra.Get("address", &addr); err != nil {
		panic(err)
	}
	if err := ct.Extra.Get("credit_limit", &limit); err != nil {
		panic(err)
	}
	fmt.Println(ct.Name, addr.City, limit, ct.Has("phone"))
	// Output: Acme Pty Ltd Sydney 5000.1 false
}

// Members the SDK does not model are sent through Extra, after the typed
// ones.
func ExampleContactCreateParams_extra() {
	p := invoicing.ContactCreateParams{
		Name: "Paper Supplies Co",
		Extra: map[string]any{
			"address":         map[string]string{"city": "Sydney"},
			"opening_balance": decimal.RequireFromString("120.50"),
		},
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	// Output: {"name":"Paper Supplies Co","address":{"city":"Sydney"},"opening_balance":120.50}
}
