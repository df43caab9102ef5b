package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	invoicing "github.com/invoicing-api/invoicing-go"
	"github.com/invoicing-api/invoicing-go/internal/cliflag"
	"github.com/invoicing-api/invoicing-go/pgmirror"
)

const businessesUsage = `Usage: invoicing-mirror businesses add [flags] NAME [flags]
       invoicing-mirror businesses list [flags]
       invoicing-mirror businesses remove [flags] NAME
       invoicing-mirror businesses drop [flags] NAME
       invoicing-mirror businesses reseal [flags]
       invoicing-mirror businesses keygen ID

The command comes first; its flags (--schema, --budget) go before or after
NAME.

Manages the businesses one mirror serves (an accounting practice's clients,
a platform's customers), in the database at DATABASE_URL. Replicas started
with INVOICING_MIRROR_KEYS serve every business added and not removed, each
at its own webhook URL, --path/NAME (e.g. /webhooks/acme), and pick up a
change within seconds, without a restart.

  add     records NAME with the API key in INVOICING_API_KEY and the webhook
          secret(s) in INVOICING_WEBHOOK_SECRET (the current one first, then,
          while a secret rotates, the old one, separated by commas), and its
          budget: the ceiling of its requests per second, summed over the
          replicas (default none: its rate adapts, starting high, dropping
          on a 429, creeping back up while the service answers). Adding a
          business again replaces its key, secrets and budget (a
          rotation); a removed business is served again; and add
          ends the business's pause at once. (A business whose key the
          service refuses, 401 or 403, is paused 15 minutes, then one call
          tries again; one whose records mostly vanished, 24 hours.)
          --selection FILE (JSON), --resources, --exclude and --hash say
          what the mirror keeps: --resources names the resources mirrored (invoices,clients; the
          others are never listed, fetched or stored); --exclude and --hash
          name the members of its records the mirror never stores, or
          stores as a keyed hash (clients.email,
          invoices.line_items.description): nowhere in the database, not
          in the change feed, the history or the webhook inbox. Adding a
          business again with another choice has the first replica that
          loads it rewrite what the mirror holds to it (members removed or
          hashed, resources dropped; those kept again walked again) and log
          the rows it rewrote.
  list    prints each business: budget, secrets, the key id its values are
          sealed with, whether it is removed or paused, and the members it
          leaves out or hashes (never a key or a secret).
  remove  stops serving NAME on every replica; its rows are kept.
  drop    deletes a removed business and every row the mirror holds for it.
  reseal  seals every value again with the first key of INVOICING_MIRROR_KEYS:
          the middle step of a key rotation (put the new key first, reseal,
          then drop the old key).
  keygen  prints a new key, one line ID:base64 (32 random bytes), to put in
          INVOICING_MIRROR_KEYS: first to seal with it, after the others to
          open only.

API keys and webhook secrets are stored sealed (AES-256-GCM) with the keys
of INVOICING_MIRROR_KEYS (ID:base64key[,ID:base64key...]; the first seals),
read only from the environment, and never printed.

Exit status: 0 done; 1 the database failed or the business is unknown or
not removed (drop); 2 a usage mistake (a missing NAME, an unset variable).

Flags:
`

