package pgmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// A tenant is what one business owns: its name, how its calls reach the
// service (its API key, its budget), the service as its calls find it, and
// its life; m is the runtime every business shares (pools, loops, store).
// A tenant's fields do not change once it is built: a business whose key,
// secrets or budget change gets a new tenant. The business of
// Config.Client is a fleet of one: a tenant like any other, but for stops.
type tenant struct {
	m         *Mirror
	name      string
	log       *slog.Logger              // the Mirror's, naming the business
	key       []invoicing.RequestOption // the business's API key (WithAPIKey); none for the business of Config.Client
	fetchOpts []invoicing.RequestOption // an event's fetch: the key and the budget (WithLimiter)
	walkOpts  []invoicing.RequestOption // a walk's single calls: the key and the budget after the events' reserve
	listOpts  []invoicing.ListOption    // a walk's lists: walkOpts and the prefetch
	api       *dependency               // the service, as this business's calls find it
	budget    *budget
	verifier  *webhooks.Verifier // nil for the business of Config.Client (Handler takes its Verifier)
	// stops is true for the business of Config.Client: a failure waiting
	// cannot mend (a refused key, ErrMassDeletion) stops the mirror rather
	// than pausing the business, and Run checks its key before it creates
	// anything, and its tables against another business at startup.
	stops    bool
	failures atomic.Int64 // its work's failures in a row, for its pauses' backoff

	// want is what the business's Selection is; applied applies it, once
	// applied to the business (selection); nil until then, and once
	// another was applied (outdated). appliedOnce is true once a Selection
	// was applied (see applySelection).
	want        Selection
	selMu       sync.Mutex
	applied     *applied
	appliedOnce bool

	life context.Context // ends when the business is removed or replaced (end)
	end  context.CancelFunc
}

// newTenant returns the tenant of business name, whose calls use key (its
// WithAPIKey; none for the business of Config.Client) and its budget, and
// whose data is kept as want says.
func (m *Mirror) newTenant(name string, budgetPerSecond float64, want Selection, key ...invoicing.RequestOption) *tenant {
	log := m.log.With("business", name)
	t := &tenant{m: m, name: name, key: key, log: log, api: newDependency("the API", log), want: want}
	t.life, t.end = context.WithCancel(context.Background())
	t.budget = newBudget(m.store, name, budgetPerSecond, m.cfg.BudgetTotal)
	t.fetchOpts = append(slices.Clip(key), invoicing.WithLimiter(t.budget.events))
	t.walkOpts = append(slices.Clip(key), invoicing.WithLimiter(t.budget.walks))
	t.listOpts = []invoicing.ListOption{invoicing.WithPrefetch(m.cfg.Prefetch)}
	for _, o := range t.walkOpts {
		t.listOpts = append(t.listOpts, o)
	}
	return t
}

// selection returns the business's Selection as applied, applying it
// first (see applySelection) unless done.
func (t *tenant) selection(ctx context.Context) (*applied, error) {
	t.selMu.Lock()
	defer t.selMu.Unlock()
	if t.applied == nil {
		a, err := t.m.applySelection(ctx, t)
		if err != nil {
			return nil, err
		}
		t.applied = a
	}
	return t.applied, nil
}

// outdated forgets the business's Selection as applied unless it is the
// one recorded, applied at recorded: the next call of selection reads
// the one recorded.
func (t *tenant) outdated(recorded time.Time) {
	t.selMu.Lock()
	defer t.selMu.Unlock()
	if t.applied != nil && !t.applied.at.Equal(recorded) {
		t.applied = nil
	}
}

// resources returns the resources the business mirrors, in the order
// they are walked.
func (t *tenant) resources() []*resource { return t.want.resources() }

