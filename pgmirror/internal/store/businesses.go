package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

// mirror_businesses: the businesses a mirror serves when they are data,
// their API key and webhook secrets sealed.

const (
	activeSQL = `SELECT name, api_key, webhook_secrets, coalesce(budget, 0), selection, updated_at FROM @.mirror_businesses WHERE removed_at IS NULL ORDER BY name`
	putSQL    = `INSERT INTO @.mirror_businesses (name, api_key, webhook_secrets, budget, selection) VALUES ($1, $2, $3, nullif($4::float8, 0), $5)
ON CONFLICT (name) DO UPDATE SET api_key = $2, webhook_secrets = $3, budget = nullif($4::float8, 0), selection = $5,
	updated_at = clock_timestamp(), removed_at = NULL`
	removeSQL = `UPDATE @.mirror_businesses SET removed_at = coalesce(removed_at, clock_timestamp()), updated_at = clock_timestamp()
WHERE name = $1`
	notifySQL  = `SELECT pg_notify($1, '')`
	removedSQL = `SELECT removed_at IS NOT NULL FROM @.mirror_businesses WHERE name = $1 FOR UPDATE`
	listSQL    = `SELECT m.name, coalesce(m.budget, 0), m.selection, m.api_key, m.webhook_secrets, m.added_at, m.updated_at, m.removed_at,
	CASE WHEN p.pause_reason IS NOT NULL THEN p.paused_until END, p.pause_reason
FROM @.mirror_businesses AS m LEFT JOIN @.mirror_budgets AS p ON p.business = m.name
ORDER BY m.name`
	sealsSQL  = `SELECT name, api_key, webhook_secrets FROM @.mirror_businesses ORDER BY name`
	resealSQL = `UPDATE @.mirror_businesses SET api_key = $2, webhook_secrets = $3 WHERE name = $1 AND api_key = $4 AND webhook_secrets = $5`
	forgetSQL = `DELETE FROM @.mirror_businesses WHERE name = $1`
)

// BusinessesChannel is the channel notified when the businesses of the
// mirror in schema change.
func BusinessesChannel(schema string) string { return "pgmirror_businesses_" + schema }

// Sealed is a business as mirror_businesses holds it.
type Sealed struct {
	Name            string
	APIKey, Secrets []byte  // sealed
	Budget          float64 // its rate's ceiling, requests per second; 0 for none
	Selection       []byte  // what the mirror keeps of its data (JSON of a pgmirror.Selection)
	UpdatedAt       time.Time
}

// ActiveBusinesses returns the businesses not removed, by name.
func (s *Store) ActiveBusinesses(ctx context.Context) ([]Sealed, error) {
	return collect(ctx, s.pool, "reading the businesses", s.q(activeSQL), nil, func(r pgx.CollectableRow) (Sealed, error) {
		var b Sealed
		return b, r.Scan(&b.Name, &b.APIKey, &b.Secrets, &b.Budget, &b.Selection, &b.UpdatedAt)
	})
}

// PutBusiness records a business, or replaces the key, secrets and budget
// of one recorded (serving it again if it was removed), ends its pause,
// and notifies the replicas, in one transaction.
func (s *Store) PutBusiness(ctx context.Context, name string, apiKey, secrets []byte, budget float64, selection []byte) error {
	return s.changeBusinesses(ctx, func(tx querier) error {
		const op = "changing the businesses"
		if _, err := exec(ctx, tx, op, s.q(putSQL), name, apiKey, secrets, budget, string(selection)); err != nil {
			return err
		}
		_, err := exec(ctx, tx, op, s.q(resumeSQL), name)
		return err
	})
}

// ErrNoSuchBusiness is the error for a business mirror_businesses does not
// hold.
var ErrNoSuchBusiness = errors.New("pgmirror: no such business")

