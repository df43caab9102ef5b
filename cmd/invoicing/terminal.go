package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
)

// defaultWidth is the table width on a terminal whose size is unknown.
const defaultWidth = 80

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// tableWidth is the width tables are fitted to: $COLUMNS when set, else the
// width of the terminal on stdout (defaultWidth when it cannot be read),
// else 0 (no limit) when stdout is not a terminal, as in a pipe.
func (c *cli) tableWidth() int {
	if n, err := strconv.Atoi(c.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if !isTerminal(c.stdout) {
		return 0
	}
	if n := terminalWidth(c.stdout.(*os.File)); n > 0 {
		return n
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
