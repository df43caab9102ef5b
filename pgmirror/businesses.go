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

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/seal"
	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
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
	ErrNoSuchBusiness = store.ErrNoSuchBusiness
	// ErrBusinessNotRemoved is Drop's error for a business still served:
	// remove it first.
	ErrBusinessNotRemoved = store.ErrBusinessNotRemoved
	// ErrNotReady is Resync's error for a business without a complete copy
	// yet: its backfill is walking it already.
	ErrNotReady = store.ErrNotReady
)

// Businesses manages the businesses a mirror serves when they are data
// (Config.Keys): every replica's Mirror serves those added and not
// removed, and picks up a change within a second or so (a NOTIFY; at most
// a minute), without a restart. Its methods need a migrated schema (run the
// mirror, or Mirror.Migrate, once first) and are safe for concurrent use.
type Businesses struct {
	store *store.Store
	keys  *Keyring
}

// NewBusinesses returns the Businesses of the mirror in schema, through db
// (any pool on the mirror's database), sealing with keys. keys may be nil
// for List, Remove and Drop, which open nothing.
func NewBusinesses(db *pgxpool.Pool, schema string, keys *Keyring) *Businesses {
	return &Businesses{store: store.New(db, schema), keys: keys}
}

// Businesses returns the Businesses of the Mirror's schema, sealing with
// Config.Keys.
func (m *Mirror) Businesses() *Businesses { return &Businesses{store: m.store, keys: m.cfg.Keys} }

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
	// Budget is the ceiling of the business's requests per second to the
	// service, summed over the replicas; 0 (DefaultBudget) for none: the
	// rate adapts (see Config.Budget).
	Budget float64
	// Selection is what the mirror keeps of the business's records (see
	// Selection); the zero Selection keeps everything. A business whose
	// Selection changes has what the mirror holds of it rewritten to the
	// new one, by the first replica that loads it (see Selection).
	Selection Selection
}

// String names the business, its budget and its Selection, never its key
// or secrets.
func (c BusinessConfig) String() string {
	return fmt.Sprintf("pgmirror.BusinessConfig{Name: %q, Budget: %g, Selection: %s, APIKey: [sealed], WebhookSecrets: [%d sealed]}",
		c.Name, c.Budget, c.Selection, len(c.WebhookSecrets))
}

// GoString is String, for %#v.
func (c BusinessConfig) GoString() string { return c.String() }

// A Business is a business as List shows it: never its key or secrets.
type Business struct {
	Name string
	// Budget is the ceiling of its requests per second; 0 for none (the
	// rate adapts).
	Budget float64
	// Selection is what the mirror keeps of its records.
	Selection Selection
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

// Add records a business, or replaces the key, secrets, budget and
// Selection of one recorded (a key or a secret rotated; a removed business
// is served again, with the rows it kept; a changed Selection is applied,
// rewriting what the mirror holds, by the first replica that loads it). The
// key and each secret are checked as the SDK and the webhooks package
// would take them, then sealed with the Keyring's current key. A pause of
// the business ends (a new key mends a refused one).
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
	if err := c.Selection.check(); err != nil {
		return err
	}
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
	selection, err := json.Marshal(c.Selection.normal())
	if err != nil {
		return err
	}
	return b.store.PutBusiness(ctx, c.Name, key, secrets, c.Budget, selection)
}

// Remove stops every replica serving the business: its walks stop, its
// events are no longer fetched, its webhook URL answers 404. Its rows (and
// its change feed) are kept, and Add serves it again; Drop deletes them.
func (b *Businesses) Remove(ctx context.Context, name string) error {
	if err := b.store.RemoveBusiness(ctx, name); errors.Is(err, ErrNoSuchBusiness) {
		return fmt.Errorf("%w: %s", ErrNoSuchBusiness, name)
	} else if err != nil {
		return err
	}
	return nil
}

// Drop deletes a removed business: its record in mirror_businesses and every
// row the mirror holds for it (records, lines, their history, change feed,
// queues, state), in one transaction. It returns ErrBusinessNotRemoved for a business still
// served.
func (b *Businesses) Drop(ctx context.Context, name string) error {
	var tables []string
	for _, res := range allResources {
		tables = append(tables, res.tables()...)
	}
	switch err := b.store.DropBusiness(ctx, name, tables); {
	case errors.Is(err, ErrNoSuchBusiness):
		return fmt.Errorf("%w: %s", ErrNoSuchBusiness, name)
	case errors.Is(err, ErrBusinessNotRemoved):
		return fmt.Errorf("%w: %s (remove it first)", ErrBusinessNotRemoved, name)
	default:
		return err
	}
}

// Resync asks for a fresh walk of the business's resources (all of them
// when none is named; see Resources): the first replica whose walks are
// free makes it, within a second or so, as a reconciliation does (writing
// what differs, marking deleted what the service no longer lists), then
// the request is cleared; status shows it pending (ResyncAt) and running
// (PhaseReconciling). Asked again before it is made, the walks add up. It
// returns ErrNotReady for a business whose first complete copy is not done
// (its backfill walks it), and an error for a resource that is not
// mirrored.
func (b *Businesses) Resync(ctx context.Context, name string, resources ...string) error {
	for _, r := range resources {
		if resourceNamed(r) == nil {
			return fmt.Errorf("pgmirror: no resource %q (see Resources)", r)
		}
	}
	if len(resources) == 0 {
		resources = nil
	}
	if err := b.store.RequestResync(ctx, name, resources); errors.Is(err, ErrNotReady) {
		return fmt.Errorf("%w: %s", ErrNotReady, name)
	} else if err != nil {
		return err
	}
	return nil
}

// List returns the businesses recorded, removed ones included, by name.
func (b *Businesses) List(ctx context.Context) ([]Business, error) {
	rows, err := b.store.ListBusinesses(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Business, len(rows))
	for i, r := range rows {
		out[i] = Business{Name: r.Name, Budget: r.Budget, AddedAt: r.AddedAt, UpdatedAt: r.UpdatedAt, RemovedAt: r.RemovedAt,
			PausedUntil: r.PausedUntil}
		out[i].SealedWith, _ = seal.KeyID(r.APIKey)
		_ = json.Unmarshal(r.Selection, &out[i].Selection) // written by Add
		if r.PauseReason != nil {
			out[i].PauseReason = *r.PauseReason
		}
		if b.keys != nil {
			if raw, err := b.keys.Open(r.Secrets, sealPlace(r.Name, "webhook_secrets")); err == nil {
				var list []string
				if json.Unmarshal(raw, &list) == nil {
					out[i].Secrets = len(list)
				}
			}
		}
	}
	return out, nil
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
	all, err := b.store.Seals(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, s := range all {
		if !b.keys.NeedsResealing(s.APIKey) && !b.keys.NeedsResealing(s.Secrets) {
			continue
		}
		key, err1 := b.reseal(s.APIKey, sealPlace(s.Name, "api_key"))
		secrets, err2 := b.reseal(s.Secrets, sealPlace(s.Name, "webhook_secrets"))
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, fmt.Errorf("business %s: %w", s.Name, err))
			continue
		}
		if err := b.store.Reseal(ctx, s, store.Sealed{APIKey: key, Secrets: secrets}); err != nil {
			return n, err
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
