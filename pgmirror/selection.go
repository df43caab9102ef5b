package pgmirror

import (
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/invoicing-api/invoicing-go/internal/codec"
	"github.com/invoicing-api/invoicing-go/pgmirror/internal/store"
	"github.com/invoicing-api/invoicing-go/webhooks"
)

// A Selection says what the mirror keeps of a business's records: the
// resources it mirrors (Resources; none named: every one), the members it
// never stores (Exclude) and those it stores as a keyed hash (Hash). A
// resource not mirrored is never listed, fetched or stored: its events are
// not followed, and the business is ready once the others are copied. A
// member is named "resource.member", such as "clients.email", or,
// for a member of a record's lines, "resource.line_items.member", such as
// "invoices.line_items.description". Any member the service sends may be
// named, those the SDK does not know yet included (they are in raw); a
// record's id may not. The zero Selection keeps everything.
//
// It applies wherever the mirror keeps a record: its row (the typed column
// is NULL, or holds the hash; the member is removed from raw, or replaced
// there by the hash), its lines, and so the change feed and the history,
// which are made from the rows; and the webhook inbox: of a delivery for a
// business whose Selection names anything, the inbox keeps only what the
// mirror reads (see inboxBody), never the rest of the payload. Nothing the
// mirror logs or measures holds a record's content.
//
// A hash is the lowercase hex of HMAC-SHA256, under a key derived from a
// key of Config.Keys (never the key itself), of the member's value: a
// string's text, another value's JSON. Equal values have equal hashes, so
// that hashed columns still join and group; a value cannot be read back
// but by guessing it. A member with a typed column can be hashed only when
// the column is text. A null member stays null. The key is the keyring's
// current one when the Selection is first applied to a business, and stays
// that one (recorded in mirror_selections) while the keyring holds it. So
// hashing needs a keyring: it is for the businesses a mirror serves from
// the database (Config.Keys, BusinessConfig.Selection); the business of
// Config.Client can only leave members out.
//
// A business's Selection is recorded when the mirror first serves it.
// When it changes, what the mirror holds of the business is rewritten to
// it, in one transaction, before anything else is written (see
// applySelection): a member now left out is removed, and one now hashed
// hashed, from the rows, their lines, the history, the change feed and the
// inbox; a resource no longer mirrored is deleted; a member or resource
// mirrored again is filled in by a walk.
type Selection struct {
	Resources []string `json:"resources,omitempty"`
	Exclude   []string `json:"exclude,omitempty"`
	Hash      []string `json:"hash,omitempty"`
}

// IsZero reports whether s keeps everything.
func (s Selection) IsZero() bool {
	return len(s.Resources) == 0 && len(s.Exclude) == 0 && len(s.Hash) == 0
}

// resources returns the resources s mirrors, in the order they are walked.
func (s Selection) resources() []*resource {
	if len(s.Resources) == 0 {
		return allResources
	}
	return slices.DeleteFunc(slices.Clone(allResources), func(r *resource) bool { return !slices.Contains(s.Resources, r.name) })
}

// String lists the members s leaves out and hashes, as the flags take
// them.
func (s Selection) String() string {
	if s.IsZero() {
		return "everything"
	}
	var parts []string
	if len(s.Resources) > 0 {
		parts = append(parts, "resources "+strings.Join(s.Resources, ","))
	}
	if len(s.Exclude) > 0 {
		parts = append(parts, "exclude "+strings.Join(s.Exclude, ","))
	}
	if len(s.Hash) > 0 {
		parts = append(parts, "hash "+strings.Join(s.Hash, ","))
	}
	return strings.Join(parts, "; ")
}

// normal returns s with its lists sorted and without repeats, as it is
// recorded and compared.
func (s Selection) normal() Selection {
	clean := func(l []string) []string {
		if len(l) == 0 {
			return nil
		}
		l = slices.Clone(l)
		slices.Sort(l)
		return slices.Compact(l)
	}
	return Selection{Resources: clean(s.Resources), Exclude: clean(s.Exclude), Hash: clean(s.Hash)}
}

// equal reports whether s and o keep the same.
func (s Selection) equal(o Selection) bool {
	a, b := s.normal(), o.normal()
	return slices.Equal(a.Resources, b.Resources) && slices.Equal(a.Exclude, b.Exclude) && slices.Equal(a.Hash, b.Hash)
}

