package invoicing_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go"
)

func TestPDFStreamsWithItsFilename(t *testing.T) {
	pdf := "%PDF-1.4\n" + string(make([]byte, 200_000)) + "\n%%EOF\n"
	c, api := newMock(t, always(200, pdf, "Content-Type", "application/pdf", "Content-Length", strconv.Itoa(len(pdf)),
		"Content-Disposition", `attachment; filename="Invoice-INV-0042.pdf"`),
		invoicing.WithMaxResponseBytes(1024)) // PDFs stream: the cap is for JSON
	f, err := c.Invoices.PDF(context.Background(), idInvoice)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "Invoice-INV-0042.pdf", f.Filename)
	assert.Equal(t, "application/pdf", f.ContentType)
	assert.EqualValues(t, len(pdf), f.Size)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, pdf, string(b))
	r := api.last(t)
	assert.Equal(t, "GET", r.Method)
	assert.Equal(t, "/invoices/"+idInvoice+"/pdf", r.Path)
	assert.Equal(t, "application/pdf, application/json", r.Header.Get("Accept"), "error statuses come back as JSON details")

	c, api = newMock(t, always(200, "%PDF", "Content-Type", "application/pdf; charset=binary",
		"Content-Disposition", `inline; filename=Quote-QU-0007.pdf`))
	f, err = c.Quotes.PDF(context.Background(), "7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, "Quote-QU-0007.pdf", f.Filename)
	assert.Equal(t, "application/pdf", f.ContentType)
	assert.EqualValues(t, -1, f.Size, "unknown")
	assert.Equal(t, "/quotes/7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d/pdf", api.last(t).Path)
}

// PDF returns as soon as the headers are in: the body is the caller's to
// read, and closing it ends the request.
func TestPDFReturnsBeforeTheBodyEnds(t *testing.T) {
	var mu sync.Mutex
	var reqCtx context.Context
	c, _ := newMock(t, func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		reqCtx = r.Context()
		mu.Unlock()
		return stallAfter(200, "application/pdf", "%PDF-1.7\n")(r)
	}, invoicing.WithTimeout(time.Minute))
	f, err := c.Invoices.PDF(context.Background(), idInvoice)
	require.NoError(t, err)
	head := make([]byte, 9)
	_, err = io.ReadFull(f, head)
	require.NoError(t, err)
	assert.Equal(t, "%PDF-1.7\n", string(head))
	mu.Lock()
	ctx := reqCtx
	mu.Unlock()
	assert.NoError(t, ctx.Err(), "the request lives while the body is read")
	require.NoError(t, f.Close())
	assert.Error(t, ctx.Err(), "Close ends it")
}

func TestPDFFileNamesAreSafe(t *testing.T) {
	longUTF8 := strings.Repeat("é", 200) + ".pdf" // 404 bytes
	longASCII := strings.Repeat("a", 300) + ".pdf"
	longExt := strings.Repeat("b", 300) + ".a-very-long-extension"
	for _, tc := range []struct{ disposition, want string }{
		{`attachment; filename="Invoice-INV-0042.pdf"`, "Invoice-INV-0042.pdf"},
		{`attachment; filename="../../etc/passwd"`, "passwd"},
		{`attachment; filename="/abs/path/Invoice-1.pdf"`, "Invoice-1.pdf"},
		{`attachment; filename="C:\\Windows\\evil.pdf"`, "evil.pdf"},
		{`attachment; filename="dir/"`, ""},
		{"attachment; filename*=UTF-8''Invoice%C2%85-1.pdf", "Invoice-1.pdf"},            // C1 control (NEL)
		{"attachment; filename*=UTF-8''Invoice%07%1B-1%7F.pdf", "Invoice-1.pdf"},         // C0 controls and DEL
		{"attachment; filename*=UTF-8''Invoice-%E2%80%AEfdp.exe", "Invoice-fdp.exe"},     // right-to-left override
		{"attachment; filename*=UTF-8''a%E2%81%A6b%E2%81%A9c%E2%80%AAd.pdf", "abcd.pdf"}, // isolates, embedding
		{"attachment; filename*=UTF-8''a%E2%80%8Eb%E2%80%8Fc%D8%9Cd.pdf", "abcd.pdf"},    // LRM, RLM, ALM
		{"attachment; filename*=UTF-8''Invoice-%C3%A9.pdf", "Invoice-é.pdf"},
		{"attachment; filename*=UTF-8''" + strings.ReplaceAll(longUTF8, "é", "%C3%A9"), strings.Repeat("é", 125) + ".pdf"},
		{`attachment; filename="` + longASCII + `"`, strings.Repeat("a", 251) + ".pdf"},
		{`attachment; filename="` + longExt + `"`, longExt[:255]},
		{`attachment; filename="."`, ""},
		{`attachment; filename=".."`, ""},
		{`attachment; filename="..."`, ""},
		{`attachment; filename="a/.."`, ""},
		{`attachment; filename="%2e%2e"`, "%2e%2e"}, // not decoded: a harmless name
		{`attachment; filename=".hidden.pdf"`, ".hidden.pdf"},
		{`attachment; filename=""`, ""},
		{`inline`, ""},
		{`attachment; filename="unterminated`, ""},
		{``, ""},
	} {
		c, _ := newMock(t, always(200, "%PDF", "Content-Type", "application/pdf", "Content-Disposition", tc.disposition))
		f, err := c.Invoices.PDF(context.Background(), idInvoice)
		require.NoError(t, err, tc.disposition)
		require.NoError(t, f.Close())
		assert.Equal(t, tc.want, f.Filename, tc.disposition)
		assert.LessOrEqual(t, len(f.Filename), 255)
	}
}

