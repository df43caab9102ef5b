package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
)

var databaseURL string

func TestMain(m *testing.M) {
	server, err := testservers.StartPostgres()
	if err != nil {
		fmt.Fprintln(os.Stderr, "the webhook-cluster example needs a real PostgreSQL:", err)
		os.Exit(1)
	}
	databaseURL = server.URL
	code := m.Run()
	if err := server.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

func TestRunProcessesEveryDeliveryExactlyOnce(t *testing.T) {
	var out bytes.Buffer
	rep, err := run(context.Background(), config{databaseURL: databaseURL, replicas: 3, events: 40}, &out)
	require.NoError(t, err)
	t.Log("\n" + out.String())

	assert.Equal(t, 40, rep.sent)
	assert.Equal(t, 40, rep.acknowledged, "every delivery succeeded within the retry schedule")
	assert.Positive(t, rep.retried, "refusals and the crash made the service retry")
	assert.Greater(t, rep.attempts, rep.sent)
	assert.Equal(t, 40, rep.processedOnce)
	assert.Zero(t, rep.processedMore)
	assert.Positive(t, rep.perReplica[1])
	assert.Positive(t, rep.perReplica[2])
	assert.Contains(t, out.String(), "processed exactly once: 40 of 40 (more than once: 0)")

	// A second run in the same database counts only its own deliveries.
	out.Reset()
	rep, err = run(context.Background(), config{databaseURL: databaseURL, replicas: 4, events: 10}, &out)
	require.NoError(t, err)
	assert.Equal(t, 10, rep.processedOnce)
}

func TestRunRefusesTooFewReplicas(t *testing.T) {
	_, err := run(context.Background(), config{databaseURL: databaseURL, replicas: 2, events: 10}, &bytes.Buffer{})
	assert.ErrorContains(t, err, "at least 3 replicas")
}
