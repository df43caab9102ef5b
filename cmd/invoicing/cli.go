package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/invoicing-api/invoicing-go/internal/cliflag"
)

// Exit codes, as the package documentation lists them.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// cli is one run of the tool: where it writes and how it reads the
// environment.
type cli struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// stop restores the default handling of SIGINT and SIGTERM, so that a
	// second Ctrl-C ends a server that is shutting down at once.
	stop func()
	// business is --business: the business of a mock of several whose key
	// (and secret) the command uses; "" for INVOICING_API_KEY's.
	business string
}

// command is a top-level command.
type command struct {
	name    string
	summary string
	run     func(c *cli, ctx context.Context, args []string) error
}

// commands lists the top-level commands in the order help shows them.
func commands() []command {
	return []command{
		{"mock", "serve the in-memory Invoicing Service locally", (*cli).mock},
		{"trigger", "send one signed webhook delivery of an event type", (*cli).trigger},
		{"listen", "receive, verify and print webhook deliveries", (*cli).listen},
		{"webhooks", "list, add and remove the webhook endpoints of a mock", (*cli).webhooks},
		{"invoices", "list, show and download invoices", (*cli).invoices},
		{"quotes", "list, show and download quotes", (*cli).quotes},
		{"items", "list and show catalog items", (*cli).items},
		{"help", "show help for a command", (*cli).help},
	}
}

// errHelpShown ends a command whose help was asked for and printed: exit 0.
var errHelpShown = errors.New("help shown")

// usageError is a mistake in the command line or the configuration (exit
// 2). cmd names the command whose --help explains the right usage.
type usageError struct {
	msg string
	cmd string
}

func (e *usageError) Error() string { return e.msg }

// usagef returns a usage error of the command cmd ("" for the tool as a
// whole).
func usagef(cmd, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), cmd: cmd}
}

// run runs the command line args and returns the exit code. Errors go to
// stderr, with the API key blanked out should any ever carry it.
func (c *cli) run(ctx context.Context, args []string) int {
	err := c.dispatch(ctx, args)
	if err == nil || errors.Is(err, errHelpShown) {
		return exitOK
	}
	// Errors of the SDK start with "invoicing: " already.
	msg := c.redact(err.Error())
	if !strings.HasPrefix(msg, "invoicing: ") {
		msg = "invoicing: " + msg
	}
	fmt.Fprintln(c.stderr, msg)
	var u *usageError
	if errors.As(err, &u) {
		fmt.Fprintf(c.stderr, "Run '%s --help' for usage.\n", strings.TrimSpace("invoicing "+u.cmd))
		return exitUsage
	}
	return exitError
}

// dispatch runs the command named by args[0].
func (c *cli) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		c.printTopHelp(c.stderr)
		return usagef("", "no command given")
	}
	switch args[0] {
	case "-h", "-help", "--help":
		c.printTopHelp(c.stdout)
		return nil
	}
	var names []string
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			return cmd.run(c, ctx, args[1:])
		}
		names = append(names, cmd.name)
	}
	return usagef("", "unknown command %q%s", args[0], didYouMean(args[0], names))
}

// help runs "invoicing help [COMMAND [SUBCOMMAND]]".
func (c *cli) help(ctx context.Context, args []string) error {
	if len(args) == 0 {
		c.printTopHelp(c.stdout)
		return nil
	}
	if args[0] == "help" {
		return usagef("help", "help takes the name of another command")
	}
	return c.dispatch(ctx, append(args, "--help"))
}

// printTopHelp writes the tool's help.
func (c *cli) printTopHelp(w io.Writer) {
	fmt.Fprint(w, `invoicing: a local mock of the Invoicing Service, signed test webhooks and quick reads.

Usage:
  invoicing COMMAND [ARGUMENTS] [FLAGS]

Commands:
`)
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprint(w, `
Run 'invoicing COMMAND --help' (or 'invoicing help COMMAND') for a command's usage.

The reads (invoices, quotes, items) use INVOICING_BASE_URL (including
/api/v1/external) and INVOICING_API_KEY; 'invoicing mock' prints both for
its local service. The key is never printed. Against a mock of several
businesses, --business NAME takes the key in INVOICING_API_KEY_NAME.

Exit status: 0 success, 1 API or runtime error, 2 usage error.
`)
}

