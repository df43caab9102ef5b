package invoicing_test

import (
	"encoding/json"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestTypesParseDate(t *testing.T) {
	for s, want := range map[string]invoicing.Date{
		"2024-02-29": {Year: 2024, Month: time.February, Day: 29},
		"2026-12-31": {Year: 2026, Month: time.December, Day: 31},
		"0001-01-01": {Year: 1, Month: time.January, Day: 1},
		"9999-12-31": {Year: 9999, Month: time.December, Day: 31},
	} {
		d, err := invoicing.ParseDate(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, d, s)
		assert.Equal(t, s, d.String(), "String gives the text back")
		assert.False(t, d.IsZero())
	}
	for _, bad := range []string{"", "2023-02-29", "2026-02-30", "2026-13-01", "2026-00-10", "2026-01-00", "2024-2-9", "2024-02-29T00:00:00Z",
		"29/02/2024", " 2024-02-29", "2024-02-29 ", "20240229", "2024-02-2x", "+024-02-29", "２０２４-02-29"} {
		d, err := invoicing.ParseDate(bad)
		require.Error(t, err, "%q", bad)
		assert.Contains(t, err.Error(), "invoicing:")
		assert.True(t, d.IsZero(), "%q", bad)
	}
}

func TestTypesDateConstructors(t *testing.T) {
	assert.Equal(t, invoicing.Date{Year: 2026, Month: time.March, Day: 2}, invoicing.NewDate(2026, time.February, 30), "normalised as time.Date does")
	assert.Equal(t, invoicing.Date{Year: 2025, Month: time.December, Day: 31}, invoicing.NewDate(2026, time.January, 0))
	assert.Equal(t, "", invoicing.Date{}.String())
	assert.True(t, invoicing.Date{}.IsZero())

	// DateOf takes the civil date in t's own location.
	sydney := time.FixedZone("AEST", 10*3600)
	at := time.Date(2026, 12, 31, 23, 59, 0, 0, sydney) // 13:59 UTC
	assert.Equal(t, invoicing.NewDate(2026, 12, 31), invoicing.DateOf(at))
	assert.Equal(t, invoicing.NewDate(2026, 12, 31), invoicing.DateOf(at.UTC()))
	assert.Equal(t, invoicing.NewDate(2027, 1, 1), invoicing.DateOf(time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC).In(sydney)))
}

func TestTypesDateArithmetic(t *testing.T) {
	d, err := invoicing.ParseDate("2026-12-31")
	require.NoError(t, err)
	assert.Equal(t, "2027-01-30", d.AddDays(30).String())
	assert.Equal(t, "2026-12-01", d.AddDays(-30).String())
	assert.Equal(t, d, d.AddDays(0))
	assert.Equal(t, "2024-03-01", invoicing.NewDate(2024, 2, 28).AddDays(2).String(), "leap year")
	assert.Equal(t, "2025-03-02", invoicing.NewDate(2025, 2, 28).AddDays(2).String())

	later := d.AddDays(1)
	assert.True(t, d.Before(later))
	assert.False(t, later.Before(d))
	assert.False(t, d.Before(d))
	assert.True(t, later.After(d))
	assert.False(t, d.After(later))
	assert.False(t, d.After(d))
	assert.Equal(t, -1, d.Compare(later))
	assert.Equal(t, 1, later.Compare(d))
	assert.Equal(t, 0, d.Compare(invoicing.NewDate(2026, 12, 31)))
	assert.Equal(t, 1, invoicing.NewDate(2027, 1, 1).Compare(invoicing.NewDate(2026, 12, 31)), "years before months and days")
	assert.Equal(t, -1, invoicing.Date{}.Compare(d), "the zero Date is before every date")

	// In: midnight at the start of the day in loc.
	loc := time.FixedZone("x", -5*3600)
	at := d.In(loc)
	assert.Equal(t, time.Date(2026, 12, 31, 0, 0, 0, 0, loc), at)
	assert.Equal(t, loc, at.Location())
	assert.Equal(t, d, invoicing.DateOf(at))
	assert.Equal(t, time.Date(2026, 12, 31, 5, 0, 0, 0, time.UTC), at.UTC())
}

func TestTypesDateJSON(t *testing.T) {
	var v struct {
		D invoicing.Date  `json:"d"`
		Z invoicing.Date  `json:"z,omitzero"`
		N invoicing.Date  `json:"n"`
		E invoicing.Date  `json:"e"`
		P *invoicing.Date `json:"p"`
	}
	v.N = invoicing.NewDate(2000, 1, 1)
	v.E = invoicing.NewDate(2000, 1, 1)
	require.NoError(t, json.Unmarshal([]byte(`{"d": "2024-02-29", "z": null, "n": null, "e": "", "p": null}`), &v))
	assert.Equal(t, invoicing.Date{Year: 2024, Month: time.February, Day: 29}, v.D)
	assert.True(t, v.Z.IsZero())
	assert.True(t, v.N.IsZero(), "null gives the zero Date")
	assert.True(t, v.E.IsZero(), `"" gives the zero Date`)
	assert.Nil(t, v.P)
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, `{"d":"2024-02-29","n":null,"e":null,"p":null}`, string(b), "the zero Date is null, or left out with omitzero")

	b, err = jsonv2.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"d":"2024-02-29","n":null,"e":null,"p":null}`, string(b))
	var w struct {
		D invoicing.Date `json:"d"`
	}
	require.NoError(t, jsonv2.Unmarshal([]byte(`{"d":"2026-01-31"}`), &w))
	assert.Equal(t, invoicing.NewDate(2026, 1, 31), w.D)

	b, err = invoicing.NewDate(2026, 1, 2).MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `"2026-01-02"`, string(b))
	b, err = invoicing.Date{}.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `null`, string(b))

	for _, bad := range []string{`"2023-02-29"`, `"2024-2-9"`, `"2024-02-29T00:00:00Z"`, `20240229`, `"29/02/2024"`, `true`, `{}`, `["2024-02-29"]`, `"2024-02-29`} {
		var d invoicing.Date
		assert.Error(t, json.Unmarshal([]byte(bad), &d), bad)
		assert.Error(t, d.UnmarshalJSON([]byte(bad)), bad)
	}
	var d invoicing.Date
	require.NoError(t, d.UnmarshalJSON([]byte(` "2026-05-01" `)))
	assert.Equal(t, invoicing.NewDate(2026, 5, 1), d)
}

