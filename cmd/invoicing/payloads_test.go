package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSamplePayloadsHaveTheDocumentedFields compares each sample body's
// fields, at the top and in nested objects, with the webhooks package's
// fixture of the same event, which follows the API's payload tables. The
// insides of interactive_selections (a map keyed by ids) and of
// previous_acceptance (whose shape the API does not show) are left out.
func TestSamplePayloadsHaveTheDocumentedFields(t *testing.T) {
	for _, event := range allEventTypes {
		fixture, err := os.ReadFile(filepath.Join("..", "..", "webhooks", "testdata", string(event)+".json"))
		require.NoError(t, err)
		sample, err := json.Marshal(samplePayload(event, time.Now()), payloadOptions)
		require.NoError(t, err)
		assert.Equal(t, fieldPaths(t, fixture), fieldPaths(t, sample), event)
	}
}

// fieldPaths lists the paths of every object member in a JSON document,
// with array elements folded into "[]".
func fieldPaths(t *testing.T, doc []byte) []string {
	var v any
	require.NoError(t, json.Unmarshal(doc, &v))
	seen := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				seen[prefix+k] = true
				if k != "interactive_selections" && k != "previous_acceptance" {
					walk(prefix+k+".", child)
				}
			}
		case []any:
			for _, child := range v {
				walk(prefix+"[].", child)
			}
		}
	}
	walk("", v)
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
