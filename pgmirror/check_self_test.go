package pgmirror_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The comparison that proves the mirror exact must see every kind of
// difference: each statement below spoils one thing in an exact mirror, and
// the comparison must report it (and only it).
func TestComparisonSeesEveryDifference(t *testing.T) {
	t.Parallel()
	srv, _ := newFake(t)
	seed(t, srv, sizes{invoices: 30, quotes: 10, bills: 5, clients: 3, suppliers: 2, items: 2, bankTransactions: 3}, rand.New(rand.NewPCG(3, 4)))
	schema := newSchemaName()
	m := openMirror(t, testConfig(sdkClient(srv), schema))
	require.NoError(t, m.Backfill(context.Background()))
	requireMirrorEqual(t, srv, schema)
	db := adminPool(t, schema)

	spoil := []struct{ name, table, sql string }{
		{"money off by a cent", "invoices", `UPDATE invoices SET total = total + 0.01 WHERE id = (SELECT min(id) FROM invoices)`},
		{"a status", "quotes", `UPDATE quotes SET status = 'declined' WHERE id = (SELECT min(id) FROM quotes)`},
		{"a date", "invoices", `UPDATE invoices SET due_date = due_date + 1 WHERE id = (SELECT min(id) FROM invoices)`},
		{"a datetime", "clients", `UPDATE clients SET created_at = created_at + interval '1 second' WHERE id = (SELECT min(id) FROM clients)`},
		{"a boolean", "items", `UPDATE items SET is_active = NOT is_active WHERE id = (SELECT min(id) FROM items)`},
		{"NULL for a value", "bills", `UPDATE bills SET supplier_name = NULL WHERE id = (SELECT min(id) FROM bills)`},
		{"a value for NULL", "invoices", `UPDATE invoices SET reference = 'R' WHERE id = (SELECT min(id) FROM invoices)`},
		{"a missing record", "bank_transactions", `DELETE FROM bank_transactions WHERE id = (SELECT min(id) FROM bank_transactions)`},
		{"an extra record", "tax_codes", `INSERT INTO tax_codes (business, id, raw, mirror_version, mirror_fetch_seq, mirror_synced_at, mirror_changed_at) VALUES ('default', 'x', '{}', now(), 0, now(), now())`},
		{"a line's quantity", "invoice_lines", `UPDATE invoice_lines SET quantity = quantity * 2 WHERE (invoice_id, position) = (SELECT invoice_id, 0 FROM invoice_lines ORDER BY invoice_id LIMIT 1)`},
		{"a missing line", "quote_lines", `DELETE FROM quote_lines WHERE (quote_id, position) = (SELECT quote_id, 0 FROM quote_lines ORDER BY quote_id LIMIT 1)`},
		{"lines in another order", "bill_lines", `CREATE TEMP TABLE b AS SELECT bill_id FROM bill_lines WHERE position = 1 ORDER BY bill_id LIMIT 1;
			UPDATE bill_lines SET position = -1 WHERE bill_id = (SELECT bill_id FROM b) AND position = 0;
			UPDATE bill_lines SET position = 0 WHERE bill_id = (SELECT bill_id FROM b) AND position = 1;
			UPDATE bill_lines SET position = 1 WHERE bill_id = (SELECT bill_id FROM b) AND position = -1`},
		{"a raw member changed", "accounts", `UPDATE accounts SET raw = jsonb_set(raw, '{name}', '"Other"') WHERE id = (SELECT min(id) FROM accounts)`},
		{"an unknown member lost", "bank_accounts", `UPDATE bank_accounts SET raw = raw - 'balance' WHERE id = (SELECT min(id) FROM bank_accounts)`},
		{"a member more in raw", "suppliers", `UPDATE suppliers SET raw = raw || '{"extra": 1}' WHERE id = (SELECT min(id) FROM suppliers)`},
	}
	for _, c := range spoil {
		t.Run(c.name, func(t *testing.T) {
			// Spoil the copy in a transaction, compare through it, and roll
			// it back: the next case starts from the exact copy again.
			tx, err := db.Begin(context.Background())
			require.NoError(t, err)
			defer tx.Rollback(context.Background())
			_, err = tx.Exec(context.Background(), c.sql)
			require.NoError(t, err)
			diffs, _ := compareWith(t, srv, tx)
			require.NotEmpty(t, diffs)
			for _, d := range diffs {
				assert.True(t, strings.HasPrefix(d, c.table+" ") || strings.HasPrefix(d, c.table+":"), "a difference elsewhere: %s", d)
			}
		})
	}
}
