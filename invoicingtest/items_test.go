package invoicingtest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func itemBody(extra map[string]any) map[string]any {
	return withExtra(map[string]any{
		"name":        "Blue widget",
		"item_code":   "W-BLUE",
		"unit_price":  jsonNumber("12.50"),
		"account_id":  SeedRevenueAccountID,
		"tax_code_id": SeedGSTTaxCodeID,
	}, extra)
}

func TestCreateItem(t *testing.T) {
	srv, _ := newServer(t)
	it := post(t, srv, "/items", itemBody(map[string]any{"description": "A blue one"})).requireStatus(t, http.StatusCreated).object(t)
	assert.NotEmpty(t, it["id"])
	assert.Equal(t, "W-BLUE", it["item_code"])
	assert.Equal(t, "Blue widget", it["name"])
	assert.Equal(t, "A blue one", it["description"])
	assert.Equal(t, "SALES", it["item_type"], "item_type defaults to SALES")
	assert.Equal(t, num("12.50"), it["unit_price"])
	assert.Equal(t, true, it["is_taxable"], "is_taxable defaults to true")
	assert.Equal(t, SeedRevenueAccountID, it["account_id"])
	assert.Equal(t, SeedGSTTaxCodeID, it["tax_code_id"])
	assert.Equal(t, true, it["is_active"])
	assert.Equal(t, "2026-03-10T09:30:00Z", it["created_at"])
	assert.Contains(t, it, "updated_at")
	assert.Nil(t, it["updated_at"])

	got := get(t, srv, "/items/"+it["id"].(string)).requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, it, got)
}

func TestCreateItemRules(t *testing.T) {
	srv, _ := newServer(t)
	post(t, srv, "/items", itemBody(nil)).requireStatus(t, http.StatusCreated)

	r := post(t, srv, "/items", itemBody(map[string]any{"name": "Another"})).requireStatus(t, http.StatusConflict)
	assert.Equal(t, "Item code already exists", r.detail(t))

	for _, typ := range []string{"SALES", "PURCHASE"} {
		body := itemBody(map[string]any{"item_code": "P-" + typ, "item_type": typ})
		delete(body, "unit_price")
		r := post(t, srv, "/items", body).requireStatus(t, http.StatusUnprocessableEntity)
		assert.Equal(t, "unit_price is required for SALES and PURCHASE items", r.detail(t))
	}
	body := itemBody(map[string]any{"item_code": "NOTE", "item_type": "TEXT", "is_taxable": false})
	delete(body, "unit_price")
	text := post(t, srv, "/items", body).requireStatus(t, http.StatusCreated).object(t)
	assert.Equal(t, "TEXT", text["item_type"])
	assert.Equal(t, false, text["is_taxable"])

	for _, typ := range []string{"SERVICE", "sales", ""} {
		r := post(t, srv, "/items", itemBody(map[string]any{"item_code": "T-" + typ, "item_type": typ})).requireStatus(t, http.StatusUnprocessableEntity)
		assert.Equal(t, "item_type must be one of: SALES, PURCHASE, TEXT", r.detail(t))
	}

	post(t, srv, "/items", itemBody(map[string]any{"item_code": "N", "name": " "})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/items", itemBody(map[string]any{"item_code": "A", "account_id": ""})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/items", itemBody(map[string]any{"item_code": "B", "tax_code_id": "nope"})).requireStatus(t, http.StatusUnprocessableEntity)
	post(t, srv, "/items", `{"name": 5}`).requireStatus(t, http.StatusBadRequest)

	// Items without a code never conflict with each other.
	post(t, srv, "/items", itemBody(map[string]any{"item_code": ""})).requireStatus(t, http.StatusCreated)
	post(t, srv, "/items", itemBody(map[string]any{"item_code": ""})).requireStatus(t, http.StatusCreated)
}

func TestListItemsByType(t *testing.T) {
	srv, _ := newServer(t)
	post(t, srv, "/items", itemBody(map[string]any{"item_code": "BUY", "item_type": "PURCHASE"})).requireStatus(t, http.StatusCreated)

	all := get(t, srv, "/items").requireStatus(t, http.StatusOK).object(t)
	assert.Equal(t, num("2"), all["total"], "the seed item and the new one")
	require.Len(t, list(t, all, "items"), 2)
	assert.Equal(t, SeedItemID, list(t, all, "items")[0]["id"])

	purchase := get(t, srv, "/items?item_type=PURCHASE").object(t)
	items := list(t, purchase, "items")
	require.Len(t, items, 1)
	assert.Equal(t, "BUY", items[0]["item_code"])
	assert.Equal(t, num("0"), get(t, srv, "/items?item_type=TEXT").object(t)["total"])

	r := get(t, srv, "/items?item_type=GOODS").requireStatus(t, http.StatusBadRequest)
	assert.Equal(t, "item_type must be one of: SALES, PURCHASE, TEXT", r.detail(t))
	assert.Equal(t, "Item not found", get(t, srv, "/items/nope").requireStatus(t, http.StatusNotFound).detail(t))
}