// businesses is the businesses subcommand.
func businesses(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "invoicing-mirror businesses: "+format+"\n", a...)
		return exitUsage
	}
	fs := flag.NewFlagSet("invoicing-mirror businesses", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	schema := fs.String("schema", pgmirror.DefaultSchema, "the PostgreSQL `SCHEMA` of the mirror's tables")
	budget := fs.Float64("budget", pgmirror.DefaultBudget, "with add: the ceiling of the business's requests per second to the service, over every replica "+
		"(0: none; the rate adapts below it: it drops on a 429 and creeps back up)")
	sel := addSelectionFlags(fs, "with add: ", true)
	migrateAs := fs.String("existing-business", pgmirror.DefaultBusiness,
		"the `NAME` the rows of a single-business mirror made before businesses take when this command migrates its schema")
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprint(stderr, businessesUsage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	verb := args[0]
	// Flags before and after the arguments: each Parse stops at an
	// argument, which is kept, and goes on after it.
	var positional []string
	for rest := args[1:]; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stderr, businessesUsage)
				fs.SetOutput(stderr)
				fs.PrintDefaults()
				return exitOK
			}
			return fail("%s\nRun 'invoicing-mirror businesses --help' for every flag.", cliflag.Explain(fs, err))
		}
		if fs.NArg() == 0 {
			break
		}
		positional, rest = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
	var name string
	switch verb {
	case "add", "remove", "drop", "keygen":
		if len(positional) != 1 {
			return fail("%s takes one NAME", verb)
		}
		name = positional[0]
	case "list", "reseal":
		if len(positional) != 0 {
			return fail("unexpected argument %q", positional[0])
		}
	default:
		return fail("unknown command %q (add, list, remove, drop, reseal or keygen)", verb)
	}
	if verb == "keygen" {
		key, err := pgmirror.GenerateKey(name)
		if err != nil {
			return fail("%s", err)
		}
		fmt.Fprintln(stdout, key)
		return exitOK
	}

	var keys *pgmirror.Keyring
	if v := getenv(pgmirror.EnvKeys); v != "" {
		var err error
		if keys, err = pgmirror.ParseKeyring(v); err != nil {
			return fail("%s: %s", pgmirror.EnvKeys, err)
		}
	} else if verb == "add" || verb == "reseal" {
		return fail("set %s (see --help; 'invoicing-mirror businesses keygen k1' makes a key)", pgmirror.EnvKeys)
	}
	var config pgmirror.BusinessConfig
	if verb == "add" {
		config = pgmirror.BusinessConfig{Name: name, APIKey: getenv(invoicing.EnvAPIKey), Budget: *budget}
		var err error
		if config.Selection, err = sel.selection(); err != nil {
			return fail("%s", err)
		}
		for s := range strings.SplitSeq(getenv("INVOICING_WEBHOOK_SECRET"), ",") {
			if s = strings.TrimSpace(s); s != "" {
				config.WebhookSecrets = append(config.WebhookSecrets, s)
			}
		}
		if config.APIKey == "" || len(config.WebhookSecrets) == 0 {
			return fail("set %s and INVOICING_WEBHOOK_SECRET to the business's API key and webhook secret(s)", invoicing.EnvAPIKey)
		}
		if *budget < 0 {
			return fail("--budget must not be negative")
		}
	}
	if getenv("DATABASE_URL") == "" {
		return fail("set DATABASE_URL (see --help)")
	}
	pc, err := pgxpool.ParseConfig(getenv("DATABASE_URL"))
	if err != nil {
		return fail("DATABASE_URL is not a PostgreSQL URL or connection string")
	}
	pc.MaxConns = 2
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	db, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror businesses: %s\n", oneLine(err))
		return exitError
	}
	defer db.Close()
	if err := pgmirror.MigrateSchema(ctx, db, *schema, *migrateAs); err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror businesses: %s\n", oneLine(err))
		return exitError
	}
	b := pgmirror.NewBusinesses(db, *schema, keys)
	switch verb {
	case "add":
		err = b.Add(ctx, config)
		if err == nil {
			fmt.Fprintf(stdout, "business %s added (budget %s, %d webhook secret(s), keeping %s); its webhook URL ends in /%s\n",
				name, budgetText(config.Budget), len(config.WebhookSecrets), config.Selection, name)
		}
	case "remove":
		if err = b.Remove(ctx, name); err == nil {
			fmt.Fprintf(stdout, "business %s removed; its rows are kept ('invoicing-mirror businesses drop %s' deletes them)\n", name, name)
		}
	case "drop":
		if err = b.Drop(ctx, name); err == nil {
			fmt.Fprintf(stdout, "business %s dropped with its rows\n", name)
		}
	case "reseal":
		var n int
		n, err = b.Reseal(ctx)
		fmt.Fprintf(stdout, "%d business(es) resealed with key %s\n", n, keys.Current())
	case "list":
		var list []pgmirror.Business
		if list, err = b.List(ctx); err == nil {
			printBusinesses(stdout, list, keys != nil)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "invoicing-mirror businesses: %s\n", oneLine(err))
		return exitError
	}
	return exitOK
}

// printBusinesses writes the businesses as a table.
func printBusinesses(w io.Writer, list []pgmirror.Business, opened bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BUSINESS\tBUDGET\tSECRETS\tSEALED WITH\tADDED\tSTATE\tKEEPS")
	for _, b := range list {
		secrets := "?" // the keys are needed to count them
		if opened {
			secrets = fmt.Sprint(b.Secrets)
		}
		state := "served"
		switch {
		case b.RemovedAt != nil:
			state = "removed " + b.RemovedAt.UTC().Format(time.RFC3339)
		case b.PausedUntil != nil:
			state = "paused until " + b.PausedUntil.UTC().Format(time.RFC3339) + ": " + b.PauseReason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.Name, budgetText(b.Budget), secrets, b.SealedWith, b.AddedAt.UTC().Format(time.RFC3339), state,
			b.Selection)
	}
	tw.Flush()
}

// budgetText is a business's budget for reading: its ceiling, or adaptive.
func budgetText(ceiling float64) string {
	if ceiling == 0 {
		return "adaptive"
	}
	return fmt.Sprintf("%g/s at most", ceiling)
}
