package pgmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/seal"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// EnvKeys is the environment variable the invoicing-mirror command reads
// its Keyring from (see ParseKeyring).
const EnvKeys = "INVOICING_MIRROR_KEYS"

// A Keyring holds the keys that seal the businesses' API keys and webhook
// secrets at rest (AES-256-GCM), by id: the first seals, every one opens,
// so that a key is rotated by putting the new one first, calling
// Businesses.Reseal, then dropping the old one. Printing a Keyring shows
// the ids only.
type Keyring = seal.Keyring

// ParseKeyring reads a Keyring from its text form, as EnvKeys holds it:
// id:base64key[,id:base64key...], each key 32 random bytes in standard
// base64 (GenerateKey makes one), each id 1 to 32 letters, digits, '_' or
// '-'; the first key seals. Its errors never hold key material.
func ParseKeyring(s string) (*Keyring, error) { return seal.ParseKeyring(s) }

// GenerateKey returns a new random key with the given id, in the text form
// ParseKeyring reads.
func GenerateKey(id string) (string, error) { return seal.GenerateKey(id) }

// Errors of Businesses.
var (
	// ErrNoSuchBusiness is the error for a business the database does not
	// hold.
	ErrNoSuchBusiness = errors.New("pgmirror: no such business")
	// ErrBusinessNotRemoved is Drop's error for a business still served:
	// remove it first.
	ErrBusinessNotRemoved = errors.New("pgmirror: the business is not removed")
)

// Businesses manages the businesses a mirror serves when they are data
// (Config.Keys): every replica's Mirror serves those added and not
// removed, and picks up a change within a second or so (a NOTIFY; at most
// a minute), without a restart. Its methods need a migrated schema (run the
// mirror, or Mirror.Migrate, once first) and are safe for concurrent use.
type Businesses struct {
	db     *pgxpool.Pool
	schema string // quoted
	name   string
	keys   *Keyring
}

// NewBusinesses returns the Businesses of the mirror in schema, through db
// (any pool on the mirror's database), sealing with keys. keys may be nil
// for List, Remove and Drop, which open nothing.
func NewBusinesses(db *pgxpool.Pool, schema string, keys *Keyring) *Businesses {
	return &Businesses{db: db, schema: pgx.Identifier{schema}.Sanitize(), name: schema, keys: keys}
}

// Businesses returns the Businesses of the Mirror's schema, sealing with
// Config.Keys.
func (m *Mirror) Businesses() *Businesses { return NewBusinesses(m.pool, m.cfg.Schema, m.cfg.Keys) }

// A BusinessConfig is what Businesses.Add records for a business.
type BusinessConfig struct {
	// Name names the business in every row of the mirror and in its webhook
	// URL (/webhooks/{name}): letters, digits, '_', '-' and '.', at most 64.
	Name string
	// APIKey is the business's API key. Sealed at rest; never printed.
	APIKey string
	// WebhookSecrets are the secrets of the business's webhook endpoints:
	// the current one first, and while a secret rotates the old one too.
	// At least one. Sealed at rest; never printed.
	WebhookSecrets []string
	// Budget is the business's requests per second to the service, summed
	// over the replicas (DefaultBudget when 0).
	Budget float64
}

// String names the business and its budget, never its key or secrets.
func (c BusinessConfig) String() string {
	return fmt.Sprintf("pgmirror.BusinessConfig{Name: %q, Budget: %g, APIKey: [sealed], WebhookSecrets: [%d sealed]}",
		c.Name, c.Budget, len(c.WebhookSecrets))
}

// GoString is String, for %#v.
func (c BusinessConfig) GoString() string { return c.String() }

// A Business is a business as List shows it: never its key or secrets.
type Business struct {
	Name string
	// Budget is its requests per second.
	Budget float64
	// Secrets is the number of webhook secrets it accepts.
	Secrets int
	// SealedWith is the id of the key its values are sealed with.
	SealedWith string
	AddedAt    time.Time
	UpdatedAt  time.Time
	// RemovedAt is when it was removed; nil while it is served.
	RemovedAt *time.Time
	// PausedUntil and PauseReason: the service refused its key or kept
	// failing its calls; no replica calls the service for it until
	// PausedUntil, then one call tries again, and the pause ends when a
	// call succeeds. Nil and "" when it is not paused.
	PausedUntil *time.Time
	PauseReason string
}

var businessName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// checkBusinessName reports a name Businesses and Config refuse.
func checkBusinessName(name string) error {
	if !businessName.MatchString(name) {
		return fmt.Errorf("pgmirror: business name %q: use letters, digits, '_', '-' and '.' (at most 64)", name)
	}
	return nil
}