// list walks the business's records of res from page start, as its
// Selection keeps them.
func (t *tenant) list(ctx context.Context, res *resource, start int) iter.Seq2[store.Row, error] {
	return func(yield func(store.Row, error) bool) {
		a, err := t.selection(ctx)
		if err != nil {
			yield(store.Row{}, err)
			return
		}
		for r, err := range res.list(ctx, t.m.cfg.Client, start, t.listOpts...) {
			if err == nil {
				err = a.row(res, &r)
			}
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// get fetches the business's record id of res with opts, as its Selection
// keeps it.
func (t *tenant) get(ctx context.Context, res *resource, id string, opts []invoicing.RequestOption) (store.Row, error) {
	a, err := t.selection(ctx)
	if err != nil {
		return store.Row{}, err
	}
	r, err := res.get(ctx, t.m.cfg.Client, id, opts...)
	if err != nil {
		return r, err
	}
	return r, a.row(res, &r)
}

// answered records that a call of the business succeeded: its failures in
// a row end, and so does its pause.
func (t *tenant) answered(ctx context.Context) {
	if t.failures.Swap(0) > 0 || t.budget.failing.Load() {
		if err := t.budget.resume(ctx); err != nil {
			t.m.failed(ctx, t, "ending a business's pause", err, 1)
		}
	}
	t.api.ok(ctx, time.Time{})
}

// pause stops every replica's calls for the business until d from now,
// for reason (one line, no secret), unless it is paused longer already.
// Before the schema is migrated there is no pause to record: the caller's
// wait is all.
func (t *tenant) pause(ctx context.Context, d time.Duration, reason string) {
	if !t.m.migrated.Load() {
		return
	}
	if err := t.budget.pause(ctx, d, reason); err != nil {
		t.m.failed(ctx, t, "pausing a business", err, 1)
	}
}

// tenants are the businesses a Mirror serves, by name. Safe for concurrent
// use.
type tenants struct {
	mu     sync.RWMutex
	byName map[string]*tenant
	list   []*tenant // sorted by name
	// loadMu makes loads (Migrate's, the watcher's) one at a time; only
	// they read and write these.
	loadMu   sync.Mutex
	loaded   map[string]time.Time // the updated_at each tenant was built from (with Config.Keys)
	failed   map[string]time.Time // businesses whose sealed values did not open, by updated_at: logged once
	unopened map[string]error     // and why, for CheckBusinesses
}

func newTenants() *tenants {
	return &tenants{byName: map[string]*tenant{}, loaded: map[string]time.Time{}, failed: map[string]time.Time{}, unopened: map[string]error{}}
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

// all returns the businesses served, sorted by name.
func (s *tenants) all() []*tenant {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list
}

// named returns the business called name, or nil when it is not served.
func (s *tenants) named(name string) *tenant {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byName[name]
}

// names returns the names of ts.
func names(ts []*tenant) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.name
	}
	return out
}

// verifierOf is BusinessHandler's VerifierFunc: the Verifier of a business
// the Mirror serves, webhooks.ErrUnknownBusiness for another name.
func (m *Mirror) verifierOf(_ context.Context, business string) (*webhooks.Verifier, error) {
	t := m.tenants.named(business)
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
	s := m.tenants
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	all, err := m.store.ActiveBusinesses(ctx)
	if err != nil {
		return err
	}
	var next, ended []*tenant
	var added, removed []string
	for name := range s.unopened {
		if !slices.ContainsFunc(all, func(b store.Sealed) bool { return b.Name == name }) {
			delete(s.unopened, name) // removed
		}
	}
	for _, b := range all {
		old := s.named(b.Name)
		if old != nil && s.loaded[b.Name].Equal(b.UpdatedAt) {
			next = append(next, old)
			continue
		}
		if old != nil {
			ended = append(ended, old)
		}
		t, err := m.openTenant(b)
		if err == nil {
			_, err = t.selection(ctx)
		}
		var dbErr *store.Error
		if errors.As(err, &dbErr) || errors.Is(err, errStaleSelection) {
			return err // the database's, or changed meanwhile: the next load tries again
		}
		if err != nil {
			s.unopened[b.Name] = err
			if !s.failed[b.Name].Equal(b.UpdatedAt) {
				s.failed[b.Name] = b.UpdatedAt
				m.log.ErrorContext(ctx, "pgmirror: cannot open a business's sealed API key or webhook secrets; it is not served",
					"business", b.Name, "error", err.Error())
			}
			continue
		}
		delete(s.failed, b.Name)
		delete(s.unopened, b.Name)
		s.loaded[b.Name] = b.UpdatedAt
		next = append(next, t)
		added = append(added, b.Name)
	}
	for _, t := range s.all() {
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

// openTenant builds the tenant of a business from its sealed values.
func (m *Mirror) openTenant(b store.Sealed) (*tenant, error) {
	key, err := m.cfg.Keys.Open(b.APIKey, sealPlace(b.Name, "api_key"))
	if err != nil {
		return nil, err
	}
	raw, err := m.cfg.Keys.Open(b.Secrets, sealPlace(b.Name, "webhook_secrets"))
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
	var want Selection
	if err := json.Unmarshal(b.Selection, &want); err != nil {
		return nil, fmt.Errorf("pgmirror: the business's selection: %w", err)
	}
	t := m.newTenant(b.Name, b.Budget, want, invoicing.WithAPIKey(string(key)))
	t.verifier = v
	return t, nil
}

// sealPlace is the additional data a business's sealed value is bound to:
// a value copied to another business or field does not open. A business's
// name holds no NUL (checkBusinessName).
func sealPlace(business, field string) []byte {
	return []byte("pgmirror\x00" + business + "\x00" + field)
}

// watchBusinesses is the step of the loop that keeps the served businesses
// current (with Config.Keys): it listens for Businesses' notifications,
// reloads the businesses, and waits for a notification, at most a minute
// (in case one was missed while the database was away). Each step listens
// before it loads, so that no change is missed between two steps.
func (m *Mirror) watchBusinesses(ctx context.Context) (time.Duration, error) {
	l, err := m.store.Listen(ctx, store.BusinessesChannel(m.cfg.Schema))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	if err := m.loadBusinesses(ctx); err != nil {
		return 0, err
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := l.Wait(wctx); err != nil && !errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return 0, err
	}
	return 0, nil
}