func TestTypesDateText(t *testing.T) {
	b, err := invoicing.NewDate(2026, 7, 4).MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "2026-07-04", string(b))
	b, err = invoicing.Date{}.MarshalText()
	require.NoError(t, err)
	assert.Empty(t, b)

	d := invoicing.NewDate(2000, 1, 1)
	require.NoError(t, d.UnmarshalText([]byte("2026-07-04")))
	assert.Equal(t, invoicing.NewDate(2026, 7, 4), d)
	require.NoError(t, d.UnmarshalText(nil))
	assert.True(t, d.IsZero(), "an empty text gives the zero Date")
	d = invoicing.NewDate(2000, 1, 1)
	assert.Error(t, d.UnmarshalText([]byte("2026-7-4")))
	assert.Equal(t, invoicing.NewDate(2000, 1, 1), d, "an invalid text leaves the Date")

	// As a map key, through MarshalText.
	m := map[invoicing.Date]int{invoicing.NewDate(2026, 1, 2): 1}
	b, err = json.Marshal(m)
	require.NoError(t, err)
	assert.Equal(t, `{"2026-01-02":1}`, string(b))
	var back map[invoicing.Date]int
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, m, back)
}

func TestTypesStatusesKnown(t *testing.T) {
	knownOnly(t, []invoicing.InvoiceStatus{invoicing.InvoiceStatusDraft, invoicing.InvoiceStatusAwaitingPayment, invoicing.InvoiceStatusPaid,
		invoicing.InvoiceStatusOverdue, invoicing.InvoiceStatusVoided}, "", "written_off", "DRAFT", "sent")
	knownOnly(t, []invoicing.QuoteStatus{invoicing.QuoteStatusDraft, invoicing.QuoteStatusSent, invoicing.QuoteStatusAccepted,
		invoicing.QuoteStatusDeclined, invoicing.QuoteStatusExpired}, "", "viewed", "Accepted")
	knownOnly(t, []invoicing.ItemType{invoicing.ItemTypeSales, invoicing.ItemTypePurchase, invoicing.ItemTypeText}, "", "SERVICE", "sales")
	knownOnly(t, []invoicing.BillStatus{invoicing.BillStatusDraft, invoicing.BillStatusAwaitingApproval, invoicing.BillStatusApproved,
		invoicing.BillStatusPaid}, "", "voided", "DRAFT", "partially_paid")
	knownOnly(t, []invoicing.AccountType{invoicing.AccountTypeRevenue, invoicing.AccountTypeExpense, invoicing.AccountTypeAsset,
		invoicing.AccountTypeLiability, invoicing.AccountTypeEquity}, "", "REVENUE", "current_asset")

	// Unknown values decode as they are, and encode back.
	var v struct {
		S invoicing.InvoiceStatus `json:"s"`
		Q invoicing.QuoteStatus   `json:"q"`
		T invoicing.ItemType      `json:"t"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"s": "written_off", "q": "sent", "t": "SERVICE"}`), &v))
	assert.Equal(t, invoicing.InvoiceStatus("written_off"), v.S)
	assert.Equal(t, invoicing.ItemType("SERVICE"), v.T)
	var inv invoicing.Invoice
	require.NoError(t, json.Unmarshal([]byte(`{"status": "written_off"}`), &inv))
	assert.Equal(t, invoicing.InvoiceStatus("written_off"), inv.Status)
	assert.False(t, inv.Status.Known())
	assert.Equal(t, `{"status":"written_off"}`, string(rawJSON(t, inv)))
}

// knownOnly checks that Known reports the values of known, and none of
// unknown.
func knownOnly[S interface {
	~string
	Known() bool
}](t *testing.T, known []S, unknown ...S) {
	t.Helper()
	for _, s := range known {
		assert.True(t, s.Known(), s)
	}
	for _, s := range unknown {
		assert.False(t, s.Known(), s)
	}
}

func TestTypesPtr(t *testing.T) {
	p := invoicing.Ptr(30)
	require.NotNil(t, p)
	assert.Equal(t, 30, *p)
	assert.NotSame(t, p, invoicing.Ptr(30), "a new pointer each time")
	v := 1
	q := invoicing.Ptr(v)
	*q = 2
	assert.Equal(t, 1, v, "a copy of the value")
	assert.Equal(t, "", *invoicing.Ptr(""))
	assert.False(t, *invoicing.Ptr(false))
}