// ParseMembers splits a comma-separated list of members or resources, as
// the flags --resources, --exclude and --hash take them; "" is none.
func ParseMembers(list string) []string {
	var out []string
	for m := range strings.SplitSeq(list, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// memberName is the shape of a member's name.
var memberName = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// check returns an error naming each resource of s the mirror does not
// have, and each member that is not well formed, names a resource the
// mirror does not have or does not mirror, a record's id or its
// line_items, lines of a resource without lines, or, for Hash, a typed
// column that is not text; and members named in both lists.
func (s Selection) check() error {
	var errs []error
	for _, r := range s.Resources {
		if resourceNamed(r) == nil {
			errs = append(errs, fmt.Errorf("pgmirror: no resource %q (%s)", r, strings.Join(Resources(), ", ")))
		}
	}
	mirrored := func(m member) error {
		if len(s.Resources) > 0 && !slices.Contains(s.Resources, m.res.name) {
			return fmt.Errorf("pgmirror: member %s.%s: %s are not mirrored", m.res.name, m.name, m.res.name)
		}
		return nil
	}
	for hash, names := range [][]string{s.Exclude, s.Hash} {
		hash := hash == 1
		for _, name := range names {
			m, err := parseMember(name, hash)
			if err == nil {
				err = mirrored(m)
			}
			if err == nil && hash && slices.Contains(s.Exclude, name) {
				err = fmt.Errorf("pgmirror: %s is both excluded and hashed", name)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// A member is a parsed member of a Selection.
type member struct {
	res  *resource
	line bool   // a member of the record's lines
	name string // the JSON member, and the column's name when it has one
}

// parseMember parses a member of a Selection; hash checks that its column,
// if it has one, is text.
func parseMember(s string, hash bool) (member, error) {
	parts := strings.Split(s, ".")
	bad := func(why string) (member, error) {
		return member{}, fmt.Errorf("pgmirror: member %q: %s", s, why)
	}
	if len(parts) != 2 && !(len(parts) == 3 && parts[1] == "line_items") {
		return bad(`want "resource.member" or "resource.line_items.member"`)
	}
	m := member{res: resourceNamed(parts[0]), line: len(parts) == 3, name: parts[len(parts)-1]}
	table := (*store.Table)(nil)
	switch {
	case m.res == nil:
		return bad(fmt.Sprintf("no resource %q (%s)", parts[0], strings.Join(Resources(), ", ")))
	case !memberName.MatchString(m.name):
		return bad("a member's name is letters, digits and underscores")
	case m.line && m.res.lines == nil:
		return bad(fmt.Sprintf("%s have no lines", parts[0]))
	case !m.line && (m.name == "id" || m.name == "line_items"):
		return bad("a record's id and its line_items are kept (name the members of its lines)")
	case m.line:
		table = m.res.lines
	default:
		table = m.res.table
	}
	if i := slices.IndexFunc(table.Columns, func(c store.Column) bool { return c.Name == m.name }); hash && i >= 0 && table.Columns[i].Type != store.Text {
		return bad(fmt.Sprintf("its column is %s, not text: exclude it, or hash a text member", table.Columns[i].Type.SQL()))
	}
	return m, nil
}

// A selector applies a business's Selection to its rows and deliveries. A
// nil selector keeps everything.
type selector struct {
	keys  *Keyring
	keyID string // the key hashes are made with
	// By resource, then member: true to hash, false to leave out.
	members, lineMembers map[string]map[string]bool
}

// newSelector returns the selector of sel, hashing with the key keyID of
// keys; nil for the zero Selection. It checks sel, and that keys holds
// keyID when sel hashes anything.
func newSelector(sel Selection, keys *Keyring, keyID string) (*selector, error) {
	if sel.IsZero() {
		return nil, nil
	}
	if err := sel.check(); err != nil {
		return nil, err
	}
	if len(sel.Hash) > 0 {
		if keys == nil {
			return nil, errors.New("pgmirror: hashing members needs a keyring (Config.Keys, INVOICING_MIRROR_KEYS)")
		}
		if _, ok := keys.MAC(keyID, nil); !ok {
			return nil, fmt.Errorf("pgmirror: the members are hashed with the key %q, which the keyring no longer holds: "+
				"keep it in the keyring (hashes made with another key would not join the stored ones)", keyID)
		}
	}
	s := &selector{keys: keys, keyID: keyID, members: map[string]map[string]bool{}, lineMembers: map[string]map[string]bool{}}
	add := func(list []string, hash bool) {
		for _, name := range list {
			m, _ := parseMember(name, hash)
			into := s.members
			if m.line {
				into = s.lineMembers
			}
			if into[m.res.name] == nil {
				into[m.res.name] = map[string]bool{}
			}
			into[m.res.name][m.name] = hash
		}
	}
	add(sel.Exclude, false)
	add(sel.Hash, true)
	return s, nil
}

// hash returns the hash of a value's text.
func (s *selector) hash(text []byte) string {
	mac, _ := s.keys.MAC(s.keyID, text) // newSelector checked the key
	return hex.EncodeToString(mac)
}

// row applies the Selection to a row of res: its typed columns, its lines'
// columns and its raw JSON.
func (s *selector) row(res *resource, r *store.Row) error {
	if s == nil {
		return nil
	}
	members, lines := s.members[res.name], s.lineMembers[res.name]
	if members == nil && lines == nil {
		return nil
	}
	s.values(res.table, members, r.Values)
	for _, l := range r.Lines {
		s.values(res.lines, lines, l)
	}
	raw, _, err := s.object(r.Raw, members, lines)
	if err != nil {
		return fmt.Errorf("pgmirror: record %s: %w", r.ID, err)
	}
	r.Raw = raw
	return nil
}

// object returns the JSON object b with members applied (a member left
// out removed, a hashed one replaced by its hash, a null staying null),
// and lines applied to each object of its line_items, and whether that
// changed any member. The other members' values are copied as they are.
func (s *selector) object(b []byte, members, lines map[string]bool) ([]byte, bool, error) {
	changed := false
	out, err := rewrite(b, func(name string, v jsontext.Value) (jsontext.Value, error) {
		hash, named := members[name]
		switch {
		case name == "line_items" && len(lines) > 0 && v.Kind() == '[':
			out, ch, err := s.lines(v, lines)
			changed = changed || ch
			return out, err
		case named && !hash:
			changed = true
			return nil, nil
		case named && v.Kind() != 'n':
			changed = true
			return s.hashJSON(v)
		}
		return v, nil
	})
	return out, changed, err
}

// lines returns the JSON array b with members applied to each of its
// objects, and whether that changed any.
func (s *selector) lines(b []byte, members map[string]bool) (jsontext.Value, bool, error) {
	out := append(make([]byte, 0, len(b)), '[')
	changed := false
	var items []jsontext.Value // unused: each line is written as it is read
	err := codec.Decode(b, false, func(d *codec.Decoder) error {
		return codec.ReadRecords(d, &items, func(_ *jsontext.Value, d *codec.Decoder) error {
			var line jsontext.Value
			err := d.Raw(&line)
			if err == nil && line.Kind() == '{' {
				var ch bool
				line, ch, err = s.object(line, members, nil)
				changed = changed || ch
			}
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, line...)
			return err
		})
	})
	if err != nil {
		return nil, false, fmt.Errorf("line_items: %w", err)
	}
	return append(out, ']'), changed, nil
}

// hashJSON returns the hash of a JSON value as a JSON string: of a
// string's text, of another value's JSON.
func (s *selector) hashJSON(v jsontext.Value) (jsontext.Value, error) {
	text := []byte(v)
	if v.Kind() == '"' {
		var str string
		if err := codec.Decode(v, false, func(d *codec.Decoder) error { return d.String(&str) }); err != nil {
			return nil, err
		}
		text = []byte(str)
	}
	return jsontext.AppendQuote(nil, s.hash(text))
}

// rewrite returns the JSON object b with each member's value replaced by
// what keep returns for it (nil: the member is left out), in order. It
// reads b with the SDK's codec (the values are not decoded, only
// delimited) and fails for b that is not a JSON object.
func rewrite(b []byte, keep func(name string, v jsontext.Value) (jsontext.Value, error)) ([]byte, error) {
	out := append(make([]byte, 0, len(b)+64), '{')
	err := codec.Decode(b, false, func(d *codec.Decoder) error {
		return d.Object(func(name []byte) error {
			key := string(name) // valid until the next read
			var v jsontext.Value
			if err := d.Raw(&v); err != nil {
				return err
			}
			v, err := keep(key, v)
			if err != nil || v == nil {
				return err
			}
			if len(out) > 1 {
				out = append(out, ',')
			}
			out, err = jsontext.AppendQuote(out, key)
			out = append(append(out, ':'), v...)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}

// values applies members to a row's (or a line's) typed values, in the
// order of table's columns.
func (s *selector) values(table *store.Table, members map[string]bool, values []any) {
	for i, c := range table.Columns {
		hash, named := members[c.Name]
		switch {
		case !named || i >= len(values):
		case !hash:
			values[i] = nil
		default:
			if v, ok := values[i].(*string); ok && v != nil {
				h := s.hash([]byte(*v))
				values[i] = &h
			}
		}
	}
}

// eventResources are the resources whose members the payload of an event
// carries, by the event type's prefix.
var eventResources = map[string][]string{
	"invoice": {Invoices}, "payment": {Invoices}, "quote": {Quotes}, "bill": {Bills}, "contact": {Clients, Suppliers},
}

// inboxBody returns what the inbox keeps of a delivery of the business
// whose Selection names anything (resources too: a platform that mirrors
// only invoices keeps no contact's email): of its payload, only the
// members the mirror reads, the ids of the records it names (members named *_id) and
// its instants (*_at, which the event's parsing requires), and a contact's
// type, less the members the Selection names for the resources of the
// event (an id left out is dropped; an instant left out or hashed is
// replaced by the delivery's signing time, so that the payload still
// parses). The delivery's signature does not cover what is kept: the inbox
// holds it as verified on arrival.
func (s *selector) inboxBody(d *webhooks.Delivery) ([]byte, error) {
	prefix, _, _ := strings.Cut(string(d.Type), ".")
	named := func(name string) bool {
		for _, res := range eventResources[prefix] {
			if _, ok := s.members[res][name]; ok {
				return true
			}
		}
		return false
	}
	body, err := rewrite(d.Body, func(name string, v jsontext.Value) (jsontext.Value, error) {
		switch {
		case strings.HasSuffix(name, "_at") && named(name):
			return jsontext.AppendQuote(nil, d.Timestamp.UTC().Format(time.RFC3339))
		case named(name):
			return nil, nil
		case strings.HasSuffix(name, "_id"), strings.HasSuffix(name, "_at"), name == "contact_type":
			return v, nil
		}
		return nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgmirror: a delivery's payload: %w", err)
	}
	return body, nil
}
