package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/invoicing-api/invoicing-go/pgmirror"
)

// selectionFlags are the flags that say what the mirror keeps of a
// business's records (pgmirror.Selection): a file, and lists added to it.
type selectionFlags struct {
	file, resources, exclude, hash *string
}

// addSelectionFlags defines the selection's flags on fs; hash adds --hash
// (the single-business mirror has no keyring to hash with). what says
// which business they are for.
func addSelectionFlags(fs *flag.FlagSet, what string, hash bool) selectionFlags {
	f := selectionFlags{
		file: fs.String("selection", "", what+"the JSON `FILE` of what the mirror keeps of its records, "+
			`{"resources": [...], "exclude": [...], "hash": [...]}, to which --resources, --exclude and --hash add`),
		resources: fs.String("resources", "", what+"the `RESOURCES` mirrored, comma-separated, such as invoices,clients (none: every one)"),
		exclude: fs.String("exclude", "", what+"the `MEMBERS` of its records never stored, comma-separated, "+
			"such as clients.email,invoices.line_items.description (see pgmirror.Selection)"),
	}
	if hash {
		f.hash = fs.String("hash", "", what+"the `MEMBERS` stored as a keyed hash (HMAC-SHA256 under a key derived from INVOICING_MIRROR_KEYS), "+
			"comma-separated, such as clients.phone: equal values still join")
	}
	return f
}

// selection returns the Selection of the flags: the file's (none without
// one), with the lists of the flags added.
func (f selectionFlags) selection() (pgmirror.Selection, error) {
	var s pgmirror.Selection
	if *f.file != "" {
		b, err := os.ReadFile(*f.file)
		if err != nil {
			return s, fmt.Errorf("--selection: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return s, fmt.Errorf("--selection %s: not a selection (%v)", *f.file, err)
		}
	}
	s.Resources = append(s.Resources, pgmirror.ParseMembers(*f.resources)...)
	s.Exclude = append(s.Exclude, pgmirror.ParseMembers(*f.exclude)...)
	if f.hash != nil {
		s.Hash = append(s.Hash, pgmirror.ParseMembers(*f.hash)...)
	}
	return s, nil
}
