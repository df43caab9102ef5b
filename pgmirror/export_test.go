package pgmirror

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	invoicing "github.com/invoicing-api/invoicing-go"
)

// ApplyForTest writes records (all of one SDK record type) as a fetch with
// sequence number seq would, and returns the ids written.
func (m *Mirror) ApplyForTest(ctx context.Context, seq int64, records ...any) ([]string, error) {
	var res *resource
	var rows []row
	for _, rec := range records {
		var r row
		var err error
		switch v := rec.(type) {
		case *invoicing.Invoice:
			res = resourceNamed(Invoices)
			r, err = recordRow(v, invoiceRow)
		case *invoicing.TaxCode:
			res = resourceNamed(TaxCodes)
			r, err = recordRow(v, taxCodeRow)
		default:
			return nil, fmt.Errorf("ApplyForTest: %T", rec)
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	var written []string
	err := m.static().inTx(ctx, func(tx pgx.Tx) error {
		var err error
		written, err = apply(ctx, tx, res, rows, seq)
		return err
	})
	return written, err
}

// CountedForTest returns the Mirror's counters: the changes written by
// "resource/cause", the reconciliations' corrections and the rows marked
// deleted by resource, and the backfill's rows listed by resource.
func (m *Mirror) CountedForTest() (changes, corrections, deleted, backfilled map[string]int64) {
	s := m.stats()
	changes, backfilled = map[string]int64{}, map[string]int64{}
	for k, n := range s.changes {
		changes[k.resource+"/"+k.cause] = n
	}
	for res, p := range s.backfill {
		backfilled[res] = p.listed
	}
	return changes, s.corrections, s.deleted, backfilled
}

// MigrateToVersionForTest brings schema to version (below SchemaVersion),
// as an older version of the package would have left it: for the upgrade
// tests.
func MigrateToVersionForTest(ctx context.Context, db *pgxpool.Pool, schema string, version int) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	ident := pgx.Identifier{schema}.Sanitize()
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		for _, sql := range []string{`CREATE SCHEMA ` + ident, `SET LOCAL search_path TO ` + ident,
			`CREATE TABLE mirror_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`} {
			if _, err := tx.Exec(ctx, sql); err != nil {
				return err
			}
		}
		for _, m := range ms[:version] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mirror_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return err
			}
		}
		return nil
	})
}
