package pgmirror_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/invoicingtest"
	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// multiMirror is a mirror serving the businesses of the database, with
// its webhook endpoint served at URL+"/webhooks/{business}".
type multiMirror struct {
	*pgmirror.Mirror
	URL    string
	Schema string
	Keys   *pgmirror.Keyring
	DB     *pgxpool.Pool
}

// newKeyText returns a new key id, in the text form of EnvKeys.
func newKeyText(t testing.TB, id string) string {
	t.Helper()
	k, err := pgmirror.GenerateKey(id)
	require.NoError(t, err)
	return k
}

// keyring parses the text form of a Keyring.
func keyring(t testing.TB, items ...string) *pgmirror.Keyring {
	t.Helper()
	keys, err := pgmirror.ParseKeyring(strings.Join(items, ","))
	require.NoError(t, err)
	return keys
}

// newMultiMirror opens a mirror of f's businesses (none added yet) in a
// new schema, sealing with keys, and serves its BusinessHandler.
func newMultiMirror(t testing.TB, f *fleet, keys *pgmirror.Keyring, edit func(*pgmirror.Config)) *multiMirror {
	t.Helper()
	return newTracedMultiMirror(t, f, keys, edit, nil)
}

// newTracedMultiMirror is newMultiMirror with tracer (nil for none)
// tracing the mirror's statements.
func newTracedMultiMirror(t testing.TB, f *fleet, keys *pgmirror.Keyring, edit func(*pgmirror.Config), tracer pgx.QueryTracer) *multiMirror {
	t.Helper()
	schema := newSchemaName()
	m, url := serveBusinesses(t, f, schema, keys, tracer, edit)
	return &multiMirror{Mirror: m, URL: url, Schema: schema, Keys: keys, DB: adminPool(t, schema)}
}

// serveBusinesses opens a mirror of f's businesses in schema, sealing with
// keys, its statements traced by tracer (nil for none) and its Config
// changed by each edit (nil for none), and serves its BusinessHandler. It
// returns the mirror and its webhook base URL.
func serveBusinesses(t testing.TB, f *fleet, schema string, keys *pgmirror.Keyring, tracer pgx.QueryTracer,
	edit ...func(*pgmirror.Config)) (*pgmirror.Mirror, string) {
	t.Helper()
	cfg := testConfig(f.Client(t), schema)
	cfg.Keys = keys
	cfg.WebhookOptions = []webhooks.Option{webhooks.WithClock(f.Clock.Now)}
	for _, e := range edit {
		if e != nil {
			e(&cfg)
		}
	}
	m := openTracedMirror(t, cfg, tracer)
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{business}", m.BusinessHandler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return m, hs.URL
}

// secretOf is the webhook secret of business name: 64 hex characters.
func secretOf(name string) string {
	sum := sha256.Sum256([]byte("secret of " + name))
	return hex.EncodeToString(sum[:])
}

// replica opens another Mirror on mm's schema (a replica, with its own
// pools and webhook server; each edit changes its Config), run until the
// test ends, and returns its webhook base URL.
func (mm *multiMirror) replica(t testing.TB, f *fleet, edit ...func(*pgmirror.Config)) string {
	t.Helper()
	m, url := mm.open(t, f, edit...)
	run(t, m)
	return url
}

// open is replica without running it: a replica that has migrated and
// serves its webhook endpoints, and does nothing else.
func (mm *multiMirror) open(t testing.TB, f *fleet, edit ...func(*pgmirror.Config)) (*pgmirror.Mirror, string) {
	t.Helper()
	return serveBusinesses(t, f, mm.Schema, mm.Keys, nil, edit...)
}

// add adds the fleet's business b to the mirror, and subscribes b's
// webhooks to the mirror's URL for it.
func (mm *multiMirror) add(t testing.TB, b *fleetBusiness, budget float64) *invoicingtest.WebhookEndpoint {
	t.Helper()
	require.NoError(t, mm.Businesses().Add(context.Background(), pgmirror.BusinessConfig{
		Name: b.Name, APIKey: b.Key, WebhookSecrets: []string{secretOf(b.Name)}, Budget: budget}))
	return b.Subscribe(mm.URL+"/webhooks/"+b.Name, secretOf(b.Name))
}

