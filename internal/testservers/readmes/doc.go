// Package readmes holds one test, TestREADMECommands, that runs every
// shell and SQL block of every README.md in the repository, literally, on a
// fresh copy of it, in order, and fails on the first block that fails:
// every command a README shows a user works as written.
//
// A block's fence says how it runs. Only the first word (the language) is
// shown by Markdown renderers; the rest of the line is for this test:
//
//	```sh                            run in the README's shell session (exports and cd carry over)
//	```sh background wait=mock.env   start in the background; go on once the file mock.env exists
//	```sh background wait=127.0.0.1:8080   ... once that address accepts connections
//	```sh app=PKG[,PKG...]           run in a new Go module of "your own" that imports PKG,
//	                                 beside which ../invoicing-go is free; then go build ./... there
//	```sh ci                         the repository's test command: checked to be run by .ci/run,
//	                                 not run again from inside itself
//	```sql                           run with psql "$DATABASE_URL", stopping on the first error
//
// Blocks of other languages (go, text, json) are not run. Background
// processes are stopped (SIGTERM, then SIGKILL) at the end of their README.
//
// Ports: the blocks run literally but for the loopback ports they name.
// Every 127.0.0.1:PORT in a block or a fence (wait=127.0.0.1:8080) is moved
// to a free port, the same one everywhere, and so is the default address
// of `invoicing mock` (4010), through INVOICING_MOCK_ADDR. The ports the
// READMEs name are held by the test while it runs (when they are free), a
// connection to one closed at once: a block that depended on one fails,
// and a user's own mock on 4010 or listener on 8080 changes nothing. A
// README that starts a server names its address on 127.0.0.1 (or relies on
// the mock's default).
//
// The environment is a user's with nothing set up but what the README
// says: the copy holds the files git tracks (and untracked ones it does not
// ignore), HOME is empty, `go install` puts binaries in a directory on
// PATH, no INVOICING_* variable is set but INVOICING_MOCK_ADDR (see Ports),
// and DATABASE_URL names a scratch PostgreSQL database (the one variable
// the READMEs ask the user for).
// `git clone https://github.com/invoicing-api/invoicing-go` clones the copy
// (git's url.insteadOf), as the network is out of reach; only the file
// protocol is allowed, so no block can reach the network through git. Go's
// module and build caches are the machine's.
package readmes
