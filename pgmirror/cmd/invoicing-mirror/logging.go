package main

import (
	"io"
	"log/slog"
	"strings"
)

// newLogger returns the command's logger: text lines on w from level up,
// each on one line whatever its values hold (pgx puts each address it
// tried on a line of its own).
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: oneLineAttr}))
}

// oneLineAttr is the logger's ReplaceAttr: an error or a string that spans
// lines becomes one line.
func oneLineAttr(_ []string, a slog.Attr) slog.Attr {
	switch v := a.Value; v.Kind() {
	case slog.KindString:
		if strings.ContainsAny(v.String(), "\r\n") {
			a.Value = slog.StringValue(flatten(v.String()))
		}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			a.Value = slog.StringValue(flatten(err.Error()))
		}
	}
	return a
}

// oneLine is err's message on one line.
func oneLine(err error) string { return flatten(err.Error()) }

// flatten joins s's words with single spaces.
func flatten(s string) string { return strings.Join(strings.Fields(s), " ") }
