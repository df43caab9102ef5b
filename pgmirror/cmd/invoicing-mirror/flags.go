package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/invoicing-api/invoicing-go/internal/cliflag"
)

// parseFlags parses the arguments of the command cmd ("invoicing-mirror",
// "invoicing-mirror verify", ...), which takes flags only, into fs. It
// returns false, with the exit code, when the command ends there: exitOK
// after --help (usage and the flags printed to stderr), exitUsage after a
// mistake (explained on stderr, with a pointer to --help) or an argument.
func parseFlags(fs *flag.FlagSet, args []string, cmd, usage string, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usage)
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return exitOK, false
		}
		fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for every flag.\n", cmd, cliflag.Explain(fs, err), cmd)
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", cmd, fs.Arg(0))
		return exitUsage, false
	}
	return 0, true
}
