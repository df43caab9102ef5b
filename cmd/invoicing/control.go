package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/invoicing-api/invoicing-go/invoicingtest"
)

// controlTimeout bounds one control call. Deliveries are synchronous on
// the mock, and a receiver may take up to the 30 s the service allows for
// each of the events one action raises.
const controlTimeout = 2 * time.Minute

// errNotMock is the error (wrapped) of a base URL that is not a mock's.
var errNotMock = errors.New("not an invoicing mock")

// mock is the mock the environment names: the client of its control
// endpoints (under the API's base URL, at /_mock, a path the API never
// uses), which make the changes the API cannot (send, pay, void, accept,
// advance the clock) so that the events they raise are real, and what it
// answered when probed.
type mock struct {
	*invoicingtest.ControlClient
	base string // the API base URL
	info *invoicingtest.ControlInfo
}

// probeMock returns the mock the environment names, and an error wrapping
// errNotMock when the service answers but is not one. Missing
// configuration is a usage error of cmd.
func (c *cli) probeMock(ctx context.Context, cmd string) (*mock, error) {
	// The same configuration, checked the same way, as the reads.
	if _, err := c.apiClient(cmd); err != nil {
		return nil, err
	}
	m := &mock{base: strings.TrimRight(c.getenv(envBaseURL), "/")}
	m.ControlClient = invoicingtest.NewControlClient(m.base, c.getenv(c.apiKeyVar()), &http.Client{Timeout: controlTimeout})
	info, err := m.Info(ctx)
	var ce *invoicingtest.ControlError
	switch {
	case errors.As(err, &ce) && (ce.StatusCode == http.StatusUnauthorized || ce.StatusCode == http.StatusForbidden):
		// A mock with a wrong key, or a service that checks keys first.
		return nil, fmt.Errorf("%s: %s answered %d to the mock's control endpoint: if it is a mock, set %s to the full key it printed", cmd, m.base, ce.StatusCode, c.apiKeyVar())
	case errors.As(err, &ce), errors.Is(err, invoicingtest.ErrNoControl):
		return nil, fmt.Errorf("%s: %s is %w (%v)", cmd, m.base, errNotMock, err)
	case err != nil:
		return nil, fmt.Errorf("%s: cannot reach %s (%s): is the mock running? (%w)", cmd, m.base, envBaseURL, err)
	case c.business != "" && info.Business != c.business:
		return nil, fmt.Errorf("%s: %s holds a key of %s on the mock at %s, not of business %s: set it to the key the mock exported for %s", cmd, c.apiKeyVar(), businessOf(info), m.base, c.business, c.business)
	}
	m.info = info
	return m, nil
}

// businessOf names the business info describes, for a message.
func businessOf(info *invoicingtest.ControlInfo) string {
	if info.Business == "" {
		return "its only business"
	}
	return "business " + info.Business
}

// where says where the mock's changes happen: the mock's base URL, and the
// business when it serves several.
func (m *mock) where() string {
	if m.info.Business == "" {
		return "the mock at " + m.base
	}
	return "business " + m.info.Business + " of the mock at " + m.base
}
