package invoicingtest

import (
	"net/http"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/jsonopt"
)

// encodeOptions are the options of every JSON document the fake writes
// (responses, webhook payloads, saved states): jsonopt.Encode, plus the
// escaping of encoding/json (v1), so that the output stays what it was when
// the fake wrote it with v1 and bodies users compare byte for byte, and the
// signatures of webhook deliveries, do not change:
//   - <, > and & are escaped as \u003c, \u003e and \u0026;
//   - U+2028 and U+2029 are escaped as \u2028 and \u2029.
//
// Invalid UTF-8 in a string (a name given to AddClient, say) is written as
// U+FFFD, as jsonopt.Encode allows, rather than failing the response (v1
// wrote the escape \ufffd, this writes the character itself).
var encodeOptions = json.JoinOptions(
	jsonopt.Encode,
	jsontext.EscapeForHTML(true),
	jsontext.EscapeForJS(true),
)

// writeJSON writes v as the JSON response body with the given status, or a
// 500 when v cannot be encoded.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v, encodeOptions)
	if err != nil {
		writeError(w, &apiError{http.StatusInternalServerError, "encoding response: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// errorBody is the body of every error answer: {"detail": ...}.
type errorBody struct {
	Detail string `json:"detail"`
}

// errorJSON returns {"detail": detail}.
func errorJSON(detail string) []byte {
	// It cannot fail: a string always encodes under encodeOptions.
	b, _ := json.Marshal(errorBody{detail}, encodeOptions)
	return b
}

// writeError writes {"detail": ...} with the error's status.
func writeError(w http.ResponseWriter, err *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(err.status)
	_, _ = w.Write(errorJSON(err.detail))
}