// closeTracker is a body that records whether it was closed.
type closeTracker struct {
	io.Reader
	mu     sync.Mutex
	closed bool
}

func (b *closeTracker) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}

func (b *closeTracker) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

func TestPDFOfAnotherContentTypeIsAnError(t *testing.T) {
	for _, ct := range []string{"text/html", "application/json", "", "application/pdfx", "text/html; charset=utf-8"} {
		body := &closeTracker{Reader: strings.NewReader("<html>login</html>")}
		c, api := newMock(t, func(r *http.Request) (*http.Response, error) {
			resp := httpmock.NewStringResponse(200, "")
			resp.Header.Set("Content-Type", ct)
			resp.Body = body
			return resp, nil
		})
		f, err := c.Quotes.PDF(context.Background(), idInvoice)
		assert.Nil(t, f)
		require.Error(t, err, ct)
		assert.Equal(t, `invoicing: GET /quotes/`+idInvoice+`/pdf: unexpected content type "`+ct+`" (want application/pdf)`, err.Error())
		assert.True(t, body.isClosed(), "the body is closed (%q)", ct)
		assert.Equal(t, 1, len(api.requests()), "not retried")
	}
	// Media types are case-insensitive.
	c, _ := newMock(t, always(200, "%PDF", "Content-Type", "Application/PDF"))
	f, err := c.Invoices.PDF(context.Background(), idInvoice)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestPDFErrorsAreTypedWithTheirDetail(t *testing.T) {
	ctx := context.Background()
	c, api := newMock(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "application/json") {
			reply(w, 404, `{"detail": "Invoice not found"}`)
			return
		}
		http.Error(w, "<html>Not Found</html>", 404)
	})
	_, err := c.Invoices.PDF(ctx, idInvoice)
	require.ErrorIs(t, err, invoicing.ErrNotFound)
	e := apiError(t, err)
	assert.Equal(t, "Invoice not found", e.Detail)
	assert.Equal(t, "/invoices/"+idInvoice+"/pdf", e.Path)
	assert.Len(t, api.requests(), 1)

	// A 5xx is retried, as for any GET; an HTML page gives the status text.
	c, api = newMock(t, sequence(always(503, `{"detail": "busy"}`), always(200, "%PDF-1.7", "Content-Type", "application/pdf")))
	f, err := c.Invoices.PDF(ctx, idInvoice)
	require.NoError(t, err)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, "%PDF-1.7", string(b))
	assert.Len(t, api.requests(), 2)

	c, _ = newMock(t, always(500, fixture(t, "error_502.html"), "Content-Type", "text/html"), invoicing.WithMaxRetries(0))
	_, err = c.Quotes.PDF(ctx, idInvoice)
	require.ErrorIs(t, err, invoicing.ErrServer)
	assert.Equal(t, "Internal Server Error", apiError(t, err).Detail)

	// An id that is not a UUID sends nothing.
	c, api = newMock(t, always(200, "%PDF", "Content-Type", "application/pdf"))
	for _, id := range []string{"", "123", "../clients", idInvoice + "/x"} {
		_, err = c.Invoices.PDF(ctx, id)
		var pe *invoicing.ParamError
		require.ErrorAs(t, err, &pe, id)
		assert.Equal(t, "id", pe.Field)
	}
	assert.Empty(t, api.requests())
}

// For a PDF the per-attempt deadline bounds the wait for the headers, then
// each wait for more of the body: a stall is an error, a slow reader is not.
//
// A slow reader is the one wait no state stands for: the test must let more
// than the deadline pass between reads, so it sleeps twice the deadline
// before each.
func TestPDFDeadlineIsPerRead(t *testing.T) {
	const timeout = 150 * time.Millisecond
	c, _ := newMock(t, stallAfter(200, "application/pdf", "%PDF-1.7\n"), invoicing.WithTimeout(timeout))
	f, err := c.Invoices.PDF(context.Background(), idInvoice)
	require.NoError(t, err, "the headers came in time")
	defer f.Close()
	head := make([]byte, 9)
	_, err = io.ReadFull(f, head)
	require.NoError(t, err)
	_, err = f.Read(make([]byte, 10))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "the response body stalled for 150ms (per-attempt timeout)")

	pdf := bytes.Repeat([]byte("%PDF-1.7 0123456789\n"), 100)
	c, _ = newMock(t, always(200, string(pdf), "Content-Type", "application/pdf"), invoicing.WithTimeout(timeout/3))
	f, err = c.Invoices.PDF(context.Background(), idInvoice)
	require.NoError(t, err)
	defer f.Close()
	var got []byte
	buf := make([]byte, 500)
	for {
		time.Sleep(2 * timeout / 3) // twice the timeout, between reads
		n, err := f.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	assert.Equal(t, pdf, got)

	// Headers that never come end the attempt, and the GET is repeated.
	c, api := newMock(t, stallHeaders, invoicing.WithTimeout(100*time.Millisecond), invoicing.WithMaxRetries(1))
	_, err = c.Quotes.PDF(context.Background(), idInvoice)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "no complete response within 100ms")
	assert.Equal(t, 2, len(api.requests()))
}
