// Package testkit holds the helpers that the tests of several of the
// repository's modules share: a Buffer that goroutines may write while a
// test reads it, a list drained into a slice, and a loop run for a test.
// Only tests import it.
package testkit

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer is an io.Writer safe for concurrent use: a logger's or a command's
// output that a test reads while goroutines write it. The zero value is
// ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Lines returns everything written so far as lines, without their
// newlines; nil when nothing was written. A last line without its newline
// (still being written) is included.
func (b *Buffer) Lines() []string {
	s := strings.TrimSuffix(b.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Count returns how many of lines contain substr.
func Count(lines []string, substr string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, substr) {
			n++
		}
	}
	return n
}
