// Command invoicing is a command-line companion to the Invoicing Service
// External API: a local mock of the service, signed test webhooks, a local
// webhook receiver, and quick reads of an account.
//
// It is a module of its own, github.com/invoicing-api/invoicing-go/cmd/invoicing.
// From a clone of the repository, install it with
//
//	go install ./cmd/invoicing
//
// at the repository root (go.work joins the modules), or with go install . in
// cmd/invoicing. Once a release tags the module (cmd/invoicing/vX.Y.Z, its
// go.mod requiring a tagged SDK version and without the replace directive,
// which go install refuses), it installs without a clone:
//
//	go install github.com/invoicing-api/invoicing-go/cmd/invoicing@latest
//
// Usage:
//
//	invoicing mock [--addr 127.0.0.1:4010] [--business NAME]... [--seed N] [--latency D] [--state FILE] [--env-file FILE] [--webhook URL[,EVENT...]]...
//	invoicing mock advance DURATION
//	invoicing trigger EVENT [--to URL [--keep]] [--secret S] [--set FIELD=VALUE]... [--stale] [--tamper] [--wrong-secret] [--expect STATUS]
//	invoicing listen [--addr 127.0.0.1:8080] [--secret S] [--forward URL]
//	invoicing webhooks list|add|remove
//	invoicing invoices list [--status S] [--json|--csv]
//	invoicing invoices get ID [--json]
//	invoicing invoices pdf ID [-o FILE]
//	invoicing quotes list [--status S] [--json|--csv]
//	invoicing quotes get ID [--json]
//	invoicing quotes pdf ID [-o FILE]
//	invoicing items list [--type T] [--json|--csv]
//	invoicing items get ID [--json]
//	invoicing help [COMMAND]
//
// mock serves the in-memory service of package invoicingtest under
// /api/v1/external and prints its base URL, its API keys and the signing
// secret of each webhook endpoint given with --webhook; with --business
// NAME (repeatable) it serves several businesses behind the one base URL,
// told apart by API key (invoicingtest.MultiServer). trigger sends one
// signed delivery of any event type, or a bad one a receiver must refuse;
// listen verifies deliveries with package webhooks and prints one line per
// event; webhooks lists, adds and removes a mock's webhook endpoints. Every
// command explains itself, its flags and its exit status with --help.
//
// # Configuration
//
// The reads (invoices, quotes, items) talk to the service named by two
// environment variables: INVOICING_BASE_URL, the base URL including
// /api/v1/external, and INVOICING_API_KEY. No flag takes the key, so that it
// stays out of shell history, and the key is never printed, not even in an
// error. trigger and listen take the webhook signing secret from --secret
// or, when that is not given, from INVOICING_WEBHOOK_SECRET. With --business
// NAME, the commands that call the service use the key in
// INVOICING_API_KEY_NAME (and the secret in INVOICING_WEBHOOK_SECRET_NAME),
// as a mock of several businesses exports them; INVOICING_MOCK_ADDR moves
// the mock's default address.
//
// # Exit status
//
//	0  success (also for --help)
//	1  an API or runtime error, including a receiver's non-2xx answer to
//	   trigger (with --expect STATUS, any answer but STATUS)
//	2  a usage error: an unknown command or flag, a missing or malformed
//	   argument, or missing configuration
//
// # Flags
//
// The tool is built on the standard library's flag package rather than a
// CLI library: its commands are few and shallow, and flag keeps the SDK's
// module free of a dependency only the tool would use. Flags take one dash
// or two (-o, --json), may come before or after the arguments, and take
// their value as --flag=value or --flag value; "--" ends the flags. Values
// from a fixed list (--status, --type) are read in any case, and a
// mistyped command, subcommand, flag or value gets a "did you mean".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &cli{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, stop: stop}
	code := c.run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