// requireBusinessEqual fails t unless the mirror's rows of b equal b's
// records on the service.
func requireBusinessEqual(t testing.TB, f *fleet, mm *multiMirror, b *fleetBusiness) int {
	t.Helper()
	diffs, n := compareScope(t, scope{URL: f.URL, Key: b.Key, Business: b.Name}, mm.DB)
	if len(diffs) > 20 {
		diffs = diffs[:20]
	}
	require.Empty(t, diffs, "business %s differs from the service", b.Name)
	return n
}

// waitBusinessBackfilled waits until every resource of business is
// backfilled.
func waitBusinessBackfilled(t testing.TB, mm *multiMirror, business string, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, func() (bool, string) {
		n := count(t, mm.DB, `SELECT count(*) FROM mirror_backfill WHERE business = $1 AND completed_at IS NOT NULL`, business)
		return n == len(pgmirror.Resources()), business + "'s backfill"
	})
}

// Businesses are data: added, served at their own URL with their own key
// and secrets, sealed at rest, picked up by a running mirror without a
// restart, removed (their rows kept, their URL 404), dropped, and their
// sealing key rotated.
func TestBusinessesAreDataSealedAndServedLive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t, 3, withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, 30) }))
	acme, globex, initech := f.Businesses[0], f.Businesses[1], f.Businesses[2]
	k1 := newKeyText(t, "k1")
	keys := keyring(t, k1)
	mm := newMultiMirror(t, f, keys, nil)
	mm.add(t, acme, 0)
	globexHooks := mm.add(t, globex, 0)
	run(t, mm.Mirror)
	other := mm.replica(t, f) // a second replica: changes reach it too, without a restart
	waitBusinessBackfilled(t, mm, acme.Name, 30*time.Second)
	waitBusinessBackfilled(t, mm, globex.Name, 30*time.Second)
	requireBusinessEqual(t, f, mm, acme)
	requireBusinessEqual(t, f, mm, globex)

	// Sealed at rest: neither the key nor a secret is in the table.
	for _, secret := range []string{acme.Key, secretOf(acme.Name), globex.Key} {
		assert.Zero(t, count(t, mm.DB, `SELECT count(*) FROM mirror_businesses
			WHERE position($1::bytea IN api_key) > 0 OR position($1::bytea IN webhook_secrets) > 0`, []byte(secret)))
	}
	list, err := mm.Businesses().List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "k1", list[0].SealedWith)
	assert.Equal(t, 1, list[0].Secrets)
	assert.Equal(t, pgmirror.DefaultBudget, list[0].Budget)
	assert.NotContains(t, strings.Join([]string{list[0].Name, list[0].PauseReason}, " "), acme.Key)

	// A business added to a running mirror is served without a restart.
	mm.add(t, initech, 0)
	waitBusinessBackfilled(t, mm, initech.Name, 30*time.Second)
	waitUntil(t, 10*time.Second, func() (bool, string) {
		return postSigned(t, other+"/webhooks/"+initech.Name, secretOf(initech.Name), testBody, f.Clock.Now()) == http.StatusOK,
			"the other replica serves initech"
	})
	requireBusinessEqual(t, f, mm, initech)

	// Events land under their own business only.
	inv := createInvoice(t, businessClient(t, f, globex), invoicing.InvoiceStatusDraft, 2)
	waitUntil(t, 20*time.Second, func() (bool, string) {
		return count(t, mm.DB, `SELECT count(*) FROM invoice_lines WHERE business = $1 AND invoice_id = $2`, globex.Name, inv.ID) == 2, "the event's invoice"
	})
	assert.Equal(t, 2, count(t, mm.DB, `SELECT count(*) FROM invoice_lines WHERE invoice_id = $1`, inv.ID), "under globex only")

	// A delivery signed with acme's secret is refused on globex's URL.
	body := testBody
	assert.Equal(t, http.StatusUnauthorized, postSigned(t, mm.URL+"/webhooks/"+globex.Name, secretOf(acme.Name), body, f.Clock.Now()))
	assert.Equal(t, http.StatusOK, postSigned(t, mm.URL+"/webhooks/"+globex.Name, secretOf(globex.Name), body, f.Clock.Now()))
	assert.Equal(t, http.StatusNotFound, postSigned(t, mm.URL+"/webhooks/nobody", secretOf(acme.Name), body, f.Clock.Now()))

	// Removed: not served (its URL 404, its events not fetched), its rows kept.
	rows := count(t, mm.DB, `SELECT count(*) FROM invoices WHERE business = $1`, globex.Name)
	require.NoError(t, mm.Businesses().Remove(ctx, globex.Name))
	for _, url := range []string{mm.URL, other} {
		waitUntil(t, 10*time.Second, func() (bool, string) {
			return postSigned(t, url+"/webhooks/"+globex.Name, secretOf(globex.Name), body, f.Clock.Now()) == http.StatusNotFound,
				"globex's URL answers 404 on " + url
		})
	}
	inv = createInvoice(t, businessClient(t, f, globex), invoicing.InvoiceStatusDraft, 1)
	waitUntil(t, 10*time.Second, func() (bool, string) { // its event is refused, so nothing can come of it
		for _, d := range globexHooks.Deliveries() {
			if strings.Contains(string(d.Body), inv.ID) && len(d.Attempts) > 0 {
				return d.Attempts[0].StatusCode == http.StatusNotFound, "the event of the invoice answered 404"
			}
		}
		return false, "the event of the invoice delivered"
	})
	assert.Equal(t, rows, count(t, mm.DB, `SELECT count(*) FROM invoices WHERE business = $1`, globex.Name), "kept, and nothing new")
	assert.ErrorIs(t, mm.Businesses().Drop(ctx, acme.Name), pgmirror.ErrBusinessNotRemoved)
	require.NoError(t, mm.Businesses().Drop(ctx, globex.Name))
	assert.Zero(t, count(t, mm.DB, `SELECT count(*) FROM invoices WHERE business = $1`, globex.Name))
	assert.Zero(t, count(t, mm.DB, `SELECT count(*) FROM mirror_changes WHERE business = $1`, globex.Name))
	for _, table := range tablesWithBusiness(t, mm.DB, mm.Schema) { // every table: the history, the selection's too
		assert.Zero(t, count(t, mm.DB, `SELECT count(*) FROM `+table+` WHERE business = $1`, globex.Name), "rows of %s", table)
	}
	requireBusinessEqual(t, f, mm, acme)
	assert.ErrorIs(t, mm.Businesses().Remove(ctx, globex.Name), pgmirror.ErrNoSuchBusiness)

	// Rotation: a new key first, reseal, and a replica holding only the new
	// key serves every business.
	k2 := newKeyText(t, "k2")
	rotated := keyring(t, k2)
	n, err := pgmirror.NewBusinesses(mm.Pool(), mm.Schema, keyring(t, k2, k1)).Reseal(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	list, err = pgmirror.NewBusinesses(mm.Pool(), mm.Schema, rotated).List(ctx)
	require.NoError(t, err)
	for _, b := range list {
		assert.Equal(t, "k2", b.SealedWith, b.Name)
		assert.Equal(t, 1, b.Secrets, "opened with the new key alone")
	}

	// A sealed value copied to another business does not open there.
	_, err = mm.DB.Exec(ctx, `UPDATE mirror_businesses SET api_key = (SELECT api_key FROM mirror_businesses WHERE name = $1),
		updated_at = now() WHERE name = $2`, acme.Name, initech.Name)
	require.NoError(t, err)
	_, err = mm.DB.Exec(ctx, `SELECT pg_notify($1, '')`, "pgmirror_businesses_"+mm.Schema)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() (bool, string) {
		return postSigned(t, mm.URL+"/webhooks/"+initech.Name, secretOf(initech.Name), body, f.Clock.Now()) == http.StatusNotFound,
			"initech not served"
	})
}

