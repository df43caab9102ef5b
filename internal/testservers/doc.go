// Package testservers starts real servers for the tests of the SDK's store
// adapters: a redis-server and a PostgreSQL cluster, each on a free loopback
// port in a temporary directory of its own, stopped and removed by Close.
//
// Binaries are found on PATH; PostgreSQL's initdb and postgres are also
// looked for under /usr/lib/postgresql/*/bin, where Debian installs them.
// PostgreSQL refuses to run as root: when the tests run as root, initdb and
// postgres run as the unprivileged "postgres" user that Debian's package
// creates, and the temporary directory is given to that user.
//
// A server that cannot be started gives an error that says what to install
// (see .ci/install-tools); tests must fail on it, never skip. Start each
// server once per test binary, in TestMain:
//
//	var redisAddr string
//
//	func TestMain(m *testing.M) {
//		srv, err := testservers.StartRedis()
//		if err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//		redisAddr = srv.Addr
//		code := m.Run()
//		srv.Close()
//		os.Exit(code)
//	}
//
// The package is a module of its own (the package uses only the standard
// library), so that the SDK's module neither requires nor tests it. The
// module also holds webhooktest, the store modules' signed deliveries and
// load harnesses, which uses the SDK's webhooks package: the module
// requires the SDK through a replace directive to the repository's root.
// The modules whose tests use it require it with a replace directive to this
// directory and import it under its internal path, which Go allows to every
// module under github.com/invoicing-api/invoicing-go.
package testservers
