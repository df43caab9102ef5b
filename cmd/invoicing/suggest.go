package main

import (
	"strings"

	"github.com/invoicing-api/invoicing-go/internal/cliflag"
)

// didYouMean returns ` (did you mean "x"?)` for the name x that word most
// likely meant among candidates, or "" when none is close: see
// [cliflag.Suggest].
func didYouMean(word string, candidates []string) string {
	return cliflag.DidYouMean(word, candidates)
}

// enumFlag reads the value of the flag name of the command cmd as one of
// values, ignoring case: --type sales is SALES, --status OVERDUE is
// overdue. "" stays "". Any other value is a usage error listing the values
// (and suggesting the one meant, when it is close).
func enumFlag[T ~string](cmd, name, v string, values []T) (T, error) {
	if v == "" {
		return "", nil
	}
	names := make([]string, len(values))
	for i, val := range values {
		if strings.EqualFold(v, string(val)) {
			return val, nil
		}
		names[i] = string(val)
	}
	return "", usagef(cmd, "unknown %s %q%s: use %s", name, v, didYouMean(v, names), orList(names))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
