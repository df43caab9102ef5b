package pgmirror_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// The version rule, write by write: a fetch is applied only when its
// (updated_at, fetch order) is not older than the row's.

// newRuleMirror returns a migrated mirror with nothing in it, and a pool on
// its schema.
func newRuleMirror(t *testing.T) (*pgmirror.Mirror, func(sql string, args ...any) int) {
	srv, _ := newFake(t)
	schema := newSchemaName()
	m := openMirror(t, testConfig(sdkClient(srv), schema))
	db := adminPool(t, schema)
	return m, func(sql string, args ...any) int { return count(t, db, sql, args...) }
}

// invoice is an invoice record as a fetch returns it: notes mark which
// state of the record it is, lines its number of lines.
func invoice(updated *time.Time, notes string, lines int) *invoicing.Invoice {
	inv := &invoicing.Invoice{
		ID: "7d0e4bb4-0000-4000-8000-000000000001", InvoiceNumber: "INV-1", ClientID: invoicingtest.SeedClientID,
		Status: invoicing.InvoiceStatusDraft, IssueDate: invoicing.NewDate(2026, 3, 2), DueDate: invoicing.NewDate(2026, 4, 1),
		Total: decimal.RequireFromString("110.00"), Currency: "AUD", Notes: notes, CreatedAt: t0, UpdatedAt: updated,
	}
	for i := range lines {
		inv.LineItems = append(inv.LineItems, invoicing.InvoiceLineItem{ID: string(rune('a' + i)), Quantity: decimal.NewFromInt(1)})
	}
	return inv
}

func at(d time.Duration) *time.Time {
	t := t0.Add(d)
	return &t
}

func TestNewerUpdatedAtWinsWhateverTheFetchOrder(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	ctx := context.Background()
	written, err := m.ApplyForTest(ctx, 2, invoice(at(time.Minute), "newer", 3))
	require.NoError(t, err)
	assert.Len(t, written, 1)

	written, err = m.ApplyForTest(ctx, 5, invoice(at(time.Second), "older, fetched later", 1))
	require.NoError(t, err)
	assert.Empty(t, written, "an older version is not applied, even from a later fetch")
	assert.Equal(t, 1, count(`SELECT count(*) FROM invoices WHERE notes = 'newer'`))
	assert.Equal(t, 3, count(`SELECT count(*) FROM invoice_lines`), "its lines are not touched either")
}

func TestEqualUpdatedAtIsDecidedByFetchOrder(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	ctx := context.Background()
	same := at(time.Second) // two changes in the same second: the trap of whole-second timestamps
	_, err := m.ApplyForTest(ctx, 10, invoice(same, "first change", 1))
	require.NoError(t, err)
	written, err := m.ApplyForTest(ctx, 11, invoice(same, "second change", 2))
	require.NoError(t, err)
	assert.Len(t, written, 1, "a later fetch with an equal updated_at wins")
	assert.Equal(t, 1, count(`SELECT count(*) FROM invoices WHERE notes = 'second change'`))
	assert.Equal(t, 2, count(`SELECT count(*) FROM invoice_lines`))

	written, err = m.ApplyForTest(ctx, 10, invoice(same, "first change", 1))
	require.NoError(t, err)
	assert.Empty(t, written, "a late copy of the earlier fetch does not roll the row back")
	assert.Equal(t, 1, count(`SELECT count(*) FROM invoices WHERE notes = 'second change'`))
}

func TestARecordWithoutTimestampsIsDecidedByFetchOrder(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	ctx := context.Background()
	tc := func(name string) *invoicing.TaxCode {
		return &invoicing.TaxCode{ID: invoicingtest.SeedGSTTaxCodeID, Code: "GST", Name: name, Rate: decimal.NewFromInt(10)}
	}
	_, err := m.ApplyForTest(ctx, 7, tc("later"))
	require.NoError(t, err)
	written, err := m.ApplyForTest(ctx, 6, tc("earlier"))
	require.NoError(t, err)
	assert.Empty(t, written)
	assert.Equal(t, 1, count(`SELECT count(*) FROM tax_codes WHERE raw->>'name' = 'later' AND mirror_version = '-infinity'`))
}

// A fetch that finds the record unchanged writes nothing to its row (its
// fetch number and times stay those of the fetch that wrote the content)
// nor to its lines; it is recorded apart (mirror_confirmed), so an older
// fetch still in flight with other content cannot win: neither one older
// than the write, nor one between the write and the confirmation.
func TestAnUnchangedRecordIsNotWrittenYetCounts(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	ctx := context.Background()
	v := at(time.Second)
	_, err := m.ApplyForTest(ctx, 20, invoice(v, "current", 2))
	require.NoError(t, err)
	before := count(`SELECT (xmin::text)::int FROM invoices`)

	written, err := m.ApplyForTest(ctx, 30, invoice(v, "current", 2))
	require.NoError(t, err)
	assert.Empty(t, written, "nothing to correct")
	assert.Equal(t, 20, count(`SELECT mirror_fetch_seq FROM invoices`))
	assert.Equal(t, before, count(`SELECT (xmin::text)::int FROM invoices`), "the row is the same tuple")
	assert.Equal(t, 1, count(`SELECT count(DISTINCT xmin::text) FROM invoice_lines`), "the lines too")
	assert.Equal(t, before, count(`SELECT (min(xmin::text))::int FROM invoice_lines`))
	assert.Equal(t, 30, count(`SELECT seq FROM mirror_confirmed`))

	for _, seq := range []int64{15, 25} {
		written, err = m.ApplyForTest(ctx, seq, invoice(v, "stale", 1))
		require.NoError(t, err)
		assert.Empty(t, written, "fetch %d is older than fetch 30, which saw the current content", seq)
	}
	assert.Equal(t, 1, count(`SELECT count(*) FROM invoices WHERE notes = 'current'`))
	assert.Equal(t, 2, count(`SELECT count(*) FROM invoice_lines`))

	written, err = m.ApplyForTest(ctx, 31, invoice(v, "newer, same second", 1))
	require.NoError(t, err)
	assert.Len(t, written, 1, "a later fetch still wins")
}

// A page drift can list a record twice in one batch: the later copy wins
// and the batch does not fail.
func TestARecordTwiceInABatchIsWrittenOnce(t *testing.T) {
	t.Parallel()
	m, count := newRuleMirror(t)
	written, err := m.ApplyForTest(context.Background(), 1, invoice(nil, "first copy", 1), invoice(nil, "second copy", 4))
	require.NoError(t, err)
	assert.Len(t, written, 1)
	assert.Equal(t, 1, count(`SELECT count(*) FROM invoices WHERE notes = 'second copy'`))
	assert.Equal(t, 4, count(`SELECT count(*) FROM invoice_lines`))
}
