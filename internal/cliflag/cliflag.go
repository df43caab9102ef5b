// Package cliflag explains command-line mistakes the same way in every
// command of the repository (invoicing and invoicing-mirror): a mistyped
// name gets the nearest right one ("did you mean"), and a flag error names
// the flag in question and shows its one usage line rather than the whole
// help.
//
// It works with the standard library's flag package: give the FlagSet
// flag.ContinueOnError, an io.Discard output and an empty Usage, so that
// the package prints nothing itself, and pass the error Parse returns to
// [Explain].
package cliflag

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Suggest returns the candidate a mistyped word most likely meant, or ""
// when none is close: the one nearest to it, ignoring case, if it differs
// by at most two letters added, removed, changed or swapped (one for words
// of up to four letters), else the only candidate that begins with it.
// Of candidates equally near, the first wins.
func Suggest(word string, candidates []string) string {
	w := strings.ToLower(word)
	limit := 2
	if len(w) <= 4 {
		limit = 1
	}
	best, bestDist := "", limit+1
	var prefixed []string
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if d := editDistance(w, lc); d < bestDist {
			best, bestDist = c, d
		}
		if len(w) >= 2 && strings.HasPrefix(lc, w) {
			prefixed = append(prefixed, c)
		}
	}
	if best == "" && len(prefixed) == 1 {
		best = prefixed[0]
	}
	return best
}

// DidYouMean returns ` (did you mean "x"?)`, to append to a message about
// word, where x is the candidate [Suggest] finds for it, or "" when it
// finds none.
func DidYouMean(word string, candidates []string) string {
	if s := Suggest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// editDistance is the number of letters (bytes) to add, remove, change or
// swap with the next to turn a into b (the optimal string alignment
// distance).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// dashed returns how the flag name is written on the command line and in
// help: "--listen", or "-o" for a one-letter name.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// Columns returns the two columns a command's help lists a flag with: its
// name and argument ("--listen ADDR"; the argument is the back-quoted word
// of its usage, else its type, and none for a boolean flag), and its usage
// followed by its default ("serve ... on ADDR (default :8080)"; none for
// an empty, zero or false default).
func Columns(f *flag.Flag) (name, usage string) {
	arg, usage := flag.UnquoteUsage(f)
	name = dashed(f.Name)
	if arg != "" {
		name += " " + arg
	}
	switch f.DefValue {
	case "", "0", "false", "0s":
	default:
		usage += " (default " + f.DefValue + ")"
	}
	return name, usage
}

// UsageLine returns the line a command's help lists a flag on, without its
// newline: the [Columns] indented by two spaces and two spaces apart
// ("  --listen ADDR  serve ... (default :8080)"). A help that lists several
// flags pads the first column to the widest name instead.
func UsageLine(f *flag.Flag) string {
	name, usage := Columns(f)
	return "  " + name + "  " + usage
}

// The errors of package flag's Parse that Explain rewrites, as that
// package words them.
var (
	errUndefined    = regexp.MustCompile(`^flag provided but not defined: -(.+)$`)
	errNeedsArg     = regexp.MustCompile(`^flag needs an argument: -(.+)$`)
	errBadValue     = regexp.MustCompile(`(?s)^invalid value ("(?:[^"\\]|\\.)*") for flag -(.+?): (.*)$`)
	errBadBoolValue = regexp.MustCompile(`(?s)^invalid boolean value ("(?:[^"\\]|\\.)*") for -(.+?): (.*)$`)
	errBadBoolFlag  = regexp.MustCompile(`(?s)^invalid boolean flag (.+?): (.*)$`)
	errBadSyntax    = regexp.MustCompile(`^bad flag syntax: (.*)$`)
)

// Explain turns an error Parse of fs returned into a message for the
// person who typed the command line, without a trailing newline:
//
//   - an unknown flag: "unknown flag --lisen (did you mean --listen?)",
//     then the usage line of the flag meant (see [UsageLine]); no
//     suggestion and no usage line when no name is close;
//   - a flag without its value: "--listen needs a value", then its usage
//     line;
//   - a value the flag refuses: `invalid value "abc" for
//     --reconcile-interval: not a duration (such as 30s, 5m or 1h30m)`,
//     then its usage line; the reason is the flag's own for flags that
//     parse their values themselves (flag.Func, flag.TextVar, a
//     flag.Value);
//   - a malformed flag such as "---x": `bad flag syntax "---x": ...`.
//
// The message starts with neither the command's name nor "error", and
// does not point at --help: the caller adds both. Any other error
// (flag.ErrHelp, which the caller handles first, or one from a future
// version of package flag) is returned as its text; nil gives "".
func Explain(fs *flag.FlagSet, err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	if m := errUndefined.FindStringSubmatch(msg); m != nil {
		name := m[1]
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if fs.Lookup("help") == nil {
			names = append(names, "help") // package flag answers it
		}
		s := Suggest(name, names)
		if s == "" {
			return "unknown flag " + dashed(name)
		}
		msg = fmt.Sprintf("unknown flag %s (did you mean %s?)", dashed(name), dashed(s))
		return withUsage(fs, s, msg)
	}
	if m := errNeedsArg.FindStringSubmatch(msg); m != nil {
		return withUsage(fs, m[1], dashed(m[1])+" needs a value")
	}
	if m := errBadValue.FindStringSubmatch(msg); m != nil {
		return badValue(fs, m[2], m[1], m[3])
	}
	if m := errBadBoolValue.FindStringSubmatch(msg); m != nil {
		return badValue(fs, m[2], m[1], m[3])
	}
	if m := errBadBoolFlag.FindStringSubmatch(msg); m != nil {
		return withUsage(fs, m[1], dashed(m[1])+": "+m[2])
	}
	if m := errBadSyntax.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("bad flag syntax %q: write --NAME, --NAME VALUE or --NAME=VALUE", m[1])
	}
	return msg
}

// badValue is Explain's message for the value quoted (as %q quotes it)
// that the flag name refused with the reason given by package flag.
func badValue(fs *flag.FlagSet, name, quoted, reason string) string {
	value, uerr := strconv.Unquote(quoted)
	if uerr != nil {
		value = quoted
	}
	if f := fs.Lookup(name); f != nil {
		reason = why(f, reason)
	}
	return withUsage(fs, name, fmt.Sprintf("invalid value %q for %s: %s", value, dashed(name), reason))
}

// why rewords the reason package flag gives for refusing a value of one of
// its own flag types ("parse error") as what the flag takes.
func why(f *flag.Flag, reason string) string {
	switch reason {
	case "value out of range":
		return "out of range"
	case "parse error":
	default:
		return reason
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return reason
	}
	switch g.Get().(type) {
	case bool:
		return "not true or false"
	case time.Duration:
		return "not a duration (such as 30s, 5m or 1h30m)"
	case int, int64:
		return "not a whole number"
	case uint, uint64:
		return "not a whole number of 0 or more"
	case float64:
		return "not a number"
	}
	return reason
}

// withUsage returns msg followed, on the next line, by the usage line of
// the flag name of fs, if fs has that flag.
func withUsage(fs *flag.FlagSet, name, msg string) string {
	if f := fs.Lookup(name); f != nil {
		return msg + "\n" + UsageLine(f)
	}
	return msg
}
