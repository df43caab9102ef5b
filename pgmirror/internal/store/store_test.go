package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Unreachable tells a database that cannot be reached from a statement
// that fails.
func TestUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, connectErr := pgx.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	require.Error(t, connectErr)
	for name, c := range map[string]struct {
		err  error
		want bool
	}{
		"connection refused":  {connectErr, true},
		"shutting down":       {&pgconn.PgError{Code: "57P01"}, true},
		"starting up":         {fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "57P03"}), true},
		"connection failure":  {&pgconn.PgError{Code: "08006"}, true},
		"too many clients":    {&pgconn.PgError{Code: "53300"}, true},
		"a deadline":          {context.DeadlineExceeded, true},
		"a unique violation":  {&pgconn.PgError{Code: "23505"}, false},
		"a wrong password":    {&pgconn.PgError{Code: "28P01"}, false},
		"an undefined table":  {&pgconn.PgError{Code: "42P01"}, false},
		"the caller stopping": {context.Canceled, false},
		"none":                {nil, false},
	} {
		assert.Equal(t, c.want, Unreachable(c.err), name)
		if c.err != nil {
			assert.Equal(t, c.want, (&Error{Op: "testing", Err: c.err}).Away(), name)
		}
	}
	assert.True(t, (&Error{Op: "writing", Err: &pgconn.PgError{Code: "40P01"}}).Conflict(), "a deadlock")
	assert.False(t, (&Error{Op: "writing", Err: &pgconn.PgError{Code: "23505"}}).Conflict())
}
