package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// mirror_selections (migrations/0014): the Selection the mirror applies to
// each business's data, and the key its hashes are made with.

const (
	selectionSQL    = `SELECT selection, coalesce(hash_key, '') FROM @.mirror_selections WHERE business = $1`
	putSelectionSQL = `INSERT INTO @.mirror_selections (business, selection, hash_key) VALUES ($1, $2, nullif($3, ''))
ON CONFLICT (business) DO UPDATE SET selection = $2, hash_key = nullif($3, ''), applied_at = now()`
)

// Selection returns the Selection recorded for business (JSON) and the id
// of the key its hashes are made with ("" for none); found is false when
// none is recorded.
func (s *Store) Selection(ctx context.Context, business string) (selection []byte, keyID string, found bool, err error) {
	rows, err := collect(ctx, s.pool, "reading a business's selection", s.q(selectionSQL), []any{business},
		func(r pgx.CollectableRow) ([2]string, error) {
			var out [2]string
			return out, r.Scan(&out[0], &out[1])
		})
	if err != nil || len(rows) == 0 {
		return nil, "", false, err
	}
	return []byte(rows[0][0]), rows[0][1], true, nil
}

// Selections returns the Selection recorded for each business (JSON), by
// business.
func (s *Store) Selections(ctx context.Context) (map[string][]byte, error) {
	rows, err := collect(ctx, s.pool, "reading the selections", s.q(`SELECT business, selection FROM @.mirror_selections`), nil,
		func(r pgx.CollectableRow) ([2]string, error) {
			var out [2]string
			return out, r.Scan(&out[0], &out[1])
		})
	out := make(map[string][]byte, len(rows))
	for _, r := range rows {
		out[r[0]] = []byte(r[1])
	}
	return out, err
}

// PutSelection records selection (JSON) as business's, its hashes made
// with the key keyID ("" for none).
func (s *Store) PutSelection(ctx context.Context, business string, selection []byte, keyID string) error {
	_, err := exec(ctx, s.pool, "recording a business's selection", s.q(putSelectionSQL), business, string(selection), keyID)
	return err
}

// HoldsData reports whether the mirror holds anything of business's
// records: a row of any of tables, a change, or a delivery in the inbox
// (inboxBusiness: its business there, ” for the business of a mirror's
// Config.Client).
func (s *Store) HoldsData(ctx context.Context, tables []*Table, business, inboxBusiness string) (bool, error) {
	exists := []string{`EXISTS (SELECT 1 FROM @.mirror_changes WHERE business = $1)`,
		`EXISTS (SELECT 1 FROM @.` + pginbox.TableName + ` WHERE business = $2)`}
	for _, t := range tables {
		exists = append(exists, `EXISTS (SELECT 1 FROM @.`+t.Name+` WHERE business = $1)`)
	}
	var holds bool
	err := scan(ctx, s.pool, "looking for a business's data", s.q(`SELECT `+strings.Join(exists, " OR ")), []any{business, inboxBusiness}, &holds)
	return holds, err
}
