package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing-api/invoicing-go/internal/cliflag"
	"github.com/invoicing-api/invoicing-go/pgmirror"
	"github.com/invoicing-api/invoicing-go/webhooks/pginbox"
)

const deliveriesUsage = `Usage: invoicing-mirror deliveries list [--failed] [--business NAME] [--since T] [--json] [flags]
       invoicing-mirror deliveries show [--business NAME] [--json] ID
       invoicing-mirror deliveries requeue [--business NAME] ID...
       invoicing-mirror deliveries requeue --failed [--since T] [--business NAME]

The command comes first; its flags go before or after the IDs.

Inspects and steers the webhook inbox of the mirror in the database at
DATABASE_URL (never printed): the deliveries the replicas stored, each
processed (turned into fetches of the records its event names), pending,
or failed (parked after repeated failures, with the last error). It needs
no API key, and no replica needs to run.

  list     prints the deliveries, newest first: when received, business,
           id, event, status, attempts, failures and the last error's
           first line. --failed (or --status) narrows them to a status,
           --business to a business, --since to those received since T
           (an RFC 3339 time, a date, or a duration ago: 2h). It prints
           --limit deliveries (0: all, read a page at a time), then, when
           more follow, the --after CURSOR that lists them.
  show     prints one delivery whole: its times, attempts, last error and
           body (the event as the service sent it). Without --business it
           looks for ID in every business.
  requeue  has the replicas process the deliveries named again, whatever
           their status (failed: once the cause is mended; processed: to
           fetch their records again): they become pending and due now,
           and a running replica processes them within a second or so. A
           failed delivery that fails again is parked again at once. With
           --failed, every failed delivery (received since T, of NAME).

A mirror without INVOICING_MIRROR_KEYS stores its deliveries without a
business: shown as -, selected with --business -.

Exit status:
  0  done
  1  the database failed, or a delivery named is not in the inbox (show,
     requeue: the others are requeued)
  2  a usage mistake, no webhook inbox in --schema, or an ID in several
     businesses without --business (requeue: none is requeued)

Flags:
`

// deliveries is the deliveries subcommand.
func deliveries(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "invoicing-mirror deliveries: "+format+"\n", a...)
		return code
	}
	fs := flag.NewFlagSet("invoicing-mirror deliveries", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	schema := fs.String("schema", pgmirror.DefaultSchema, "the PostgreSQL `SCHEMA` of the mirror's tables")
	var business *string
	fs.Func("business", "only the deliveries of the business `NAME` (- for those of a mirror without INVOICING_MIRROR_KEYS)", func(s string) error {
		if s == "-" {
			s = ""
		}
		business = &s
		return nil
	})
	failed := fs.Bool("failed", false, "list, requeue: only the failed deliveries (--status failed)")
	status := fs.String("status", "", "list: only the deliveries with `STATUS`: pending, processed or failed")
	var since time.Time
	fs.Func("since", "list, requeue --failed: only the deliveries received since `T`: an RFC 3339 time, a date (UTC), or a duration ago such as 2h", func(s string) error {
		var err error
		since, err = parseSince(s, time.Now())
		return err
	})
	limit := fs.Int("limit", pginbox.DefaultListLimit, "list: print at most `N` deliveries (0: all)")
	after := fs.String("after", "", "list: start after the `CURSOR` a list printed")
	asJSON := fs.Bool("json", false, "list, show: print one JSON object")
	timeout := fs.Duration("timeout", time.Minute, "give up after `DURATION` (exit 1)")
	help := func(code int) int {
		fmt.Fprint(stderr, deliveriesUsage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return code
	}
	switch {
	case len(args) == 0:
		return help(exitUsage)
	case args[0] == "-h" || args[0] == "--help" || args[0] == "-help":
		return help(exitOK)
	}
	verb := args[0]
	var ids []string
	for rest := args[1:]; ; { // flags before and after the IDs
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return help(exitOK)
			}
			return fail(exitUsage, "%s\nRun 'invoicing-mirror deliveries --help' for every flag.", cliflag.Explain(fs, err))
		}
		if fs.NArg() == 0 {
			break
		}
		ids, rest = append(ids, fs.Arg(0)), fs.Args()[1:]
	}
	if *failed {
		if *status != "" && *status != pginbox.StatusFailed {
			return fail(exitUsage, "--failed and --status %s disagree", *status)
		}
		*status = pginbox.StatusFailed
	}
	switch {
	case verb != "list" && verb != "show" && verb != "requeue":
		return fail(exitUsage, "unknown command %q (list, show or requeue)%s", verb, cliflag.DidYouMean(verb, []string{"list", "show", "requeue"}))
	case verb == "list" && len(ids) > 0:
		return fail(exitUsage, "unexpected argument %q", ids[0])
	case verb == "show" && len(ids) != 1:
		return fail(exitUsage, "show takes one ID")
	case verb == "requeue" && *failed == (len(ids) > 0):
		return fail(exitUsage, "requeue takes IDs, or --failed")
	case verb == "requeue" && len(ids) > 0 && !since.IsZero():
		return fail(exitUsage, "--since goes with requeue --failed, not with IDs")
	case *limit < 0:
		return fail(exitUsage, "--limit must not be negative")
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	db, code := openDatabase(ctx, "deliveries", getenv, stderr)
	if db == nil {
		return code
	}
	// The inbox table is the first of the search_path's: the mirror's schema.
	pc := db.Config()
	db.Close()
	pc.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{*schema}.Sanitize()
	db, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return fail(exitUsage, "%s", oneLine(err))
	}
	defer db.Close()
	inbox := pginbox.NewInbox(db)
	filter := pginbox.Filter{Business: business, Since: since}

	switch {
	case verb == "list":
		err = listDeliveries(ctx, inbox, pginbox.ListParams{Filter: filter, Status: *status, After: *after}, *limit, *asJSON, stdout)
	case verb == "show":
		var list []pginbox.StoredDelivery
		list, err = findDeliveries(ctx, inbox, business, ids[0])
		if err == nil && len(list) == 0 {
			return fail(exitError, "no delivery %s in the inbox%s", ids[0], ofBusiness(business))
		}
		if err == nil {
			showDeliveries(stdout, list, *asJSON)
		}
	case *failed:
		var n int64
		if n, err = inbox.RequeueFailed(ctx, filter); err == nil {
			fmt.Fprintf(stdout, "%d failed deliveries requeued: a running replica processes them within seconds\n", n)
		}
	default:
		return requeueDeliveries(ctx, inbox, business, ids, *schema, stdout, stderr)
	}
	return deliveriesError(err, *schema, stderr)
}

