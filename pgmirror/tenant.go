package pgmirror

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// A tenant is the Mirror as one business sees it: the business's name, how
// its calls reach the service (its API key, its budget), and the service as
// its calls find it. Every method that reads the service or writes a
// business's rows runs on a tenant; they share the Mirror's pools and
// loops. A tenant's fields do not change once it is built: a business whose
// key, secrets or budget change gets a new tenant.
type tenant struct {
	*Mirror
	name     string
	log      *slog.Logger              // the Mirror's, naming the business
	key      []invoicing.RequestOption // the business's API key (WithAPIKey); none for the business of Config.Client
	opts     []invoicing.RequestOption // an event's fetch: the key and the budget (WithLimiter)
	walkCall []invoicing.RequestOption // a walk's calls: the key and the budget after the events' reserve
	api      *dependency               // the service, as this business's calls find it
	budget   *budget
	verifier *webhooks.Verifier // nil for the business of Config.Client (Handler takes its Verifier)

	static   bool         // the business of Config.Client: its failures that waiting cannot mend stop the mirror
	failures atomic.Int64 // its walks' failures in a row, for pauseFailed's backoff

	life context.Context // ends when the business is removed or replaced (end)
	end  context.CancelFunc
}

// newTenant returns the tenant of business name, whose calls use key (its
// WithAPIKey; none for the business of Config.Client) and its budget.
func (m *Mirror) newTenant(name string, budgetPerSecond float64, key ...invoicing.RequestOption) *tenant {
	log := m.log.With("business", name)
	t := &tenant{Mirror: m, name: name, key: key, log: log, api: newDependency("the API", log)}
	t.life, t.end = context.WithCancel(context.Background())
	t.budget = newBudget(t, budgetPerSecond)
	t.opts = append(slices.Clip(key), invoicing.WithLimiter(t.budget.events))
	t.walkCall = append(slices.Clip(key), invoicing.WithLimiter(t.budget.walks))
	return t
}

// listOpts are the options of a walk's List: walkOpts and the prefetch.
func (m *tenant) listOpts() []invoicing.ListOption {
	out := []invoicing.ListOption{invoicing.WithPrefetch(m.cfg.Prefetch)}
	for _, o := range m.walkCall {
		out = append(out, o)
	}
	return out
}

// walkOpts are the options of a walk's single calls (its totals, the Gets
// of a reconciliation): the business's key, and its budget after the
// events' reserve (see budget).
func (m *tenant) walkOpts() []invoicing.RequestOption { return m.walkCall }

// Pauses of a business whose calls fail (see pauseFailed).
const (
	// refusedPause is how long a business whose key the service refuses
	// (401, 403) is paused before it is tried again: Businesses.Add with a
	// new key ends the pause at once.
	refusedPause = 15 * time.Minute
	// massDeletionPause is how long a business whose records mostly
	// vanished (ErrMassDeletion) is paused: until someone looks.
	massDeletionPause = 24 * time.Hour
)

// pauseFailed pauses the business after err, a failure of one of its calls
// that its walk or fetch could not wait out without holding up the other
// businesses: every replica skips the business until the pause ends (see
// budget). The service away for it (a 429 storm, 5xx, a network failure)
// pauses it with backoff (apiWait), logged once by its API dependency; a
// refusal (401, 403) pauses it refusedPause, a mass deletion
// massDeletionPause, both logged at Error. The business of Config.Client
// is never paused: its loops wait in place, as they did before businesses.
func (m *tenant) pauseFailed(ctx context.Context, err error) {
	if m.static { // no other business to make way for: its loops back off in place
		if !permanent(err) {
			m.failures.Add(1)
			m.api.failed(ctx, err)
		}
		return
	}
	var d time.Duration
	reason := oneLine(err)
	switch {
	case errors.Is(err, ErrMassDeletion):
		d = massDeletionPause
		m.log.ErrorContext(ctx, "pgmirror: most of a business's records vanished; the business is paused",
			"for", d.String(), "error", reason)
	case permanent(err):
		d = refusedPause
		reason = "the service refused the business's requests (check its API key): " + reason
		m.log.ErrorContext(ctx, "pgmirror: the service refused a business's requests; the business is paused",
			"for", d.String(), "error", oneLine(err))
	default:
		n := int(m.failures.Add(1))
		d = apiWait(n, err)
		m.api.failed(ctx, err)
	}
	if perr := m.budget.pause(ctx, d, reason); perr != nil {
		m.databaseFailed(ctx, perr, "pgmirror: pausing a business", "business", m.name)
	}
}

// answered records that a call of the business succeeded: a pause ends.
func (m *tenant) answered(ctx context.Context) {
	if m.failures.Swap(0) > 0 || m.budget.failing.Load() {
		if err := m.budget.resume(ctx); err != nil {
			m.databaseFailed(ctx, err, "pgmirror: ending a business's pause", "business", m.name)
		}
	}
	m.api.ok(ctx)
}

// refused reports whether err is the service refusing the business's key or
// its rights (401, 403): waiting does not mend it, a new key does.
func refused(err error) bool {
	var apiErr *invoicing.Error
	return errors.As(err, &apiErr) && (apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden)
}
