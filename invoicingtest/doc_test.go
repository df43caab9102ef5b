package invoicingtest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/invoicing-api/invoicing-go/internal/godoc"
)

// TestEverySeedIDIsListedByGoDoc: go doc's package summary shows one line
// per declaration, so a Seed* id declared in a group with others hides
// behind the first one's "...". Each is declared on its own, with its doc.
func TestEverySeedIDIsListedByGoDoc(t *testing.T) {
	pkg := godoc.Read(t, ".", "github.com/invoicing-api/invoicing-go/invoicingtest")
	seeds := 0
	for _, v := range pkg.Consts {
		for _, name := range v.Names {
			if strings.HasPrefix(name, "Seed") {
				seeds++
				assert.Equal(t, []string{name}, v.Names, "%s is declared on its own", name)
				assert.True(t, strings.HasPrefix(v.Doc, name+" "), "%s has its own doc: %q", name, v.Doc)
			}
		}
	}
	assert.Equal(t, 23, seeds, "every Seed* id")
}
