package pgmirror_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// recentFirst is a proxy in front of the fake that serves GET /invoices
// sorted by last change, most recent first (as a service may), where the
// fake lists in creation order; every other request passes through. Before
// answering each of the first moves list pages after the first, it changes
// the invoice listed last, which moves it to the front, onto a page the walk
// has passed: the page drift that makes a naive walk miss records.
type recentFirst struct {
	srv    *invoicingtest.Server
	clock  *invoicingtest.FakeClock
	pass   http.Handler
	mu     sync.Mutex
	moves  int // pages still to answer with a move
	moved  []string
	listed []listed // the sorted list, until the next move
}

func (p *recentFirst) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.URL.Path != invoicingtest.BasePath+"/invoices" {
		p.pass.ServeHTTP(w, r)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	size, _ := strconv.Atoi(q.Get("page_size"))
	if p.listed == nil {
		p.listed = p.sorted()
	}
	all := p.listed
	if size == 100 && page >= 2 && p.moves > 0 {
		p.moves--
		last := all[len(all)-1]
		p.clock.Advance(time.Second) // a later updated_at than every other invoice
		notes := "moved to the front"
		if err := p.srv.UpdateInvoice(last.ID, invoicingtest.InvoiceUpdate{Notes: &notes}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		p.moved = append(p.moved, last.ID)
		p.listed = p.sorted()
		all = p.listed
	}
	lo, hi := min((page-1)*size, len(all)), min(page*size, len(all))
	var records []json.RawMessage
	for _, rec := range all[lo:hi] {
		records = append(records, rec.raw)
	}
	body, _ := json.Marshal(map[string]any{"invoices": records, "total": len(all), "page": page, "page_size": size, "has_more": hi < len(all)})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

type listed struct {
	ID        string     `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	raw       json.RawMessage
}

// sorted returns the fake's invoices, most recently changed first.
func (p *recentFirst) sorted() []listed {
	var out []listed
	for _, rec := range serviceRecordsRaw(p.srv, "/invoices", "invoices") {
		var l listed
		_ = json.Unmarshal(rec, &l)
		l.raw = rec
		out = append(out, l)
	}
	changed := func(l listed) time.Time {
		if l.UpdatedAt != nil {
			return *l.UpdatedAt
		}
		return l.CreatedAt
	}
	slices.SortStableFunc(out, func(a, b listed) int { return changed(b).Compare(changed(a)) })
	return out
}

// serviceRecordsRaw reads every record of a list of srv as raw JSON.
func serviceRecordsRaw(srv *invoicingtest.Server, path, key string) []json.RawMessage {
	var out []json.RawMessage
	for page := 1; ; page++ {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path+"?page_size=100&page="+strconv.Itoa(page), nil)
		req.Header.Set("Authorization", "Bearer "+srv.FullKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return out
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		var pg struct {
			HasMore bool `json:"has_more"`
		}
		var records map[string]json.RawMessage
		_ = json.Unmarshal(body.Bytes(), &pg)
		_ = json.Unmarshal(body.Bytes(), &records)
		var recs []json.RawMessage
		_ = json.Unmarshal(records[key], &recs)
		out = append(out, recs...)
		if !pg.HasMore {
			return out
		}
	}
}

// A list whose order changes during the walk (records changed meanwhile
// move to pages the walk has passed) makes the first pass miss records; the
// backfill sees that the ids it saw fall short of the total and closes the
// gap with closing passes: from its last page first (nothing new there for
// this list), then a whole walk. No webhook is involved: the walk alone is
// complete.
func TestABackfillSeesPageDriftAndClosesTheGap(t *testing.T) {
	t.Parallel()
	srv, clock := newFake(t)
	seed(t, srv, sizes{invoices: 400}, rand.New(rand.NewPCG(11, 12)))
	target, err := url.Parse(srv.URL)
	require.NoError(t, err)
	proxy := &recentFirst{srv: srv, clock: clock, moves: 2, pass: httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)

	schema := newSchemaName()
	c, err := newClientAt(front.URL+invoicingtest.BasePath, srv.FullKey)
	require.NoError(t, err)
	cfg := testConfig(c, schema)
	cfg.Prefetch = 1
	var logs syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	m := openMirror(t, cfg)
	require.NoError(t, m.Backfill(context.Background()))

	assert.Len(t, proxy.moved, 2)
	db := adminPool(t, schema)
	assert.Equal(t, 3, count(t, db, `SELECT pass FROM mirror_backfill WHERE resource = 'invoices'`))
	assert.Contains(t, logs.String(), `closing pass" business=default resource=invoices rows=398 total=400 pass=2 from_page=4`,
		"the first pass missed the two invoices that moved; the second looks at the last page")
	assert.Contains(t, logs.String(), `closing pass" business=default resource=invoices rows=398 total=400 pass=3 from_page=1`,
		"which found nothing: the third walks the whole list")
	requireMirrorEqual(t, srv, schema)
}
