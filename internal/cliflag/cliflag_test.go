package cliflag

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSuggest(t *testing.T) {
	commands := []string{"mock", "trigger", "listen", "invoices", "quotes", "items", "help"}
	for word, want := range map[string]string{
		"invoice": "invoices", "INVOICES": "invoices", "qoutes": "quotes", "lisen": "listen", "tirgger": "trigger",
		"mok": "mock", "hlp": "help", "it": "items", "xyz": "", "i": "", "invoicesxyz": "", "q": "", "pfd": "", "tirggre": "trigger",
	} {
		assert.Equal(t, want, Suggest(word, commands), word)
	}
	events := []string{"invoice.created", "invoice.sent", "invoice.updated", "invoice.paid"}
	assert.Equal(t, "", Suggest("invoice", events), "a prefix of several names suggests none of them")
	assert.Equal(t, "invoice.paid", Suggest("invoice.pai", events))
	assert.Equal(t, "pdf", Suggest("pfd", []string{"list", "get", "pdf"}), "a swap counts once")
	assert.Equal(t, "list", Suggest("lis", []string{"list", "lint"}), "of names equally near, the first")
	assert.Equal(t, "", Suggest("anything", nil))
}

func TestDidYouMean(t *testing.T) {
	assert.Equal(t, ` (did you mean "listen"?)`, DidYouMean("lisen", []string{"mock", "listen"}))
	assert.Equal(t, "", DidYouMean("xyzzy", []string{"mock", "listen"}))
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"listen", "listen", 0},
		{"lisen", "listen", 1}, {"listenn", "listen", 1}, {"lsiten", "listen", 1}, {"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment: a swapped pair is not edited again
	} {
		assert.Equal(t, c.want, editDistance(c.a, c.b), "%q to %q", c.a, c.b)
	}
}

// mirrorFlags is a flag set like invoicing-mirror's, with one flag of each
// kind package flag offers.
func mirrorFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("invoicing-mirror", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.Bool("once", false, "backfill and exit")
	fs.String("listen", ":8080", "serve the webhook endpoint on `ADDR`")
	fs.String("schema", "", "the PostgreSQL schema")
	fs.Duration("reconcile-interval", 15*time.Minute, "re-list everything every `DURATION`")
	fs.Duration("coalesce", 0, "wait `DURATION` after an event")
	fs.Int("prefetch", 2, "list pages fetched ahead (1 to 64)")
	fs.Uint("workers", 0, "how many workers")
	fs.Float64("ratio", 0.5, "a `RATIO`")
	fs.TextVar(new(slog.Level), "log-level", slog.LevelInfo, "log `LEVEL`: debug, info, warn or error")
	fs.Func("set", "set `KEY=VALUE`", func(v string) error {
		if !strings.Contains(v, "=") {
			return errors.New("want KEY=VALUE")
		}
		return nil
	})
	fs.String("o", "", "write to `FILE`")
	return fs
}

func TestColumns(t *testing.T) {
	fs := mirrorFlags()
	for name, want := range map[string][2]string{
		"once":               {"--once", "backfill and exit"},
		"listen":             {"--listen ADDR", "serve the webhook endpoint on ADDR (default :8080)"},
		"schema":             {"--schema string", "the PostgreSQL schema"},
		"reconcile-interval": {"--reconcile-interval DURATION", "re-list everything every DURATION (default 15m0s)"},
		"coalesce":           {"--coalesce DURATION", "wait DURATION after an event"},
		"prefetch":           {"--prefetch int", "list pages fetched ahead (1 to 64) (default 2)"},
		"workers":            {"--workers uint", "how many workers"},
		"log-level":          {"--log-level LEVEL", "log LEVEL: debug, info, warn or error (default INFO)"},
		"set":                {"--set KEY=VALUE", "set KEY=VALUE"},
		"o":                  {"-o FILE", "write to FILE"},
	} {
		n, u := Columns(fs.Lookup(name))
		assert.Equal(t, want, [2]string{n, u}, name)
	}
	assert.Equal(t, "  --listen ADDR  serve the webhook endpoint on ADDR (default :8080)", UsageLine(fs.Lookup("listen")))
}

