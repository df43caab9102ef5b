package pgmirror

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
)

// Kinds of a Difference.
const (
	// DiffMissing: the service shows the record; the mirror has no row for
	// it, or has its row marked deleted.
	DiffMissing = "missing"
	// DiffExtra: the mirror has a live row of a record the service no
	// longer shows.
	DiffExtra = "extra"
	// DiffStale: both have the record, with other content.
	DiffStale = "stale"
)

// A Difference is a record whose copy does not equal the service's (see
// Verify).
type Difference struct {
	Business, Resource, ID string
	// Kind is DiffMissing, DiffExtra or DiffStale.
	Kind string
	// Members are the members of the record's JSON that differ (DiffStale).
	Members []string
}

// A Verification is what Verify found.
type Verification struct {
	// Resources are the figures of each business's resources verified, in
	// the order of Resources, business by business.
	Resources []VerifiedResource
	// Differences are the records whose copy differs from the service's,
	// checked twice (see Verify).
	Differences []Difference
	// NotReady names the businesses not verified: their first complete
	// copy is not done (their backfill walks them).
	NotReady []string
	// Requests counts the calls made to the service (list pages and Gets;
	// the SDK's retries of a call not counted).
	Requests int
	// Took is how long the verification took.
	Took time.Duration
}

// A VerifiedResource is one resource of one business as Verify found it.
type VerifiedResource struct {
	Business, Resource string
	// Listed is the number of records the service listed; Differences how
	// many of them (and of the mirror's rows) differ; InFlight how many
	// differed only while an event's fetch was pending, and were equal
	// when checked again.
	Listed, Differences, InFlight int
}

// Equal reports whether no record differs, and every business was
// verified.
func (v *Verification) Equal() bool { return len(v.Differences) == 0 && len(v.NotReady) == 0 }

// Verify compares the copy of business (every business served when "")
// with the service, resource by resource (those named, or every one),
// and writes nothing to the mirror's data: it lists each resource within
// the business's budget (taking its request tokens, as a walk does), and
// compares each record's JSON, as the service sends it, with its row (the
// typed columns and the lines are written from it). A record that differs
// is checked again once the walk is over, with a Get where the service has
// one: a change in flight (an event's fetch pending, or a change made
// during the walk) is then equal, and counted apart (InFlight), not as a
// difference. A business whose first complete copy is not done is not
// verified (NotReady; ErrNotReady when named). It needs the schema
// migrated at SchemaVersion (it migrates nothing), and returns
// ErrNoSuchBusiness for a business it does not serve.
func (m *Mirror) Verify(ctx context.Context, business string, resources ...string) (*Verification, error) {
	start := time.Now()
	if err := m.load(ctx); err != nil {
		return nil, err
	}
	ts := m.tenants.all()
	if business != "" {
		t := m.tenants.named(business)
		if t == nil {
			return nil, fmt.Errorf("%w: %s", ErrNoSuchBusiness, business)
		}
		ts = []*tenant{t}
	}
	var walk []*resource
	for _, name := range resources {
		res := resourceNamed(name)
		if res == nil {
			return nil, fmt.Errorf("pgmirror: no resource %q (see Resources)", name)
		}
		walk = append(walk, res)
	}
	if len(walk) == 0 {
		walk = allResources
	}
	v := &Verification{}
	for _, t := range ts {
		ready, err := m.store.Ready(ctx, t.name)
		switch {
		case err != nil:
			return nil, err
		case !ready && business != "":
			return nil, fmt.Errorf("%w: %s", ErrNotReady, t.name)
		case !ready:
			v.NotReady = append(v.NotReady, t.name)
			continue
		}
		for _, res := range walk {
			if !slices.Contains(t.resources(), res) {
				continue // not mirrored for this business
			}
			if err := t.verify(ctx, res, v); err != nil {
				return v, fmt.Errorf("pgmirror: verifying %s of business %s: %w", res.name, t.name, err)
			}
		}
	}
	v.Took = time.Since(start)
	return v, nil
}

// verify verifies res of the business, adding what it finds to v.
func (t *tenant) verify(ctx context.Context, res *resource, v *Verification) error {
	m := t.m
	var listed []string
	var found []store.Mismatch
	batch := make([]store.Row, 0, m.cfg.BatchSize)
	compare := func() error {
		if len(batch) == 0 {
			return nil
		}
		diff, err := m.store.Compare(ctx, res.table, res.name, t.name, batch)
		found = append(found, diff...)
		batch = batch[:0]
		return err
	}
	for r, err := range t.list(ctx, res, 1) {
		if err != nil {
			return err
		}
		listed = append(listed, r.ID)
		if batch = append(batch, r); len(batch) == cap(batch) {
			if err := compare(); err != nil {
				return err
			}
		}
	}
	if err := compare(); err != nil {
		return err
	}
	v.Requests += max(1, (len(listed)+pageSize-1)/pageSize)
	extra, err := m.store.Extra(ctx, res.table, res.name, t.name, listed)
	if err != nil {
		return err
	}
	fig := VerifiedResource{Business: t.name, Resource: res.name, Listed: len(listed)}
	for _, d := range append(found, extra...) {
		again, err := t.recheck(ctx, res, d, v)
		if err != nil {
			return err
		}
		if again == nil {
			fig.InFlight++
			continue
		}
		kind := DiffStale
		switch {
		case again.Missing:
			kind = DiffMissing
		case again.Extra:
			kind = DiffExtra
		}
		v.Differences = append(v.Differences, Difference{Business: t.name, Resource: res.name, ID: d.ID, Kind: kind, Members: again.Members})
		fig.Differences++
	}
	v.Resources = append(v.Resources, fig)
	return nil
}

// recheck checks a mismatch found by the walk again, now: with a Get where
// the service has one (a 404 is the record gone), else as found. It
// returns nil when the record's copy is equal now.
func (t *tenant) recheck(ctx context.Context, res *resource, d store.Mismatch, v *Verification) (*store.Mismatch, error) {
	if res.get == nil {
		if d.Pending {
			return nil, nil // its fetch will settle it; the list cannot tell more
		}
		return &d, nil
	}
	v.Requests++
	row, err := t.get(ctx, res, d.ID, t.walkOpts)
	switch {
	case apiFailed(err, apiNotFound):
		live, err := t.m.store.Live(ctx, res.table, t.name, d.ID)
		if err != nil || !live {
			return nil, err // gone, and no live row
		}
		return &store.Mismatch{ID: d.ID, Extra: true}, nil
	case apiFailed(err, apiRejected): // an id the service cannot take: as found
		return &d, nil
	case err != nil:
		return nil, err
	}
	diff, err := t.m.store.Compare(ctx, res.table, res.name, t.name, []store.Row{row})
	if err != nil || len(diff) == 0 {
		return nil, err
	}
	return &diff[0], nil
}
