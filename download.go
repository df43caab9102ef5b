package invoicing

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
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
// error.
func (c *Client) downloadPDF(ctx context.Context, collection, id string) (*File, error) {
	path, err := resourcePath(collection, id, "/pdf")
	if err != nil {
		return nil, err
	}
	resp, err := c.send(ctx, &request{method: http.MethodGet, path: path, accept: hdrPDF})
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

// dispositionFilename returns the filename parameter of a Content-Disposition
// value, without any directory part or control characters.
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
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	if name == "." || name == ".." {
		return ""
	}
	return name
}
