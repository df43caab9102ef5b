package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUsageErrorsExitWith2(t *testing.T) {
	// 127.0.0.1:9 (discard) is never contacted: each line is refused first.
	to := "http://127.0.0.1:9/hooks"
	env := []string{"INVOICING_BASE_URL=http://127.0.0.1:9/api/v1/external", "INVOICING_API_KEY=sk_test_usage_0123456789"}
	for _, args := range [][]string{
		{},
		{"nope"},
		{"help", "nope"},
		{"mock", "--bogus"},
		{"mock", "extra"},
		{"mock", "--seed", "-1"},
		{"mock", "--latency", "soon"},
		{"mock", "--webhook", "ftp://example.invalid/x"},
		{"mock", "--webhook", to + ",invoice.created,nope.event"},
		{"trigger"},
		{"trigger", "nope.event", "--to", to, "--secret", testSecret},
		{"trigger", "test", "invoice.paid", "--to", to, "--secret", testSecret},
		{"trigger", "test", "--to", "not-a-url", "--secret", testSecret},
		{"trigger", "test", "--to", to, "--secret", testSecret, "--set", "no-equals-sign"},
		{"trigger", "test", "--to", to, "--secret", testSecret, "--expect", "unauthorized"},
		{"trigger", "test", "--to", to, "--secret", testSecret, "--expect", "99"},
		{"trigger", "test", "--to", to, "--secret", testSecret, "--expect", "600"},
		{"listen"},
		{"listen", "--secret", "   "},
		{"listen", "--secret", testSecret, "--forward", "nowhere"},
		{"invoices"},
		{"invoices", "nope"},
		{"invoices", "list", "--json", "--csv"},
		{"invoices", "list", "--status", "unpaid"},
		{"invoices", "list", "extra"},
		{"invoices", "get"},
		{"invoices", "get", "not-a-uuid"},
		{"invoices", "pdf", "a", "b"},
		{"quotes", "list", "--status", "paid"},
		{"quotes", "pdf"},
		{"items", "list", "--type", "SERVICE"},
		{"items", "pdf", "x"},
		{"mock", "--business", "Acme"},
		{"mock", "--business", "acme", "--business", "acme"},
		{"mock", "--business", "acme-1", "--business", "acme_1"},
		{"mock", "--business", "acme", "--businesses", "2"},
		{"mock", "--businesses", "-1"},
		{"mock", "--businesses", "2", "--webhook", to},
		{"mock", "--webhook", to + "/{business}"},
		{"mock", "--business", "acme", "--env-file", "x", "extra"},
		{"webhooks"},
		{"webhooks", "add"},
		{"webhooks", "add", "not-a-url"},
		{"webhooks", "add", to, "--secret", "short"},
		{"webhooks", "remove"},
		{"webhooks", "list", "extra"},
		{"invoices", "list", "--business", "Not A Name"},
		{"trigger", "test", "--business", "hooli", "--to", to},
	} {
		assertUsageError(t, run(t, env, args...), args)
	}
	// Without a mock to make real events on, trigger sends a made-up
	// delivery, which needs --to and a secret.
	for _, args := range [][]string{
		{"trigger", "test", "--secret", testSecret},
		{"trigger", "test", "--to", to},
	} {
		assertUsageError(t, run(t, nil, args...), args)
	}
}

// assertUsageError checks that r is a usage error that says where the usage
// is, and printed nothing on stdout.
func assertUsageError(t *testing.T, r result, args []string) {
	t.Helper()
	assert.Equal(t, 2, r.code, "invoicing %q: stderr %q", args, r.stderr)
	assert.Contains(t, r.stderr, "Run 'invoicing", "invoicing %q says where the usage is", args)
	if len(args) > 0 {
		assert.Empty(t, r.stdout, "invoicing %q", args)
	}
}

func TestReadsWithoutConfigurationExitWith2(t *testing.T) {
	r := run(t, nil, "invoices", "list")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "INVOICING_BASE_URL is not set")
	r = run(t, []string{"INVOICING_BASE_URL=http://127.0.0.1:9/api/v1/external"}, "items", "list")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "INVOICING_API_KEY is not set")
}

func TestHelpOnEveryCommand(t *testing.T) {
	withFlags := [][]string{
		{"mock", "--help"}, {"help", "mock"}, {"trigger", "-h"}, {"help", "trigger"}, {"listen", "--help"},
		{"invoices", "list", "--help"}, {"invoices", "get", "--help"}, {"invoices", "pdf", "--help"}, {"help", "invoices", "pdf"},
		{"quotes", "list", "--help"}, {"quotes", "get", "--help"}, {"quotes", "pdf", "--help"},
		{"items", "list", "--help"}, {"items", "get", "--help"},
		{"mock", "advance", "--help"}, {"invoices", "pay", "--help"}, {"quotes", "accept", "--help"},
		{"webhooks", "list", "--help"}, {"webhooks", "add", "--help"}, {"help", "webhooks", "remove"},
	}
	overviews := [][]string{{"--help"}, {"-h"}, {"help"}, {"invoices", "--help"}, {"quotes", "-h"}, {"help", "items"}}
	for _, args := range append(withFlags, overviews...) {
		r := run(t, nil, args...)
		assert.Equal(t, 0, r.code, "invoicing %q", args)
		assert.Contains(t, r.stdout, "Usage", "invoicing %q", args)
		assert.Empty(t, r.stderr, "invoicing %q", args)
	}
	for _, args := range withFlags {
		r := run(t, nil, args...)
		assert.Contains(t, r.stdout, "\nFlags:\n", "invoicing %q", args)
		assert.Contains(t, r.stdout, "  -h, --help", "invoicing %q", args)
		assert.Contains(t, r.stdout, "Exit status: 0 ", "invoicing %q documents its exit status", args)
	}

	r := run(t, nil, "--help")
	for _, cmd := range commands() {
		assert.True(t, strings.Contains(r.stdout, "  "+cmd.name+" "), "the help lists %s", cmd.name)
	}
	assert.Contains(t, r.stdout, "Exit status: 0 success, 1 API or runtime error, 2 usage error.")
}

