package invoicing_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestDateJSONRoundTrip(t *testing.T) {
	var v struct {
		D invoicing.Date  `json:"d"`
		Z invoicing.Date  `json:"z,omitzero"`
		P *invoicing.Date `json:"p"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"d": "2024-02-29", "z": null, "p": null}`), &v))
	assert.Equal(t, invoicing.Date{Year: 2024, Month: time.February, Day: 29}, v.D)
	assert.True(t, v.Z.IsZero())
	assert.Nil(t, v.P)
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"d": "2024-02-29", "p": null}`, string(b))

	for _, bad := range []string{`"2023-02-29"`, `"2024-2-9"`, `"2024-02-29T00:00:00Z"`, `20240229`, `"29/02/2024"`} {
		var d invoicing.Date
		assert.Error(t, json.Unmarshal([]byte(bad), &d), bad)
	}
	var d invoicing.Date
	require.NoError(t, json.Unmarshal([]byte(`""`), &d))
	assert.True(t, d.IsZero())
}

func TestDateHelpers(t *testing.T) {
	d, err := invoicing.ParseDate("2026-12-31")
	require.NoError(t, err)
	assert.Equal(t, "2027-01-30", d.AddDays(30).String())
	assert.True(t, d.Before(d.AddDays(1)))
	assert.True(t, d.After(d.AddDays(-1)))
	assert.Equal(t, 0, d.Compare(invoicing.NewDate(2026, 12, 31)))
	assert.Equal(t, "", invoicing.Date{}.String())
	assert.Equal(t, d, invoicing.DateOf(time.Date(2026, 12, 31, 23, 59, 0, 0, time.FixedZone("x", 10*3600))))
	_, err = invoicing.ParseDate("2026-13-01")
	assert.Error(t, err)
}

func TestEnumsKeepUnknownValues(t *testing.T) {
	var v struct {
		S invoicing.InvoiceStatus `json:"s"`
		Q invoicing.QuoteStatus   `json:"q"`
		T invoicing.ItemType      `json:"t"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"s": "written_off", "q": "sent", "t": "SERVICE"}`), &v))
	assert.Equal(t, invoicing.InvoiceStatus("written_off"), v.S)
	assert.False(t, v.S.Known())
	assert.True(t, v.Q.Known())
	assert.False(t, v.T.Known())
	assert.True(t, invoicing.InvoiceStatusVoided.Known())
	assert.True(t, invoicing.ItemTypeText.Known())
}