// RemoveBusiness marks a business removed and notifies the replicas; it
// returns ErrNoSuchBusiness for a business never added.
func (s *Store) RemoveBusiness(ctx context.Context, name string) error {
	return s.changeBusinesses(ctx, func(tx querier) error {
		n, err := exec(ctx, tx, "changing the businesses", s.q(removeSQL), name)
		if err == nil && n == 0 {
			err = ErrNoSuchBusiness
		}
		return err
	})
}

// changeBusinesses runs fn and notifies the replicas, in one transaction.
func (s *Store) changeBusinesses(ctx context.Context, fn func(querier) error) error {
	return s.InTx(ctx, "changing the businesses", func(tx *Tx) error {
		if err := fn(tx.tx); err != nil {
			return err
		}
		_, err := exec(ctx, tx.tx, "changing the businesses", notifySQL, BusinessesChannel(s.schema))
		return err
	})
}

// ErrBusinessNotRemoved is DropBusiness's error for a business still
// served.
var ErrBusinessNotRemoved = errors.New("pgmirror: the business is not removed")

// DropBusiness deletes a removed business: its row of mirror_businesses
// and every row of it in tables, in the mirror's own tables and in the
// inbox, in one transaction. It returns ErrNoSuchBusiness or
// ErrBusinessNotRemoved when it deletes nothing.
func (s *Store) DropBusiness(ctx context.Context, name string, tables []string) error {
	return s.InTx(ctx, "dropping business "+name, func(tx *Tx) error {
		op := "dropping business " + name
		var removed bool
		if err := tx.tx.QueryRow(ctx, s.q(removedSQL), name).Scan(&removed); errors.Is(err, pgx.ErrNoRows) {
			return ErrNoSuchBusiness
		} else if err != nil {
			return fail(op, err)
		}
		if !removed {
			return ErrBusinessNotRemoved
		}
		tables = append(tables, "mirror_backfill", "mirror_pending_fetch", "mirror_confirmed", "mirror_reconcile",
			"mirror_changes", "mirror_event_lag", pginbox.TableName, "mirror_budgets", "mirror_walk_listed", "mirror_fetch_numbers", "mirror_selections")
		for _, t := range tables {
			if _, err := exec(ctx, tx.tx, op+" from "+t, s.q(`DELETE FROM @.`+t+` WHERE business = $1`), name); err != nil {
				return err
			}
		}
		_, err := exec(ctx, tx.tx, op, s.q(forgetSQL), name)
		return err
	})
}

// A Listed is a business as ListBusinesses reads it.
type Listed struct {
	Name               string
	Budget             float64
	Selection          []byte // JSON
	APIKey, Secrets    []byte // sealed
	AddedAt, UpdatedAt time.Time
	RemovedAt          *time.Time
	PausedUntil        *time.Time
	PauseReason        *string
}

// ListBusinesses returns every business recorded, removed ones included,
// by name, with its pause.
func (s *Store) ListBusinesses(ctx context.Context) ([]Listed, error) {
	return collect(ctx, s.pool, "listing the businesses", s.q(listSQL), nil, func(r pgx.CollectableRow) (Listed, error) {
		var b Listed
		return b, r.Scan(&b.Name, &b.Budget, &b.Selection, &b.APIKey, &b.Secrets, &b.AddedAt, &b.UpdatedAt, &b.RemovedAt, &b.PausedUntil, &b.PauseReason)
	})
}

// Seals returns every business's sealed values, by name.
func (s *Store) Seals(ctx context.Context) ([]Sealed, error) {
	return collect(ctx, s.pool, "reading the sealed values", s.q(sealsSQL), nil, func(r pgx.CollectableRow) (Sealed, error) {
		var b Sealed
		return b, r.Scan(&b.Name, &b.APIKey, &b.Secrets)
	})
}

// Reseal replaces a business's sealed values old with new, unless they
// changed meanwhile. Its updated_at stays, so that no replica rebuilds the
// business.
func (s *Store) Reseal(ctx context.Context, old, new Sealed) error {
	_, err := exec(ctx, s.pool, "resealing business "+old.Name, s.q(resealSQL), old.Name, new.APIKey, new.Secrets, old.APIKey, old.Secrets)
	return err
}