// Add records a business, or replaces the key, secrets and budget of one
// recorded (a key or a secret rotated; a removed business is served
// again, with the rows it kept). The key and each secret are checked as the
// SDK and the webhooks package would take them, then sealed with the
// Keyring's current key. A pause of the business ends (a new key mends a
// refused one).
func (b *Businesses) Add(ctx context.Context, c BusinessConfig) error {
	if err := checkBusinessName(c.Name); err != nil {
		return err
	}
	if b.keys == nil || b.keys.Current() == "" {
		return errors.New("pgmirror: Businesses.Add needs a Keyring (" + EnvKeys + ")")
	}
	if c.Budget < 0 {
		return errors.New("pgmirror: negative budget")
	}
	setDefault(&c.Budget, DefaultBudget)
	if len(c.WebhookSecrets) == 0 {
		return errors.New("pgmirror: the business needs at least one webhook secret")
	}
	if _, err := webhooks.NewVerifier(c.WebhookSecrets[0], webhooks.WithSecrets(c.WebhookSecrets[1:]...)); err != nil {
		return fmt.Errorf("pgmirror: the business's webhook secrets: %w", err)
	}
	apiKey, err := checkAPIKey(c.APIKey)
	if err != nil {
		return err
	}
	key, err := b.keys.Seal([]byte(apiKey), sealPlace(c.Name, "api_key"))
	if err != nil {
		return err
	}
	list, _ := json.Marshal(c.WebhookSecrets)
	secrets, err := b.keys.Seal(list, sealPlace(c.Name, "webhook_secrets"))
	if err != nil {
		return err
	}
	return b.change(ctx, func(tx pgx.Tx) (int64, error) {
		if _, err := tx.Exec(ctx, `INSERT INTO `+b.schema+`.mirror_businesses (name, api_key, webhook_secrets, budget) VALUES ($1, $2, $3, $4)
			ON CONFLICT (name) DO UPDATE SET api_key = $2, webhook_secrets = $3, budget = $4, updated_at = clock_timestamp(), removed_at = NULL`,
			c.Name, key, secrets, c.Budget); err != nil {
			return 0, err
		}
		_, err := tx.Exec(ctx, `UPDATE `+b.schema+`.mirror_budgets SET paused_until = NULL, pause_reason = NULL WHERE business = $1`, c.Name)
		return 1, err
	})
}

// Remove stops every replica serving the business: its walks stop, its
// events are no longer fetched, its webhook URL answers 404. Its rows (and
// its change feed) are kept, and Add serves it again; Drop deletes them.
func (b *Businesses) Remove(ctx context.Context, name string) error {
	return b.change(ctx, func(tx pgx.Tx) (int64, error) {
		tag, err := tx.Exec(ctx, `UPDATE `+b.schema+`.mirror_businesses
			SET removed_at = coalesce(removed_at, clock_timestamp()), updated_at = clock_timestamp() WHERE name = $1`, name)
		if err == nil && tag.RowsAffected() == 0 {
			err = fmt.Errorf("%w: %s", ErrNoSuchBusiness, name)
		}
		return tag.RowsAffected(), err
	})
}

// Drop deletes a removed business: its record in mirror_businesses and every
// row the mirror holds for it (records, lines, change feed, queues, state),
// in one transaction. It returns ErrBusinessNotRemoved for a business still
// served.
func (b *Businesses) Drop(ctx context.Context, name string) error {
	return pgx.BeginFunc(ctx, b.db, func(tx pgx.Tx) error {
		var removed *time.Time
		if err := tx.QueryRow(ctx, `SELECT removed_at FROM `+b.schema+`.mirror_businesses WHERE name = $1 FOR UPDATE`, name).
			Scan(&removed); errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: %s", ErrNoSuchBusiness, name)
		} else if err != nil {
			return fmt.Errorf("pgmirror: dropping business %s: %w", name, err)
		}
		if removed == nil {
			return fmt.Errorf("%w: %s (remove it first)", ErrBusinessNotRemoved, name)
		}
		var tables []string
		for _, res := range allResources {
			if res.lines != nil {
				tables = append(tables, res.lines.name)
			}
			tables = append(tables, res.table.name)
		}
		tables = append(tables, "mirror_backfill", "mirror_pending_fetch", "mirror_confirmed", "mirror_reconcile",
			"mirror_changes", "mirror_event_lag", "invoicing_webhook_inbox")
		for _, t := range tables {
			if _, err := tx.Exec(ctx, `DELETE FROM `+b.schema+`.`+t+` WHERE business = $1`, name); err != nil {
				return fmt.Errorf("pgmirror: dropping business %s from %s: %w", name, t, err)
			}
		}
		for _, t := range []string{"mirror_budgets"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+b.schema+`.`+t+` WHERE business = $1`, name); err != nil {
				return fmt.Errorf("pgmirror: dropping business %s from %s: %w", name, t, err)
			}
		}
		_, err := tx.Exec(ctx, `DELETE FROM `+b.schema+`.mirror_businesses WHERE name = $1`, name)
		return err
	})
}

