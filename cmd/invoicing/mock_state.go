package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// businessesState is the --state file of a mock of named businesses: each
// business's invoicingtest state (Server.SaveState) and webhook secret. The
// file of a mock of one unnamed business is that business's state alone.
type businessesState struct {
	Businesses []businessState `json:"businesses"`
}

// businessState is one business of a businessesState.
type businessState struct {
	Name          string         `json:"name"`
	WebhookSecret string         `json:"webhook_secret"`
	State         jsontext.Value `json:"state"`
}

// restoreState loads the state file into the businesses when path names
// one, and reports whether it did. A missing file is not an error: it is
// written on exit. A business whose secret comes from the environment keeps
// it.
func restoreState(businesses []*mockBusiness, path string) (bool, error) {
	if path == "" {
		return false, nil
	}
	doc, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mock: %w", err)
	}
	if err := loadState(businesses, doc); err != nil {
		return false, fmt.Errorf("mock: restoring %s: %w", path, err)
	}
	return true, nil
}

// loadState loads doc, a state file, into the businesses.
func loadState(businesses []*mockBusiness, doc []byte) error {
	var top map[string]jsontext.Value
	if err := json.Unmarshal(doc, &top, jsonopt.Decode); err != nil {
		return err
	}
	_, several := top["businesses"]
	named := businesses[0].name != ""
	switch {
	case !named && !several:
		return businesses[0].srv.LoadState(bytes.NewReader(doc))
	case !named:
		return errors.New("it holds the state of several businesses: start the mock with the same --business flags")
	case !several:
		return errors.New("it holds the state of a mock of one business: start it without --business, or give another --state file")
	}
	var st businessesState
	if err := json.Unmarshal(doc, &st, jsonopt.Decode); err != nil {
		return err
	}
	saved := make([]string, len(st.Businesses))
	for i, b := range st.Businesses {
		saved[i] = b.Name
	}
	var names []string
	for _, b := range businesses {
		names = append(names, b.name)
	}
	if !slices.Equal(saved, names) {
		return fmt.Errorf("it holds businesses %s: start the mock with --business flags naming them, in that order (it was started with %s)", strings.Join(saved, ", "), strings.Join(names, ", "))
	}
	for i, b := range businesses {
		if err := b.srv.LoadState(bytes.NewReader(st.Businesses[i].State)); err != nil {
			return fmt.Errorf("business %s: %w", b.name, err)
		}
		if secret := st.Businesses[i].WebhookSecret; secret != "" && isSigningSecret(secret) {
			b.srv.SetWebhookSecret(secret) // the environment's, set later, takes precedence
		}
	}
	return nil
}

// saveState writes the businesses' data to path, readable by its owner
// only: it holds the mock's API keys.
func saveState(businesses []*mockBusiness, path string) error {
	write := businesses[0].srv.SaveState
	if businesses[0].name != "" {
		write = func(w io.Writer) error { return writeBusinessesState(w, businesses) }
	}
	if err := writeFileAtomic(path, write); err != nil {
		return fmt.Errorf("mock: saving the data to %s: %w", path, err)
	}
	return nil
}

// writeBusinessesState writes the businessesState of a mock of named
// businesses.
func writeBusinessesState(w io.Writer, businesses []*mockBusiness) error {
	var st businessesState
	for _, b := range businesses {
		var buf bytes.Buffer
		if err := b.srv.SaveState(&buf); err != nil {
			return err
		}
		secret := b.srv.WebhookSecret()
		if b.secretFromEnv {
			secret = "" // the environment's stays there
		}
		st.Businesses = append(st.Businesses, businessState{Name: b.name, WebhookSecret: secret, State: jsontext.Value(buf.Bytes())})
	}
	doc, err := json.Marshal(st, jsonopt.Encode, jsontext.WithIndent("  "))
	if err == nil {
		_, err = w.Write(append(doc, '\n'))
	}
	return err
}
