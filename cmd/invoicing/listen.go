package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/invoicing-api/invoicing-go/webhooks"
)

const listenHelp = `
Usage: invoicing listen [--addr 127.0.0.1:8080] [--secret S] [--forward URL]

Receives webhook deliveries on any path, verifies each with package webhooks
(the signature with the signing secret, --secret or else $` + envWebhookSecret + `;
a timestamp within 5 minutes; a body that fits its event type) and prints
one line per verified event: its signing time, type, delivery id and key
fields. Refused deliveries get webhooks.Handler's answer (401 for a bad
signature or a stale timestamp; 400, 405 or 413 for other bad requests) and
a line on stderr.

--forward URL passes each verified delivery on unchanged, with the same body
bytes and headers, to your own receiver, and answers the sender 200 when
your receiver answered 2xx and 500 otherwise, so that the service (or
trigger) sees your receiver's failures.

It stops on Ctrl-C or SIGTERM.

Example:
  invoicing listen --secret "$SECRET" --forward http://127.0.0.1:3000/webhooks
`

// listen runs "invoicing listen".
func (c *cli) listen(ctx context.Context, args []string) error {
	fs := newFlags("listen")
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT`; port 0 picks a free one")
	secret := fs.String("secret", "", "verify with the signing secret `S` (default $"+envWebhookSecret+")")
	forward := fs.String("forward", "", "pass verified deliveries on to `URL`")
	rest, err := c.parse(fs, listenHelp, args)
	if err != nil {
		return err
	}
	if err := noArgs("listen", rest); err != nil {
		return err
	}
	if *secret == "" {
		*secret = c.getenv(envWebhookSecret)
	}
	v, err := webhooks.NewVerifier(*secret)
	if err != nil {
		return usagef("listen", "no usable signing secret (%v): give --secret or set %s", err, envWebhookSecret)
	}
	if *forward != "" {
		if err := checkHTTPURL("--forward", *forward, "listen"); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The forwarding client sends the headers as received: it neither adds
	// Accept-Encoding nor follows redirects.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DisableCompression = true
	rcv := &receiver{out: c.stdout, forward: *forward, client: &http.Client{
		Transport:     transport,
		Timeout:       deliveryTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	srv := &http.Server{
		Handler:           withHeader(webhooks.Handler(v, rcv.handle, webhooks.WithLogger(logger))),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	fmt.Fprintf(c.stdout, "Listening on http://%s/ (any path), verifying with the signing secret.\n", ln.Addr())
	if *forward != "" {
		fmt.Fprintf(c.stdout, "Forwarding verified deliveries to %s.\n", *forward)
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("listen: %w", err)
	case <-ctx.Done():
	}
	c.stop()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("listen: shutting down: %w", err)
	}
	return nil
}

// headerKey is the context key under which withHeader keeps the request's
// headers for receiver.handle.
type headerKey struct{}

// withHeader hands the request's headers to the delivery function through
// the context, since webhooks.Handler passes it the body but not the
// headers, which --forward sends on.
func withHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), headerKey{}, r.Header.Clone())))
	})
}

// receiver prints verified deliveries and forwards them.
type receiver struct {
	mu      sync.Mutex // serialises lines on out
	out     io.Writer
	forward string
	client  *http.Client
}

// handle prints one line for a verified delivery, after forwarding it when
// asked to. A failed forward is an error, which Handler answers with 500.
func (r *receiver) handle(ctx context.Context, d *webhooks.Delivery) error {
	line := describe(d)
	if r.forward == "" {
		r.println(line)
		return nil
	}
	header, _ := ctx.Value(headerKey{}).(http.Header)
	status, took, err := r.pass(ctx, header, d.Body)
	if err != nil {
		r.println(line + "  -> forward failed: " + err.Error())
		return err
	}
	r.println(fmt.Sprintf("%s  -> %d in %s", line, status, took))
	if status < 200 || status > 299 {
		return fmt.Errorf("the forward target answered %d", status)
	}
	return nil
}

func (r *receiver) println(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(r.out, line)
}

// hopByHop are the headers that belong to one connection and are not
// forwarded; the client sets Content-Length and Host itself.
var hopByHop = []string{
	"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Content-Length", "Host",
}

// pass POSTs the delivery's exact body with its headers to the forward URL
// and returns the status and the time taken.
func (r *receiver) pass(ctx context.Context, header http.Header, body []byte) (int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.forward, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	if header == nil {
		return 0, 0, errors.New("the request's headers are missing")
	}
	req.Header = header.Clone()
	for _, h := range hopByHop {
		req.Header.Del(h)
	}
	start := time.Now()
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, time.Since(start).Round(time.Microsecond), nil
}