// testBody is the body of a test delivery.
var testBody = []byte(`{"event":"test","timestamp":"2026-03-02T09:00:00Z","message":"hello","business_id":"b"}`)

// businessClient is an SDK client of business b of f.
func businessClient(t testing.TB, f *fleet, b *fleetBusiness) *invoicing.Client {
	t.Helper()
	c, err := newClientAt(f.URL, b.Key)
	require.NoError(t, err)
	return c
}

// postSigned posts body, a test delivery, to url signed with secret at time
// at, as the service signs a delivery, and returns the status.
func postSigned(t testing.TB, url, secret string, body []byte, at time.Time) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	req.Header.Set("X-Service-Event", "test")
	req.Header.Set("X-Service-Delivery", fmt.Sprintf("d-%d", time.Now().UnixNano()))
	req.Header.Set("X-Service-Timestamp", ts)
	req.Header.Set("X-Service-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// invoicing-mirror businesses manages businesses, and never prints a key,
// a secret or the keyring, whatever it is asked and however it fails.
func TestTheBusinessesCommandPrintsNoSecret(t *testing.T) {
	t.Parallel()
	schema := newSchemaName()
	apiKey, secret := "sk_live_that_must_not_show_"+strings.Repeat("7", 20), strings.Repeat("a1", 32)
	out, code := runCommand(t, nil, "businesses", "keygen", "k1")
	require.Zero(t, code, out)
	keys := strings.TrimSpace(out)
	require.True(t, strings.HasPrefix(keys, "k1:"), out)
	env := append(commandEnv("http://127.0.0.1:1/api/v1/external", apiKey, secret, server.URL), pgmirror.EnvKeys+"="+keys)
	var outputs []string
	cmd := func(wantCode int, args ...string) string {
		t.Helper()
		out, code := runCommand(t, env, append([]string{"businesses"}, args...)...)
		require.Equal(t, wantCode, code, "%v: %s", args, out)
		outputs = append(outputs, out)
		return out
	}
	cmd(0, "add", "--schema", schema, "--budget", "3", "acme")
	env = append(env, "INVOICING_WEBHOOK_SECRET="+strings.Repeat("b2", 32)+","+secret) // a rotation: the new secret first
	selection := filepath.Join(t.TempDir(), "selection.json")
	require.NoError(t, os.WriteFile(selection, []byte(`{"resources": ["invoices", "clients"], "hash": ["clients.phone"]}`), 0o600))
	cmd(0, "add", "--schema", schema, "--selection", selection, "--exclude", "clients.email", "globex")
	list := cmd(0, "list", "--schema", schema)
	assert.Regexp(t, `acme\s+3/s at most\s+1\s+k1\s.*everything\n`, list)
	assert.Regexp(t, `globex\s+adaptive\s+2\s+k1\s.*resources clients,invoices; exclude clients.email; hash clients.phone\n`, list)
	require.NoError(t, os.WriteFile(selection, []byte(`{"resource": ["invoices"]}`), 0o600))
	assert.Contains(t, cmd(2, "add", "--schema", schema, "--selection", selection, "initech"), "not a selection")
	cmd(0, "remove", "--schema", schema, "globex")
	assert.Contains(t, cmd(0, "list", "--schema", schema), "removed")
	cmd(1, "drop", "--schema", schema, "acme") // still served
	cmd(0, "drop", "--schema", schema, "globex")
	cmd(1, "remove", "--schema", schema, "nobody")
	cmd(1, "add", "--schema", schema, "bad name") // refused by the package: nothing recorded
	cmd(2, "frobnicate")
	bad := append(slices.Clip(env), pgmirror.EnvKeys+"=k1:"+strings.Repeat("A", 40)) // not 32 bytes
	out, code = runCommand(t, bad, "businesses", "add", "--schema", schema, "initech")
	require.Equal(t, 2, code, out)
	outputs = append(outputs, out)
	for _, out := range outputs {
		for _, s := range []string{apiKey, secret, strings.TrimPrefix(keys, "k1:"), strings.Repeat("A", 40)} {
			assert.NotContains(t, out, s)
		}
	}
	db := adminPool(t, schema)
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM mirror_businesses`))
	assert.Zero(t, count(t, db, `SELECT count(*) FROM mirror_businesses WHERE position($1::bytea IN api_key) > 0`, []byte(apiKey)))
	// A BusinessConfig printed shows no key or secret either.
	c := pgmirror.BusinessConfig{Name: "acme", APIKey: apiKey, WebhookSecrets: []string{secret}}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v %#v %v", c, c, &c)} {
		assert.NotContains(t, s, apiKey)
		assert.NotContains(t, s, secret)
	}
}

// Three replicas of a mirror of many businesses, each with more walkers
// than pool connections, share the businesses' backfills (a business's
// resources split between them), and every business is then reconciled
// on its interval, its first reconciliation due at a point of the interval
// its name fixes: none waits on a round that saw all of its resources
// complete, none deadlocks on the pool.
func TestReplicasOfManyBusinessesBackfillAndReconcileEach(t *testing.T) {
	t.Parallel()
	const n = 6
	f := newFleet(t, n, withFleetLatency(5*time.Millisecond, 0), withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, 120) }))
	edit := func(c *pgmirror.Config) {
		c.PoolSize, c.Walkers = 2, 4 // more walkers than connections: each walk's lock has one of its own
		c.ReconcileInterval = 3 * time.Second
	}
	mm := newMultiMirror(t, f, keyring(t, newKeyText(t, "k1")), edit)
	for _, b := range f.Businesses {
		mm.add(t, b, 0)
	}
	run(t, mm.Mirror)
	for range 2 {
		mm.replica(t, f, edit)
	}
	for _, b := range f.Businesses {
		waitBusinessBackfilled(t, mm, b.Name, time.Minute)
	}
	waitUntil(t, 30*time.Second, func() (bool, string) {
		reconciled := count(t, mm.DB, `SELECT count(*) FROM mirror_reconcile WHERE last_started_at IS NOT NULL`)
		return reconciled == n, fmt.Sprintf("%d of %d businesses reconciled", reconciled, n)
	})
	for _, b := range f.Businesses {
		requireBusinessEqual(t, f, mm, b)
	}
	// The first reconciliations were not all due at once.
	assert.Greater(t, count(t, mm.DB, `SELECT count(DISTINCT date_trunc('second', last_started_at)) FROM mirror_reconcile`), 1)
}

// invoicing-mirror --once tells the truth: with three businesses, one
// whose key the service refuses, it names each on a line (two copied, one
// not, and why) and exits 3; once the key is good, a second run reconciles
// them all and exits 0. The flags of businesses add may follow the name.
func TestOnceNamesEachBusinessAndExitsNonZeroOnAPartialCopy(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 3, withFleetSeed(func(b *fleetBusiness) { seedBusiness(t, b, 20) }))
	schema := newSchemaName()
	out, code := runCommand(t, nil, "businesses", "keygen", "k1")
	require.Zero(t, code, out)
	keys := pgmirror.EnvKeys + "=" + strings.TrimSpace(out)
	for _, b := range f.Businesses {
		env := append(commandEnv(f.URL, b.Key, secretOf(b.Name), postgresOf(schema).URL), keys)
		out, code := runCommand(t, env, "businesses", "add", b.Name, "--schema", schema)
		require.Zero(t, code, out)
	}
	refused := f.Businesses[1]
	f.Fail(refused.Name, 401)
	env := append(commandEnv(f.URL, "unused", "", postgresOf(schema).URL), keys)
	out, code = runCommand(t, env, "--once", "--schema", schema)
	assert.Equal(t, 3, code, "%s", out)
	for _, b := range f.Businesses {
		want := `invoicing-mirror: business ` + b.Name + `: copied (`
		if b == refused {
			want = `invoicing-mirror: business ` + b.Name + `: not copied: paused until `
		}
		assert.Contains(t, out, want, "%s", out)
	}
	assert.Contains(t, out, "the service refused the business's requests")

	f.Fail(refused.Name, 0)
	env2 := append(commandEnv(f.URL, refused.Key, secretOf(refused.Name), postgresOf(schema).URL), keys)
	out, code = runCommand(t, env2, "businesses", "add", "--schema", schema, refused.Name) // a new key ends the pause
	require.Zero(t, code, out)
	out, code = runCommand(t, env, "--once", "--schema", schema)
	assert.Equal(t, 0, code, "%s", out)
	assert.Equal(t, 3, strings.Count(out, ": copied ("), "%s", out)
	out, code = runCommand(t, env, "--once", "--schema", schema) // backfilled: a reconciliation of each
	assert.Equal(t, 0, code, "%s", out)
	assert.Contains(t, out, "reconciling once")
	assert.Equal(t, 3, strings.Count(out, ": copied ("), "%s", out)
}

// tablesWithBusiness returns the tables of schema that have a business
// column (partitions left out).
func tablesWithBusiness(t testing.TB, db *pgxpool.Pool, schema string) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
		JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attname = 'business' AND NOT a.attisdropped
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`, schema)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, tables)
	return tables
}
