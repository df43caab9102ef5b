package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// ErrUnknownBusiness is the error (wrapped) a VerifierFunc returns for a
// business it has no signing secret for: BusinessHandler answers 404.
var ErrUnknownBusiness = errors.New("webhooks: unknown business")

// A VerifierFunc returns the Verifier of one business: one built with the
// signing secret of that business's webhook endpoint (and, while a secret
// is being rotated, the previous one too, with WithSecrets). It returns an
// error wrapping ErrUnknownBusiness for a business it does not know; any
// other error makes BusinessHandler answer 500, so the service retries.
//
// It is called for every delivery: keep each business's Verifier and build
// it again only when its secrets change (NewVerifier costs more than a
// verification).
type VerifierFunc func(ctx context.Context, business string) (*Verifier, error)

// BusinessHandler returns an http.Handler for one webhook endpoint shared by
// many businesses (an accounting practice's client businesses, a platform's
// customers). A delivery carries no business id, so the business comes from
// the URL: mount the handler on a pattern with a {business} wildcard, such
// as "POST /webhooks/{business}", and register each business's endpoint in
// the service with its own URL. (With another router, set the wildcard with
// r.SetPathValue("business", ...) before calling the handler.)
//
// Each delivery is verified only with its own business's Verifier, from
// verifier: a delivery signed for one business is refused (401) on
// another's URL. It then goes as with Handler, with Delivery.Business set,
// and a Deduper (WithDeduper) sees each business's delivery ids apart,
// as "business/id". It answers as Handler does, and also 404 for a URL
// without a business or a business verifier does not know
// (ErrUnknownBusiness), and 500 when verifier fails otherwise.
// BusinessHandler panics if verifier or fn is nil.
func BusinessHandler(verifier VerifierFunc, fn func(ctx context.Context, d *Delivery) error, opts ...HandlerOption) http.Handler {
	if verifier == nil || fn == nil {
		panic("webhooks: BusinessHandler needs a non-nil VerifierFunc and function")
	}
	return newHandler(func(r *http.Request) (*Verifier, string, error) {
		business := r.PathValue("business")
		if business == "" {
			return nil, "", fmt.Errorf("%w: the URL names no business (mount the handler on a pattern with a {business} wildcard)", ErrUnknownBusiness)
		}
		v, err := verifier(r.Context(), business)
		switch {
		case err != nil:
			return nil, business, fmt.Errorf("webhooks: the Verifier of business %q: %w", business, err)
		case v == nil:
			return nil, business, fmt.Errorf("webhooks: the VerifierFunc returned no Verifier for business %q", business)
		}
		return v, business, nil
	}, fn, opts)
}