// deliveriesError is the exit status of err, printed when not nil: 2 when
// the schema holds no inbox table or a flag is wrong, 1 otherwise.
func deliveriesError(err error, schema string, stderr io.Writer) int {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &pgErr) && pgErr.Code == "42P01": // undefined_table
		fmt.Fprintf(stderr, "invoicing-mirror deliveries: schema %s holds no webhook inbox (is --schema right? a replica creates it when it starts)\n", schema)
		return exitUsage
	}
	fmt.Fprintf(stderr, "invoicing-mirror deliveries: %s\n", oneLine(err))
	if errors.Is(err, pginbox.ErrInvalidParams) { // --status or --after
		return exitUsage
	}
	return exitError
}

// findDeliveries returns the deliveries id of business, or of every
// business when business is nil.
func findDeliveries(ctx context.Context, inbox *pginbox.Inbox, business *string, id string) ([]pginbox.StoredDelivery, error) {
	if business == nil {
		return inbox.Find(ctx, id)
	}
	d, err := inbox.Get(ctx, *business, id)
	if errors.Is(err, pginbox.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []pginbox.StoredDelivery{*d}, nil
}

// ofBusiness names business in a message, "" when nil.
func ofBusiness(business *string) string {
	if business == nil {
		return ""
	}
	return " of business " + businessName(*business)
}

// businessName is a delivery's business for reading: - for none.
func businessName(b string) string {
	if b == "" {
		return "-"
	}
	return b
}

// listDeliveries prints the deliveries p selects, at most limit (0: all),
// a page at a time, then the cursor of those that follow.
func listDeliveries(ctx context.Context, inbox *pginbox.Inbox, p pginbox.ListParams, limit int, asJSON bool, w io.Writer) error {
	out := newDeliveryList(w, asJSON)
	for printed := 0; ; {
		p.Limit = pginbox.MaxListLimit
		if limit > 0 {
			p.Limit = min(limit-printed, pginbox.MaxListLimit)
		}
		page, err := inbox.ListPage(ctx, p)
		if err != nil {
			return err
		}
		out.page(page.Deliveries)
		printed += len(page.Deliveries)
		if page.Next == "" || limit > 0 && printed >= limit {
			out.end(page.Next)
			return nil
		}
		p.After = page.Next
	}
}

// deliveryList writes a list, a page at a time: as a table, or as one
// JSON object, {"deliveries": [...], "next": CURSOR}.
type deliveryList struct {
	w       io.Writer
	json    bool
	printed int
}

func newDeliveryList(w io.Writer, asJSON bool) *deliveryList {
	if asJSON {
		fmt.Fprint(w, `{"deliveries": [`)
	}
	return &deliveryList{w: w, json: asJSON}
}

// page writes a page of deliveries.
func (l *deliveryList) page(list []pginbox.StoredDelivery) {
	if l.json {
		for _, d := range list {
			if l.printed++; l.printed > 1 {
				fmt.Fprint(l.w, ",")
			}
			b, _ := json.Marshal(d) // strings, numbers and times: never fails
			fmt.Fprintf(l.w, "\n  %s", b)
		}
		return
	}
	tw := tabwriter.NewWriter(l.w, 0, 0, 2, ' ', 0)
	if l.printed == 0 {
		fmt.Fprintln(tw, "RECEIVED\tBUSINESS\tID\tEVENT\tSTATUS\tATTEMPTS\tFAILURES\tLAST ERROR")
	}
	for _, d := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", stamp(d.ReceivedAt), businessName(d.Business), d.ID, d.EventType,
			d.Status, d.Attempts, d.Failures, firstLine(d.LastError, 80))
	}
	tw.Flush()
	l.printed += len(list)
}

