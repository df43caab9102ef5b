package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/rivo/uniseg"
)

// minFlexWidth is the narrowest a shortened column becomes before columns
// are dropped instead.
const minFlexWidth = 10

// table is rows of text under headers, written to fit a width.
type table struct {
	headers []string
	rows    [][]string
	right   []bool // right-aligned columns (amounts)
	flex    []bool // columns that may be shortened (names, titles)
	drop    []int  // the columns to leave out, in order, when shortening is not enough
}

// write writes the table in columns two spaces apart, no line wider than
// width terminal columns (0 for no limit; see displayWidth), leaving out
// columns that are empty in every row. To fit, it leaves out columns in drop order until the rest fit with
// the flexible columns at their narrowest, then shortens the flexible
// columns no more than needed (marking a cut with …); as a last resort it
// cuts each line.
func (t *table) write(w io.Writer, width int) {
	for _, r := range t.rows {
		for i := range r {
			r[i] = oneLine(r[i])
		}
	}
	widths := make([]int, len(t.headers))
	narrowest := make([]int, len(t.headers))
	shown := make([]bool, len(t.headers))
	for i, h := range t.headers {
		widths[i] = displayWidth(h)
		for _, r := range t.rows {
			widths[i] = max(widths[i], displayWidth(r[i]))
		}
		narrowest[i] = widths[i]
		if t.flex[i] {
			narrowest[i] = min(widths[i], minFlexWidth)
		}
		shown[i] = len(t.rows) == 0 || t.anyValue(i)
	}
	for _, d := range t.drop {
		if width == 0 || totalWidth(narrowest, shown) <= width || visible(shown) == 1 {
			break
		}
		shown[d] = false
	}
	for width > 0 && totalWidth(widths, shown) > width {
		i := t.widestFlex(widths, shown)
		if i < 0 {
			break
		}
		widths[i] = max(minFlexWidth, widths[i]-(totalWidth(widths, shown)-width))
	}
	t.writeRow(w, t.headers, widths, shown, width)
	for _, r := range t.rows {
		t.writeRow(w, r, widths, shown, width)
	}
}

// anyValue reports whether column i has a value in some row.
func (t *table) anyValue(i int) bool {
	for _, r := range t.rows {
		if r[i] != "" {
			return true
		}
	}
	return false
}

// widestFlex returns the widest shown flexible column that can still be
// shortened, or -1.
func (t *table) widestFlex(widths []int, shown []bool) int {
	best := -1
	for i, f := range t.flex {
		if f && shown[i] && widths[i] > minFlexWidth && (best < 0 || widths[i] > widths[best]) {
			best = i
		}
	}
	return best
}

func (t *table) writeRow(w io.Writer, cells []string, widths []int, shown []bool, width int) {
	var b strings.Builder
	for i, cell := range cells {
		if !shown[i] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("  ")
		}
		cell = truncate(cell, widths[i])
		pad := strings.Repeat(" ", widths[i]-displayWidth(cell))
		if t.right[i] {
			b.WriteString(pad + cell)
		} else {
			b.WriteString(cell + pad)
		}
	}
	line := strings.TrimRight(b.String(), " ")
	if width > 0 {
		line = truncate(line, width)
	}
	fmt.Fprintln(w, line)
}

// totalWidth is the width of the shown columns with their separators.
func totalWidth(widths []int, shown []bool) int {
	total := 0
	for i, wd := range widths {
		if shown[i] {
			total += wd + 2
		}
	}
	return max(0, total-2)
}

func visible(shown []bool) int {
	n := 0
	for _, s := range shown {
		if s {
			n++
		}
	}
	return n
}

// truncate shortens s to at most n columns, ending it with … when it was
// cut. It cuts between grapheme clusters, so an accented letter or an emoji
// sequence is kept whole or left out whole; a wide character that would
// not fit is left out, leaving the cut up to a column short.
func truncate(s string, n int) string {
	if displayWidth(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	used := 0
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		w := g.Width()
		if used+w > n-1 {
			break
		}
		b.WriteString(g.Str())
		used += w
	}
	return b.String() + "…"
}

// displayWidth is the number of terminal columns s takes: 2 for each wide
// (East Asian) character and most emoji, 0 for combining marks and
// joiners, 1 for the rest.
func displayWidth(s string) int { return uniseg.StringWidth(s) }

// oneLine replaces control characters (a newline in a name, say) with
// spaces, so that every row stays on its line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// columnIndexes returns the positions of the named headers, for table.drop.
func columnIndexes(headers []string, names ...string) []int {
	out := make([]int, 0, len(names))
	for _, n := range names {
		if i := slices.Index(headers, n); i >= 0 {
			out = append(out, i)
		}
	}
	return out
}
