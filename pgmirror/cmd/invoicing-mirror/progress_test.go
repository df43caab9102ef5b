package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// A line at most a second, and only when records were written since the
// last: a walk starting again after a failure adds none.
func TestProgressWritesALineWhenRecordsWereWritten(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := newProgress(&out)
	aSecondLater := func() { p.written = p.written.Add(-time.Second) }

	p.update(pgmirror.Progress{Resource: "invoices", Pass: 1, Total: 1000})
	assert.Empty(t, out.String(), "nothing written yet")
	p.update(pgmirror.Progress{Resource: "invoices", Pass: 1, Listed: 500, Total: 1000})
	p.update(pgmirror.Progress{Resource: "invoices", Pass: 1, Listed: 600, Total: 1000})
	aSecondLater()
	for range 5 { // the walk fails and starts again from its checkpoint
		p.update(pgmirror.Progress{Resource: "invoices", Pass: 1, Listed: 600, Total: 1000})
		aSecondLater()
	}
	p.update(pgmirror.Progress{Resource: "invoices", Pass: 2, Listed: 1000, Total: 1000})
	p.finish()

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Len(t, lines, 4, out.String())
	assert.Regexp(t, `^backfill: 500 records, \d+/s; invoices 500/1000 \(50%\)$`, lines[0])
	assert.Regexp(t, `^backfill: 600 records, \d+/s; invoices 600/1000 \(60%\)$`, lines[1], "once, not five times")
	assert.Regexp(t, `^backfill: 1000 records, \d+/s; invoices 1000/1000 pass 2$`, lines[2])
	assert.Regexp(t, `^backfill: 1000 records, \d+/s; invoices 1000/1000 pass 2$`, lines[3], "finish writes the last state")
}
