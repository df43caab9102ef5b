package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every record is one line, without escaped line breaks: pgx's connection
// errors name each address on a line of its own.
func TestEveryLogRecordIsOneReadableLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	log := newLogger(&out, slog.LevelInfo)
	err := errors.New("failed to connect to `user=u database=d`:\n\t127.0.0.1:5432 (localhost): refused\n\t[::1]:5432 (localhost): refused")
	log.Error("a failure", "error", err, "detail", "two\nlines", "n", 3)
	log.Debug("below the level", "error", err)
	assert.Equal(t, `level=ERROR msg="a failure" error="failed to connect to `+"`user=u database=d`"+`: 127.0.0.1:5432 (localhost): refused [::1]:5432 (localhost): refused" detail="two lines" n=3`+"\n",
		out.String()[strings.Index(out.String(), "level="):])
}
