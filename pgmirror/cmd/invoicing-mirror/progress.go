package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// progress writes the backfill's progress line on stderr, at most once a
// second, between the log lines.
type progress struct {
	w     io.Writer
	start time.Time

	mu        sync.Mutex
	resources map[string]pgmirror.Progress
	written   time.Time
	listed    int // the records the last line counted
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, start: time.Now(), resources: map[string]pgmirror.Progress{}}
}

// update is the mirror's OnProgress. A line is written when records were
// written since the last one: a walk that starts again after a failure,
// without writing, adds no line.
func (p *progress) update(pr pgmirror.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resources[pr.Resource] = pr
	if time.Since(p.written) >= time.Second && p.seen() != p.listed {
		p.written, p.listed = time.Now(), p.seen()
		fmt.Fprintln(p.w, p.line())
	}
}

// seen is the records the backfill has written, all resources together.
func (p *progress) seen() int {
	n := 0
	for _, pr := range p.resources {
		n += pr.Listed
	}
	return n
}

// finish writes the last line.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.resources) > 0 {
		fmt.Fprintln(p.w, p.line())
	}
}

// line is, for example:
//
//	backfill: 5200 records, 2600/s; invoices 4000/5000 (80%), quotes 1000/1000
func (p *progress) line() string {
	names := make([]string, 0, len(p.resources))
	for name := range p.resources {
		names = append(names, name)
	}
	slices.Sort(names)
	seen := p.seen()
	parts := make([]string, 0, len(names))
	for _, name := range names {
		pr := p.resources[name]
		part := fmt.Sprintf("%s %d/%d", name, pr.Listed, pr.Total)
		if pr.Total > 0 && pr.Listed < pr.Total {
			part += fmt.Sprintf(" (%d%%)", 100*pr.Listed/pr.Total)
		}
		if pr.Pass > 1 {
			part += fmt.Sprintf(" pass %d", pr.Pass)
		}
		parts = append(parts, part)
	}
	rate := float64(seen) / max(time.Since(p.start).Seconds(), 0.001)
	return fmt.Sprintf("backfill: %d records, %.0f/s; %s", seen, rate, strings.Join(parts, ", "))
}
