package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/term"
)

// defaultWidth is the table width on a terminal whose size is unknown.
const defaultWidth = 80

// terminal returns w as a file when it is a terminal: not a pipe, a file
// or another character device such as /dev/null.
func terminal(w io.Writer) (*os.File, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, false
	}
	return f, true
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	_, ok := terminal(w)
	return ok
}

// tableWidth is the width tables are fitted to: $COLUMNS when set, else the
// width of the terminal on stdout (defaultWidth when it cannot be read),
// else 0 (no limit) when stdout is not a terminal, as in a pipe. The width
// is asked of the terminal because a shell does not export COLUMNS to the
// programs it runs.
func (c *cli) tableWidth() int {
	if n, err := strconv.Atoi(c.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	f, ok := terminal(c.stdout)
	if !ok {
		return 0
	}
	if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
		return cols
	}
	return defaultWidth
}

// progressEvery is how many records a progress update stands for: a page.
const progressEvery = 100

// progress counts the records of a long list on stderr, when stderr is a
// terminal, and rubs the count out when the list ends.
type progress struct {
	w     io.Writer // nil: not shown
	noun  string
	n     int
	shown bool
}

func (c *cli) newProgress(noun string) *progress {
	p := &progress{noun: noun}
	if isTerminal(c.stderr) {
		p.w = c.stderr
	}
	return p
}

// add counts one record.
func (p *progress) add() {
	p.n++
	if p.w != nil && p.n%progressEvery == 0 {
		fmt.Fprintf(p.w, "\r%d %s...", p.n, p.noun)
		p.shown = true
	}
}

// done clears the count.
func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}
