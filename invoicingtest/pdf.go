package invoicingtest

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
)

// pdfFile is a PDF to serve: its file name and its text lines.
type pdfFile struct {
	name string
	text []string
}

// invoicePDF is the PDF of GET /invoices/{id}/pdf. The caller holds s.mu.
func (s *Server) invoicePDF(inv *invoice) pdfFile {
	return pdfFile{"Invoice-" + inv.Number + ".pdf", s.invoiceText(inv)}
}

// quotePDF is the PDF of GET /quotes/{id}/pdf. The share link appears when
// the quote has one; the endpoint never creates one. The caller holds s.mu.
func (s *Server) quotePDF(q *quote) pdfFile {
	return pdfFile{"Quote-" + q.Number + ".pdf", s.quoteText(q)}
}

// invoiceText is the text of an invoice's PDF. The caller holds s.mu.
func (s *Server) invoiceText(inv *invoice) []string {
	subtotal, tax, total := sumLines(inv.Lines)
	text := []string{
		"TAX INVOICE " + inv.Number,
		"Bill to: " + s.clientName(inv.ClientID),
		"Issue date: " + inv.IssueDate.String() + "    Due date: " + inv.DueDate.String(),
		"Status: " + string(inv.statusOn(s.today())),
		"",
	}
	text = append(text, linesText(inv.Lines)...)
	return append(text,
		"",
		"Subtotal: "+inv.Currency+" "+FormatMoney(subtotal),
		"Tax: "+inv.Currency+" "+FormatMoney(tax),
		"Total: "+inv.Currency+" "+FormatMoney(total),
		"Amount paid: "+inv.Currency+" "+FormatMoney(inv.amountPaid),
		"Amount due: "+inv.Currency+" "+FormatMoney(total.Sub(inv.amountPaid)),
	)
}

// quoteText is the text of a quote's PDF. The caller holds s.mu.
func (s *Server) quoteText(q *quote) []string {
	lines := q.effectiveLines()
	subtotal, tax, total := sumLines(lines)
	text := []string{
		"QUOTE " + q.Number + ": " + q.Title,
		"For: " + s.clientName(q.ClientID),
		"Issue date: " + q.IssueDate.String() + "    Valid until: " + q.ValidUntil.String(),
		"Status: " + string(q.Status),
		"",
	}
	text = append(text, linesText(lines)...)
	text = append(text,
		"",
		"Subtotal: "+q.Currency+" "+FormatMoney(subtotal),
		"Tax: "+q.Currency+" "+FormatMoney(tax),
		"Total: "+q.Currency+" "+FormatMoney(total),
	)
	if q.ShareToken != "" {
		text = append(text, "", "View and accept online: "+s.quotePublicURL(q))
	}
	return text
}

func linesText(lines []line) []string {
	out := []string{"Description | Qty | Unit price | Tax | Amount"}
	for _, l := range lines {
		out = append(out, fmt.Sprintf("%s | %s | %s | %s | %s",
			l.Description, numberText(l.Quantity), FormatMoney(l.UnitPrice), FormatMoney(l.tax), FormatMoney(l.amount)))
	}
	return out
}

// writePDF answers with the PDF of f's text lines, as an attachment with
// f's file name.
func writePDF(w http.ResponseWriter, f pdfFile) {
	body := renderPDF(f.text)
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="`+safeFilename(f.name)+`"`)
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// safeFilename keeps letters, digits, '.', '-' and '_' and replaces every
// other byte with '_', so a caller-supplied invoice number cannot break the
// Content-Disposition header.
func safeFilename(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, name)
}

// PDF page layout: A4 in points, 10-point Helvetica.
const (
	pageWidth     = 595
	pageHeight    = 842
	margin        = 50
	fontSize      = 10
	leading       = 14
	linesPerPage  = (pageHeight - 2*margin) / leading
	maxLineLength = 95
)

// renderPDF builds a minimal, valid PDF 1.4 document: one or more A4 pages
// of text in the standard Helvetica font, with a correct cross-reference
// table. Characters outside printable ASCII are written as '?'.
func renderPDF(text []string) []byte {
	var pages [][]string
	for len(text) > linesPerPage {
		pages = append(pages, text[:linesPerPage])
		text = text[linesPerPage:]
	}
	pages = append(pages, text)

	// Objects: 1 catalog, 2 page tree, 3 font, then a page and its content
	// stream for each page.
	var objects []string
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	objects = append(objects,
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	)
	for i, page := range pages {
		var content bytes.Buffer
		fmt.Fprintf(&content, "BT\n/F1 %d Tf\n%d TL\n%d %d Td\n", fontSize, leading, margin, pageHeight-margin)
		for _, t := range page {
			fmt.Fprintf(&content, "(%s) Tj T*\n", pdfString(t))
		}
		content.WriteString("ET")
		objects = append(objects,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>",
				pageWidth, pageHeight, 5+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()),
		)
	}

	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objects))
	for i, obj := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, obj)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

// pdfString escapes text for a PDF literal string and cuts it to one line.
func pdfString(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == maxLineLength {
			b.WriteString("...")
			break
		}
		n++
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
