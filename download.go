package invoicing

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"
)

// File is a downloaded document, streamed: read it like any io.Reader and
// Close it when done (also on error paths).
type File struct {
	io.ReadCloser
	// Filename comes from the Content-Disposition header (e.g.
	// "Invoice-INV-0001.pdf"), reduced to a base name so it is safe to use as
	// a local file name; "" when the header had none.
	Filename string
	// ContentType is the media type of the response, e.g. "application/pdf".
	ContentType string
	// Size is the Content-Length, or -1 when unknown.
	Size int64
}

// downloadPDF GETs collection/id/pdf and returns the PDF stream. A 2xx
// response whose media type is not application/pdf (an HTML page, say) is an
// error. Error statuses come back as JSON {detail} bodies, since the request
// accepts application/json too.
func (c *Client) downloadPDF(ctx context.Context, collection, id string, opts []RequestOption) (*File, error) {
	path, err := resourcePath(collection, id, "/pdf")
	if err != nil {
		return nil, err
	}
	cfg, err := config(opts)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, &request{method: http.MethodGet, path: path, pdf: true}, cfg, nil)
	if err != nil {
		return nil, err
	}
	ct := resp.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/pdf" {
		resp.Body.Close()
		return nil, fmt.Errorf("invoicing: GET %s: unexpected content type %q (want application/pdf)", path, ct)
	}
	return &File{
		ReadCloser:  resp.Body,
		Filename:    dispositionFilename(resp.Header.Get("Content-Disposition")),
		ContentType: "application/pdf",
		Size:        resp.ContentLength,
	}, nil
}

// maxFilename is the longest file name dispositionFilename returns, in
// bytes: the limit of common file systems.
const maxFilename = 255

// dispositionFilename returns the filename parameter of a Content-Disposition
// value reduced to a name that is safe to create: no directory part, no
// control characters (C0 and C1), no bidirectional overrides or isolates
// (which can make "fdp.exe" display as "exe.pdf"), at most 255 bytes (cut
// before the extension, which is kept), and never "." or "..".
func dispositionFilename(v string) string {
	if v == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	name := params["filename"]
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case r < 0x20 || (r >= 0x7f && r <= 0x9f), // C0, DEL and C1 controls
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, // bidi embeddings, overrides, isolates
			r == 0x200e || r == 0x200f || r == 0x061c, // bidi marks
			r == utf8.RuneError:
			return -1
		}
		return r
	}, name)
	name = truncateName(name, maxFilename)
	if strings.Trim(name, ".") == "" {
		return ""
	}
	return name
}

// truncateName cuts name to at most max bytes on a character boundary,
// keeping a short extension (".pdf") when it has one.
func truncateName(name string, max int) string {
	if len(name) <= max {
		return name
	}
	ext := path.Ext(name)
	if len(ext) > 16 {
		ext = ""
	}
	stem := name[:len(name)-len(ext)]
	keep := max - len(ext)
	for keep > 0 && !utf8.RuneStart(stem[keep]) {
		keep--
	}
	return stem[:keep] + ext
}