// List returns the businesses recorded, removed ones included, by name.
func (b *Businesses) List(ctx context.Context) ([]Business, error) {
	rows, err := b.db.Query(ctx, `SELECT m.name, m.budget, m.api_key, m.webhook_secrets, m.added_at, m.updated_at, m.removed_at,
			CASE WHEN p.pause_reason IS NOT NULL THEN p.paused_until END, p.pause_reason
		FROM `+b.schema+`.mirror_businesses AS m LEFT JOIN `+b.schema+`.mirror_budgets AS p ON p.business = m.name
		ORDER BY m.name`)
	if err != nil {
		return nil, fmt.Errorf("pgmirror: listing the businesses: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Business, error) {
		var out Business
		var key, secrets []byte
		var reason *string
		if err := r.Scan(&out.Name, &out.Budget, &key, &secrets, &out.AddedAt, &out.UpdatedAt, &out.RemovedAt,
			&out.PausedUntil, &reason); err != nil {
			return out, err
		}
		out.SealedWith, _ = seal.KeyID(key)
		if reason != nil {
			out.PauseReason = *reason
		}
		if b.keys != nil {
			if raw, err := b.keys.Open(secrets, sealPlace(out.Name, "webhook_secrets")); err == nil {
				var list []string
				if json.Unmarshal(raw, &list) == nil {
					out.Secrets = len(list)
				}
			}
		}
		return out, nil
	})
}

// Reseal seals again, with the Keyring's current key, every value sealed
// with another, and returns how many businesses it resealed: the step of
// a key rotation between adding the new key (first) and dropping the old
// one. A value that does not open with the Keyring is reported in the
// error and left alone; the others are still resealed.
func (b *Businesses) Reseal(ctx context.Context) (int, error) {
	if b.keys == nil || b.keys.Current() == "" {
		return 0, errors.New("pgmirror: Businesses.Reseal needs a Keyring (" + EnvKeys + ")")
	}
	rows, err := b.db.Query(ctx, `SELECT name, api_key, webhook_secrets FROM `+b.schema+`.mirror_businesses ORDER BY name`)
	if err != nil {
		return 0, fmt.Errorf("pgmirror: resealing: %w", err)
	}
	type sealed struct {
		name         string
		key, secrets []byte
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sealed, error) {
		var s sealed
		return s, r.Scan(&s.name, &s.key, &s.secrets)
	})
	if err != nil {
		return 0, fmt.Errorf("pgmirror: resealing: %w", err)
	}
	n := 0
	var errs []error
	for _, s := range all {
		if !b.keys.NeedsResealing(s.key) && !b.keys.NeedsResealing(s.secrets) {
			continue
		}
		key, err1 := b.reseal(s.key, sealPlace(s.name, "api_key"))
		secrets, err2 := b.reseal(s.secrets, sealPlace(s.name, "webhook_secrets"))
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, fmt.Errorf("business %s: %w", s.name, err))
			continue
		}
		// Only the sealing changes: updated_at stays, so no replica
		// rebuilds the business.
		if _, err := b.db.Exec(ctx, `UPDATE `+b.schema+`.mirror_businesses SET api_key = $2, webhook_secrets = $3
			WHERE name = $1 AND api_key = $4 AND webhook_secrets = $5`, s.name, key, secrets, s.key, s.secrets); err != nil {
			return n, fmt.Errorf("pgmirror: resealing business %s: %w", s.name, err)
		}
		n++
	}
	return n, errors.Join(errs...)
}

// reseal opens a sealed value and seals it with the current key.
func (b *Businesses) reseal(sealed, place []byte) ([]byte, error) {
	plain, err := b.keys.Open(sealed, place)
	if err != nil {
		return nil, err
	}
	return b.keys.Seal(plain, place)
}

// change runs fn, which changes the businesses, and notifies the replicas,
// in one transaction.
func (b *Businesses) change(ctx context.Context, fn func(tx pgx.Tx) (int64, error)) error {
	return pgx.BeginFunc(ctx, b.db, func(tx pgx.Tx) error {
		if _, err := fn(tx); err != nil {
			if errors.Is(err, ErrNoSuchBusiness) {
				return err
			}
			return fmt.Errorf("pgmirror: changing the businesses: %w", err)
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, businessesChannel(b.name))
		return err
	})
}

// checkAPIKey refuses a key the SDK's WithAPIKey would refuse on every
// call: empty, holding whitespace, or given with its "Bearer " prefix.
func checkAPIKey(key string) (string, error) {
	key = strings.TrimSpace(key)
	switch {
	case key == "":
		return "", errors.New("pgmirror: the business's API key is empty")
	case strings.HasPrefix(strings.ToLower(key), "bearer "):
		return "", errors.New(`pgmirror: give the business's API key without its "Bearer " prefix`)
	case strings.ContainsFunc(key, unicode.IsSpace):
		return "", errors.New("pgmirror: the business's API key holds whitespace")
	}
	return key, nil
}