func TestUnknownNamesGetADidYouMean(t *testing.T) {
	to := "http://127.0.0.1:9/hooks"
	env := []string{"INVOICING_BASE_URL=http://127.0.0.1:9/api/v1/external", "INVOICING_API_KEY=sk_test_usage_0123456789"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"invoice", "list"}, `invoicing: unknown command "invoice" (did you mean "invoices"?)`},
		{[]string{"trigr"}, `invoicing: unknown command "trigr" (did you mean "trigger"?)`},
		{[]string{"Mock"}, `invoicing: unknown command "Mock" (did you mean "mock"?)`},
		{[]string{"invoices", "lst"}, `invoicing: unknown subcommand "lst" of invoices (did you mean "list"?)`},
		{[]string{"quotes", "pfd", "x"}, `invoicing: unknown subcommand "pfd" of quotes (did you mean "pdf"?)`},
		{[]string{"items", "list", "--jsn"}, `invoicing: items list: unknown flag --jsn (did you mean --json?)`},
		{[]string{"mock", "--sed", "3"}, `invoicing: mock: unknown flag --sed (did you mean --seed?)`},
		{[]string{"invoices", "list", "--status", "overdu"}, `invoicing: unknown status "overdu" (did you mean "overdue"?): use draft, awaiting_payment, paid, overdue or voided`},
		{[]string{"items", "list", "--type", "sale"}, `invoicing: unknown item type "sale" (did you mean "SALES"?): use SALES, PURCHASE or TEXT`},
		{[]string{"trigger", "invoice.create", "--to", to, "--secret", testSecret}, `invoicing: unknown event type "invoice.create" (did you mean "invoice.created"?)`},
		{[]string{"mock", "--webhook", to + ",quote.acepted"}, `unknown event "quote.acepted" (did you mean "quote.accepted"?)`},
	} {
		r := run(t, env, c.args...)
		assert.Equal(t, 2, r.code, "invoicing %q", c.args)
		assert.Contains(t, r.stderr, c.want, "invoicing %q", c.args)
	}
	r := run(t, env, "xyzzy")
	assert.Equal(t, "invoicing: unknown command \"xyzzy\"\nRun 'invoicing --help' for usage.\n", r.stderr, "no suggestion when nothing is close")
}

// A flag mistake is explained on three lines: what is wrong with which
// flag, that flag's line of the command's help, and where the whole help is.
func TestFlagMistakesShowThatFlagsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // the first line
		flag string // the flag whose help line follows
	}{
		{[]string{"items", "list", "--jsn"}, "invoicing: items list: unknown flag --jsn (did you mean --json?)", "--json"},
		{[]string{"invoices", "list", "--stauts", "paid"}, "invoicing: invoices list: unknown flag --stauts (did you mean --status?)", "--status STATUS"},
		{[]string{"invoices", "list", "--status"}, "invoicing: invoices list: --status needs a value", "--status STATUS"},
		{[]string{"invoices", "pdf", "x", "-o"}, "invoicing: invoices pdf: -o needs a value", "-o FILE"},
		{[]string{"mock", "--latency", "soon"}, `invoicing: mock: invalid value "soon" for --latency: not a duration (such as 30s, 5m or 1h30m)`, "--latency D"},
		{[]string{"mock", "--seed", "some"}, `invoicing: mock: invalid value "some" for --seed: not a whole number`, "--seed N"},
	} {
		r := run(t, nil, c.args...)
		assert.Equal(t, 2, r.code, "invoicing %q", c.args)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		if !assert.Len(t, lines, 3, "invoicing %q: stderr %q", c.args, r.stderr) {
			continue
		}
		assert.Equal(t, c.want, lines[0])
		assert.True(t, strings.HasPrefix(lines[1], "  "+c.flag+"  "), "invoicing %q: %q is the line of %s", c.args, lines[1], c.flag)
		cmd := c.args[:1]
		if c.args[0] != "mock" {
			cmd = c.args[:2]
		}
		help := run(t, nil, append(cmd, "--help")...)
		assert.Contains(t, strings.Split(help.stdout, "\n"), oneSpaced(help.stdout, lines[1]), "invoicing %q: the help lists the flag on the same line", c.args)
		assert.Equal(t, "Run 'invoicing "+strings.Join(cmd, " ")+" --help' for usage.", lines[2])
	}

	r := run(t, nil, "items", "list", "--xyzzy")
	assert.Equal(t, "invoicing: items list: unknown flag --xyzzy\nRun 'invoicing items list --help' for usage.\n", r.stderr, "no usage line when no flag is close")
	r = run(t, nil, "items", "list", "--hlep")
	assert.Equal(t, "invoicing: items list: unknown flag --hlep (did you mean --help?)\nRun 'invoicing items list --help' for usage.\n", r.stderr)
}

// oneSpaced returns the line of help that lists the same flag as line, a
// usage line whose columns are two spaces apart, or line when help has
// none: help pads its first column to its widest flag.
func oneSpaced(help, line string) string {
	name, usage, _ := strings.Cut(strings.TrimPrefix(line, "  "), "  ")
	for _, l := range strings.Split(help, "\n") {
		n, u, ok := strings.Cut(strings.TrimPrefix(l, "  "), "  ")
		if ok && n == name && strings.TrimLeft(u, " ") == usage {
			return l
		}
	}
	return line
}
