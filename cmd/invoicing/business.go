package main

import (
	"flag"
	"fmt"
	"regexp"
	"strings"
)

// A mock of several businesses ('invoicing mock --business NAME...') serves
// them all at one base URL and tells them apart by API key. The other
// commands pick a business with --business NAME, which takes its key (and
// webhook secret) from the variables the mock exports for it:
// INVOICING_API_KEY_NAME and INVOICING_WEBHOOK_SECRET_NAME, NAME in capitals
// with - as _.

// businessName is what a mock's business may be called: a name that is
// also a variable's suffix, a URL path segment and an invoicing-mirror
// business name.
var businessName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// checkBusinessName returns an error unless name is a business name.
func checkBusinessName(name string) error {
	if !businessName.MatchString(name) {
		return fmt.Errorf("%q is not a business name: lower-case letters, digits, - and _, starting with a letter or digit, at most 64", name)
	}
	return nil
}

// envFor is the variable that holds the value of base (INVOICING_API_KEY,
// INVOICING_WEBHOOK_SECRET) for business: base itself when business is "".
func envFor(base, business string) string {
	if business == "" {
		return base
	}
	return base + "_" + strings.ToUpper(strings.ReplaceAll(business, "-", "_"))
}

// parseWithBusiness parses the command line of a command that calls the
// service, with --business among its flags, and returns its arguments:
// with --business NAME, the command uses the key (and secret) of that
// business of a mock of several.
func (c *cli) parseWithBusiness(fs *flag.FlagSet, help string, args []string) ([]string, error) {
	fs.StringVar(&c.business, "business", "", "act as business `NAME` of a mock of several: its key is $"+envAPIKey+"_NAME (NAME in capitals, - as _)")
	rest, err := c.parse(fs, help, args)
	if err == nil && c.business != "" {
		if berr := checkBusinessName(c.business); berr != nil {
			err = usagef(fs.Name(), "--business %s", berr)
		}
	}
	return rest, err
}

// apiKeyVar is the variable the API key comes from: INVOICING_API_KEY, or
// with --business NAME, INVOICING_API_KEY_NAME.
func (c *cli) apiKeyVar() string { return envFor(envAPIKey, c.business) }

// secretVar is the variable trigger and webhooks take a signing secret
// from: INVOICING_WEBHOOK_SECRET, or with --business NAME,
// INVOICING_WEBHOOK_SECRET_NAME.
func (c *cli) secretVar() string { return envFor(envWebhookSecret, c.business) }
