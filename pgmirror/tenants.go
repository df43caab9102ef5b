package pgmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// tenants are the businesses a Mirror serves, by name. Safe for concurrent
// use.
type tenants struct {
	mu     sync.RWMutex
	byName map[string]*tenant
	list   []*tenant // sorted by name
	// loadMu makes loadBusinesses (Migrate's, the watcher's) one at a
	// time; only it reads and writes these.
	loadMu sync.Mutex
	loaded map[string]time.Time // the updated_at each tenant was built from (with Config.Keys)
	failed map[string]time.Time // businesses whose sealed values did not open, by updated_at: logged once
}

// businessSeals is what a business's tenant was built from.
type businessSeals struct {
	apiKey, secrets []byte
	budget          float64
}

func newTenants() *tenants {
	return &tenants{byName: map[string]*tenant{}, loaded: map[string]time.Time{}, failed: map[string]time.Time{}}
}

// set replaces the tenants with ts.
func (s *tenants) set(ts []*tenant) {
	slices.SortFunc(ts, func(a, b *tenant) int { return strings.Compare(a.name, b.name) })
	byName := make(map[string]*tenant, len(ts))
	for _, t := range ts {
		byName[t.name] = t
	}
	s.mu.Lock()
	s.list, s.byName = ts, byName
	s.mu.Unlock()
}

// tenantList returns the businesses the Mirror serves, sorted by name.
func (m *Mirror) tenantList() []*tenant {
	m.tenants.mu.RLock()
	defer m.tenants.mu.RUnlock()
	return m.tenants.list
}

// tenant returns the business called name, or nil when the Mirror does not
// serve it.
func (m *Mirror) tenant(name string) *tenant {
	m.tenants.mu.RLock()
	defer m.tenants.mu.RUnlock()
	return m.tenants.byName[name]
}

// static returns the business of Config.Client, or nil with Config.Keys.
func (m *Mirror) static() *tenant {
	if m.cfg.Keys != nil {
		return nil
	}
	return m.tenantList()[0]
}

// verifierOf is BusinessHandler's VerifierFunc: the Verifier of a business
// the Mirror serves, webhooks.ErrUnknownBusiness for another name.
func (m *Mirror) verifierOf(_ context.Context, business string) (*webhooks.Verifier, error) {
	t := m.tenant(business)
	if t == nil || t.verifier == nil {
		return nil, webhooks.ErrUnknownBusiness
	}
	return t.verifier, nil
}

// loadBusinesses reads the businesses of the database (Config.Keys) and
// serves those not removed: a business new or changed (its key, secrets or
// budget) gets a new tenant, whose budget and API dependency start afresh;
// a business removed stops being served (its walks in progress end at
// their next call to the service, its pending fetches wait). A business
// whose sealed values do not open (a key missing from Config.Keys, a
// corrupt value) is logged once at Error and not served.
func (m *Mirror) loadBusinesses(ctx context.Context) error {
	m.tenants.loadMu.Lock()
	defer m.tenants.loadMu.Unlock()
	rows, err := m.pool.Query(ctx, `SELECT name, api_key, webhook_secrets, budget, updated_at
		FROM mirror_businesses WHERE removed_at IS NULL ORDER BY name`)
	if err != nil {
		return fmt.Errorf("pgmirror: reading the businesses: %w", err)
	}
	type stored struct {
		name    string
		seals   businessSeals
		updated time.Time
	}
	var all []stored
	var st stored
	if _, err := pgx.ForEachRow(rows, []any{&st.name, &st.seals.apiKey, &st.seals.secrets, &st.seals.budget, &st.updated}, func() error {
		all = append(all, st)
		return nil
	}); err != nil {
		return fmt.Errorf("pgmirror: reading the businesses: %w", err)
	}
	s := m.tenants
	var next, ended []*tenant
	var added, removed []string
	for _, b := range all {
		if t := m.tenant(b.name); t != nil && s.loaded[b.name].Equal(b.updated) {
			next = append(next, t)
			continue
		}
		if old := m.tenant(b.name); old != nil {
			ended = append(ended, old)
		}
		t, err := m.openTenant(b.name, b.seals)
		if err != nil {
			if !s.failed[b.name].Equal(b.updated) {
				s.failed[b.name] = b.updated
				m.log.ErrorContext(ctx, "pgmirror: cannot open a business's sealed API key or webhook secrets; it is not served",
					"business", b.name, "error", err.Error())
			}
			continue
		}
		delete(s.failed, b.name)
		s.loaded[b.name] = b.updated
		next = append(next, t)
		added = append(added, b.name)
	}
	for _, t := range m.tenantList() {
		if !slices.ContainsFunc(next, func(n *tenant) bool { return n.name == t.name }) {
			delete(s.loaded, t.name)
			removed = append(removed, t.name)
			ended = append(ended, t)
		}
	}
	if len(added)+len(removed) > 0 {
		s.set(next)
		for _, t := range ended {
			t.end() // its walk in progress stops at its next call or batch
		}
		m.log.InfoContext(ctx, "pgmirror: businesses loaded", "serving", len(next), "added_or_changed", len(added), "removed", len(removed))
	}
	return nil
}