func TestExplain(t *testing.T) {
	const (
		listen   = "\n  --listen ADDR  serve the webhook endpoint on ADDR (default :8080)"
		interval = "\n  --reconcile-interval DURATION  re-list everything every DURATION (default 15m0s)"
		prefetch = "\n  --prefetch int  list pages fetched ahead (1 to 64) (default 2)"
		once     = "\n  --once  backfill and exit"
	)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lisen", ":9"}, "unknown flag --lisen (did you mean --listen?)" + listen},
		{[]string{"-lisen"}, "unknown flag --lisen (did you mean --listen?)" + listen},
		{[]string{"--LISTEN"}, "unknown flag --LISTEN (did you mean --listen?)" + listen},
		{[]string{"--reconcile"}, "unknown flag --reconcile (did you mean --reconcile-interval?)" + interval},
		{[]string{"--nope"}, "unknown flag --nope"},
		{[]string{"--hlep"}, "unknown flag --hlep (did you mean --help?)"},
		{[]string{"--prefetc"}, "unknown flag --prefetc (did you mean --prefetch?)" + prefetch},
		{[]string{"-f"}, "unknown flag -f (did you mean -o?)\n  -o FILE  write to FILE"},
		{[]string{"--listen"}, "--listen needs a value" + listen},
		{[]string{"--reconcile-interval", "abc"}, `invalid value "abc" for --reconcile-interval: not a duration (such as 30s, 5m or 1h30m)` + interval},
		{[]string{"--reconcile-interval=15"}, `invalid value "15" for --reconcile-interval: not a duration (such as 30s, 5m or 1h30m)` + interval},
		{[]string{"--prefetch", "two"}, `invalid value "two" for --prefetch: not a whole number` + prefetch},
		{[]string{"--prefetch", "99999999999999999999"}, `invalid value "99999999999999999999" for --prefetch: out of range` + prefetch},
		{[]string{"--workers", "-1"}, `invalid value "-1" for --workers: not a whole number of 0 or more` + "\n  --workers uint  how many workers"},
		{[]string{"--ratio", "half"}, `invalid value "half" for --ratio: not a number` + "\n  --ratio RATIO  a RATIO (default 0.5)"},
		{[]string{"--once=maybe"}, `invalid value "maybe" for --once: not true or false` + once},
		{[]string{"--log-level", "loud"}, `invalid value "loud" for --log-level: slog: level string "loud": unknown name` + "\n  --log-level LEVEL  log LEVEL: debug, info, warn or error (default INFO)"},
		{[]string{"--set", "a\"b"}, `invalid value "a\"b" for --set: want KEY=VALUE` + "\n  --set KEY=VALUE  set KEY=VALUE"},
		{[]string{"-o"}, "-o needs a value\n  -o FILE  write to FILE"},
		{[]string{"---x"}, `bad flag syntax "---x": write --NAME, --NAME VALUE or --NAME=VALUE`},
		{[]string{"-=x"}, `bad flag syntax "-=x": write --NAME, --NAME VALUE or --NAME=VALUE`},
	} {
		fs := mirrorFlags()
		err := fs.Parse(c.args)
		require.Error(t, err, "%q", c.args)
		assert.Equal(t, c.want, Explain(fs, err), "%q", c.args)
	}

	fs := mirrorFlags()
	assert.Equal(t, "", Explain(fs, nil))
	assert.Equal(t, flag.ErrHelp.Error(), Explain(fs, fs.Parse([]string{"--help"})), "the caller handles help first")
	assert.Equal(t, "something else", Explain(fs, errors.New("something else")))

	fs.Bool("help", false, "show this help")
	assert.Equal(t, "unknown flag --hepl (did you mean --help?)\n  --help  show this help", Explain(fs, fs.Parse([]string{"--hepl"})),
		"a help flag of the set's own has its usage line")
}

// Every error package flag's Parse gives for a command line is one Explain
// rewrites: it names the flag in its own words, never in package flag's.
func FuzzExplain(f *testing.F) {
	for _, args := range []string{"--lisen :9", "--listen", "--prefetch x", "--once=x", "---x", "-=", "--log-level loud", "--set x", "--ratio 1e999", "-o"} {
		f.Add(args)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fs := mirrorFlags()
		err := fs.Parse(strings.Fields(line))
		if err == nil || errors.Is(err, flag.ErrHelp) {
			return
		}
		msg := Explain(fs, err)
		first, _, _ := strings.Cut(msg, "\n")
		for _, raw := range []string{"flag provided but not defined", "flag needs an argument", "invalid boolean", "for flag -", "parse error"} {
			if strings.Contains(first, raw) {
				t.Fatalf("Explain left %q as package flag words it: %q", err, msg)
			}
		}
	})
}

// Suggest returns one of the candidates (or ""), and only one close to the
// word or the only one it begins; a candidate equal to the word ignoring
// case is always found (unless it is "", which reads as none).
func FuzzSuggest(f *testing.F) {
	f.Add("lisen", "listen,once,schema")
	f.Add("invoice", "invoices,invoice.paid")
	f.Add("", ",a")
	f.Fuzz(func(t *testing.T, word, list string) {
		candidates := strings.Split(list, ",")
		got := Suggest(word, candidates)
		w := strings.ToLower(word) // as Suggest compares; strings.EqualFold differs for a few letters
		if got == "" {
			for _, c := range candidates {
				if c != "" && strings.ToLower(c) == w {
					t.Fatalf("Suggest(%q, %q) missed the candidate %q", word, candidates, c)
				}
			}
			return
		}
		found := false
		for _, c := range candidates {
			found = found || c == got
		}
		if !found {
			t.Fatalf("Suggest(%q, %q) = %q, not a candidate", word, candidates, got)
		}
		g := strings.ToLower(got)
		limit := 2
		if len(w) <= 4 {
			limit = 1
		}
		if editDistance(w, g) > limit && !strings.HasPrefix(g, w) {
			t.Fatalf("Suggest(%q, %q) = %q, %d edits away", word, candidates, got, editDistance(w, g))
		}
	})
}
