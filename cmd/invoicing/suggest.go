package main

import (
	"fmt"
	"strings"
)

// suggest returns the candidate a mistyped word most likely meant, or ""
// when none is close: the one nearest to it, ignoring case, if it differs
// by at most two letters added, removed, changed or swapped (one for words
// of up to four letters), else the only candidate that begins with it.
func suggest(word string, candidates []string) string {
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

// didYouMean returns ` (did you mean "x"?)` for the candidate suggest
// finds for word, or "".
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
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