// openTenant builds the tenant of business name from its sealed values.
func (m *Mirror) openTenant(name string, b businessSeals) (*tenant, error) {
	key, err := m.cfg.Keys.Open(b.apiKey, sealPlace(name, "api_key"))
	if err != nil {
		return nil, err
	}
	raw, err := m.cfg.Keys.Open(b.secrets, sealPlace(name, "webhook_secrets"))
	if err != nil {
		return nil, err
	}
	var secrets []string
	if err := json.Unmarshal(raw, &secrets); err != nil || len(secrets) == 0 {
		return nil, errors.New("pgmirror: the webhook secrets do not hold a list of secrets")
	}
	v, err := webhooks.NewVerifier(secrets[0], append(slices.Clip(m.cfg.WebhookOptions), webhooks.WithSecrets(secrets[1:]...))...)
	if err != nil {
		return nil, fmt.Errorf("pgmirror: the webhook secret: %w", err)
	}
	t := m.newTenant(name, b.budget, invoicing.WithAPIKey(string(key)))
	t.verifier = v
	return t, nil
}

// sealPlace is the additional data a business's sealed value is bound to:
// a value copied to another business or field does not open. A business's
// name holds no NUL (checkBusinessName).
func sealPlace(business, field string) []byte {
	return []byte("pgmirror\x00" + business + "\x00" + field)
}

// businessesChannel is the channel Businesses notifies when the businesses
// of the mirror in schema change (pg_notify's argument; LISTEN takes it
// quoted).
func businessesChannel(schema string) string { return "pgmirror_businesses_" + schema }

// watchBusinesses keeps the served businesses current until ctx ends:
// it reloads them when Businesses notifies a change (LISTEN), and every
// minute in case a notification was missed (while the database was away).
func (m *Mirror) watchBusinesses(ctx context.Context) {
	for n := 1; ctx.Err() == nil; n++ {
		err := m.listenBusinesses(ctx)
		if ctx.Err() != nil {
			return
		}
		if m.databaseAway(err) {
			m.db.failed(ctx, err)
		} else if err != nil {
			m.log.ErrorContext(ctx, "pgmirror: watching the businesses", "error", oneLine(err))
		}
		m.db.sleep(ctx, retryWait(n))
	}
}

// listenBusinesses is one connection's watch (see watchBusinesses).
func (m *Mirror) listenBusinesses(ctx context.Context) error {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer unlisten(conn)
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{businessesChannel(m.cfg.Schema)}.Sanitize()); err != nil {
		return err
	}
	for {
		if err := m.loadBusinesses(ctx); err != nil {
			return err
		}
		m.db.ok(ctx)
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		_, err := conn.Conn().WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
}