// group runs a command made of subcommands, such as "invoices list".
func (c *cli) group(ctx context.Context, name, about string, args []string, subs []command) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		w := c.stdout
		if len(args) == 0 {
			w = c.stderr
		}
		fmt.Fprintf(w, "%s\n\nUsage:\n", about)
		for _, s := range subs {
			fmt.Fprintf(w, "  invoicing %s %-7s  %s\n", name, s.name, s.summary)
		}
		fmt.Fprintf(w, "\nRun 'invoicing %s SUBCOMMAND --help' for a subcommand's flags.\n\n%s\n", name, exitStatusHelp)
		if len(args) == 0 {
			return usagef(name, "%s needs a subcommand", name)
		}
		return nil
	}
	var names []string
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(c, ctx, args[1:])
		}
		names = append(names, s.name)
	}
	return usagef(name, "unknown subcommand %q of %s%s", args[0], name, didYouMean(args[0], names))
}

// newFlags returns an empty flag set for the command name ("invoices
// list"). Its errors and usage are reported by parse, not by package flag.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// repeatedFlag adds to fs the repeatable flag name, whose values parse
// turns into the elements of the slice it returns.
func repeatedFlag[T any](fs *flag.FlagSet, name, usage string, parse func(string) (T, error)) *[]T {
	var values []T
	fs.Func(name, usage, func(v string) error {
		x, err := parse(v)
		if err == nil {
			values = append(values, x)
		}
		return err
	})
	return &values
}

// parse parses args, where flags and positional arguments may come in any
// order, and returns the positional arguments. For -h or --help it prints
// the command's help (help, then the flags) to stdout and returns
// errHelpShown; any other flag error is a usage error that names the flag
// (the nearest one for an unknown name) and shows its usage line.
func (c *cli) parse(fs *flag.FlagSet, help string, args []string) ([]string, error) {
	var positional []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			c.printHelp(fs, help)
			return nil, errHelpShown
		}
		if err != nil {
			return nil, usagef(fs.Name(), "%s: %s", fs.Name(), cliflag.Explain(fs, err))
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// printHelp writes a command's help and its flags to stdout.
func (c *cli) printHelp(fs *flag.FlagSet, help string) {
	fmt.Fprintln(c.stdout, strings.TrimSpace(help))
	fmt.Fprintln(c.stdout, "\nFlags:")
	var names, usages []string
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := cliflag.Columns(f)
		names, usages = append(names, name), append(usages, usage)
	})
	names, usages = append(names, "-h, --help"), append(usages, "show this help")
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for i := range names {
		fmt.Fprintf(c.stdout, "  %-*s  %s\n", width, names[i], usages[i])
	}
	if !strings.Contains(help, "Exit status") {
		fmt.Fprintln(c.stdout, "\n"+exitStatusHelp)
	}
}

// exitStatusHelp closes the help of a command whose own help does not
// detail its exit status.
const exitStatusHelp = "Exit status: 0 success, 1 an API or runtime error, 2 a usage error."

// redact blanks the API keys the command may use out of a message. No
// message of the tool or the SDK contains one; this guards against one
// that someday would. Keys too short to be told from ordinary text are
// left alone.
func (c *cli) redact(msg string) string {
	for _, v := range []string{envAPIKey, c.apiKeyVar()} {
		if key := c.getenv(v); len(key) >= 8 {
			msg = strings.ReplaceAll(msg, key, "[redacted]")
		}
	}
	return msg
}

// noArgs returns a usage error when a command that takes no arguments got
// some.
func noArgs(cmd string, args []string) error {
	if len(args) > 0 {
		return usagef(cmd, "unexpected argument %q", args[0])
	}
	return nil
}
