package invoicingtest

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInvoicePDF(t *testing.T) {
	srv, _ := newServer(t)
	inv := createInvoice(t, srv, map[string]any{"invoice_number": "A/7 (draft)"})
	r := get(t, srv, "/invoices/"+inv["id"].(string)+"/pdf").requireStatus(t, http.StatusOK)
	assert.Equal(t, "application/pdf", r.header.Get("Content-Type"))
	assert.Equal(t, `attachment; filename="Invoice-A_7__draft_.pdf"`, r.header.Get("Content-Disposition"),
		"characters unsafe in a filename are replaced")
	requireValidPDF(t, r.body)
	assert.Contains(t, string(r.body), `(TAX INVOICE A/7 \(draft\)) Tj`)
	assert.Contains(t, string(r.body), "Total: AUD 101.00")

	inv = createInvoice(t, srv, nil)
	r = get(t, srv, "/invoices/"+inv["id"].(string)+"/pdf")
	assert.Equal(t, `attachment; filename="Invoice-INV-0001.pdf"`, r.header.Get("Content-Disposition"))
	call(t, srv, http.MethodGet, "/invoices/"+inv["id"].(string)+"/pdf", srv.NewAPIKey(ScopeQuotesRead), nil).requireStatus(t, http.StatusForbidden)
}

func TestQuotePDF(t *testing.T) {
	srv, _ := newServer(t)
	q := createQuote(t, srv, nil)
	id := q["id"].(string)
	r := get(t, srv, "/quotes/"+id+"/pdf").requireStatus(t, http.StatusOK)
	assert.Equal(t, "application/pdf", r.header.Get("Content-Type"))
	assert.Equal(t, `attachment; filename="Quote-QU-0001.pdf"`, r.header.Get("Content-Disposition"))
	requireValidPDF(t, r.body)
	assert.NotContains(t, string(r.body), "/share/quotes/", "the endpoint never creates a share link")

	require.NoError(t, srv.SendQuote(id))
	r = get(t, srv, "/quotes/"+id+"/pdf")
	assert.Contains(t, string(r.body), "/share/quotes/", "an existing share link appears")
	assert.Equal(t, "Quote not found", get(t, srv, "/quotes/nope/pdf").requireStatus(t, http.StatusNotFound).detail(t))
}

func TestRenderPDFPaginatesAndEscapes(t *testing.T) {
	var text []string
	for i := range 130 {
		text = append(text, fmt.Sprintf("line %d", i))
	}
	text = append(text, "caf\u00e9 (x) \\ "+strings.Repeat("y", 200))
	doc := renderPDF(text)
	requireValidPDF(t, doc)
	assert.Contains(t, string(doc), "/Count 3")
	assert.Contains(t, string(doc), `(caf? \(x\) \\ yyy`)
	assert.Contains(t, string(doc), "...) Tj", "long lines are cut")
	assert.Contains(t, string(doc), "(line 129) Tj")
}

// requireValidPDF checks the structure a PDF reader relies on: the header,
// every cross-reference offset pointing at its object, startxref pointing at
// the table, the stream lengths, and the end marker.
func requireValidPDF(t *testing.T, doc []byte) {
	t.Helper()
	require.True(t, bytes.HasPrefix(doc, []byte("%PDF-")), "starts with %%PDF-")
	require.True(t, bytes.HasSuffix(doc, []byte("%%EOF\n")))

	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(doc)
	require.NotNil(t, m)
	xref, _ := strconv.Atoi(string(m[1]))
	require.True(t, bytes.HasPrefix(doc[xref:], []byte("xref\n0 ")))

	entries := regexp.MustCompile(`(\d{10}) 00000 n \n`).FindAllSubmatch(doc[xref:], -1)
	require.NotEmpty(t, entries)
	for i, e := range entries {
		off, _ := strconv.Atoi(string(e[1]))
		assert.True(t, bytes.HasPrefix(doc[off:], []byte(fmt.Sprintf("%d 0 obj\n", i+1))), "xref entry %d", i+1)
	}
	assert.Contains(t, string(doc[xref:]), fmt.Sprintf("/Size %d", len(entries)+1))

	for _, s := range regexp.MustCompile(`(?s)<< /Length (\d+) >>\nstream\n(.*?)\nendstream`).FindAllSubmatch(doc, -1) {
		n, _ := strconv.Atoi(string(s[1]))
		assert.Equal(t, n, len(s[2]), "stream length")
	}
}