// end writes the end of the list: the cursor of the deliveries that follow.
func (l *deliveryList) end(next string) {
	if l.json {
		b, _ := json.Marshal(next)
		fmt.Fprintf(l.w, "\n], \"next\": %s}\n", b)
		return
	}
	if l.printed == 0 {
		fmt.Fprintln(l.w, "no deliveries")
	}
	if next != "" {
		fmt.Fprintf(l.w, "(more: add --after %s)\n", next)
	}
}

// firstLine is s's first line, cut to n characters, or "-" for "".
func firstLine(s string, n int) string {
	s, _, cut := strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		s, cut = string(r[:n]), true
	}
	switch {
	case s == "":
		return "-"
	case cut:
		return s + "…"
	}
	return s
}

// showDeliveries prints each delivery whole.
func showDeliveries(w io.Writer, list []pginbox.StoredDelivery, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string][]pginbox.StoredDelivery{"deliveries": list})
		return
	}
	for i, d := range list {
		if i > 0 {
			fmt.Fprintln(w)
		}
		field := func(name string, value any) { fmt.Fprintf(w, "%-10s %v\n", name, value) }
		field("delivery", d.ID)
		field("business", businessName(d.Business))
		field("event", d.EventType)
		field("status", d.Status)
		field("signed", stamp(d.SignedAt))
		field("received", stamp(d.ReceivedAt))
		field("attempts", fmt.Sprintf("%d, %d failed", d.Attempts, d.Failures))
		switch d.Status {
		case pginbox.StatusPending:
			field("due", stamp(d.NextAttemptAt))
		case pginbox.StatusFailed:
			field("parked", stamp(d.NextAttemptAt))
		case pginbox.StatusProcessed:
			if d.ProcessedAt != nil {
				field("processed", stamp(*d.ProcessedAt))
			}
		}
		if d.LastError != "" {
			fmt.Fprintf(w, "last error:\n  %s\n", strings.ReplaceAll(d.LastError, "\n", "\n  "))
		}
		fmt.Fprintf(w, "body:\n  %s\n", d.Body)
	}
}

// requeueDeliveries requeues the deliveries ids (of business, or found in
// any) and prints what became of each.
func requeueDeliveries(ctx context.Context, inbox *pginbox.Inbox, business *string, ids []string, schema string, stdout, stderr io.Writer) int {
	byBusiness := map[string][]string{} // the ids to requeue, by business
	var order []string                  // the businesses, in the order met
	missing := 0
	add := func(b, id string) {
		if _, ok := byBusiness[b]; !ok {
			order = append(order, b)
		}
		byBusiness[b] = append(byBusiness[b], id)
	}
	if business != nil {
		for _, id := range ids {
			add(*business, id)
		}
	} else {
		ambiguous := false
		for _, id := range ids {
			found, err := inbox.Find(ctx, id)
			if err != nil {
				return deliveriesError(err, schema, stderr)
			}
			switch len(found) {
			case 0:
				fmt.Fprintf(stdout, "%s: not in the inbox\n", id)
				missing++
			case 1:
				add(found[0].Business, id)
			default:
				var names []string
				for _, d := range found {
					names = append(names, businessName(d.Business))
				}
				fmt.Fprintf(stderr, "invoicing-mirror deliveries: %s is in businesses %s: say which with --business\n", id, strings.Join(names, ", "))
				ambiguous = true
			}
		}
		if ambiguous {
			return exitUsage
		}
	}
	for _, b := range order {
		res, err := inbox.Requeue(ctx, b, byBusiness[b]...)
		if err != nil {
			return deliveriesError(err, schema, stderr)
		}
		for _, id := range res.Requeued {
			fmt.Fprintf(stdout, "%s %s: requeued\n", businessName(b), id)
		}
		for _, id := range res.InProgress {
			fmt.Fprintf(stdout, "%s %s: being processed now; left as it is\n", businessName(b), id)
		}
		for _, id := range res.NotFound {
			fmt.Fprintf(stdout, "%s %s: not in the inbox\n", businessName(b), id)
		}
		missing += len(res.NotFound)
	}
	if missing > 0 {
		return exitError
	}
	return exitOK
}

// parseSince reads --since: an RFC 3339 time, a date (midnight UTC), or a
// duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, errors.New("not an RFC 3339 time (2026-03-02T09:00:00Z), a date (2026-03-02) or a duration ago (2h)")
}
