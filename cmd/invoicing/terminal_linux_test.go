package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal and returns its terminal side, sized
// cols x 24, and the controlling side (to resize it with setSize).
func openPTY(t *testing.T, cols uint16) (tty, ptm *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err, "a pseudo-terminal (/dev/ptmx) is needed")
	t.Cleanup(func() { ptm.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0), "unlockpt")
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	require.NoError(t, err, "ptsname")
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { tty.Close() })
	setSize(t, ptm, cols)
	return tty, ptm
}

func setSize(t *testing.T, ptm *os.File, cols uint16) {
	t.Helper()
	require.NoError(t, unix.IoctlSetWinsize(int(ptm.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: cols}))
}

func TestTablesFitTheTerminalTheyAreWrittenTo(t *testing.T) {
	tty, ptm := openPTY(t, 100)
	env := map[string]string{}
	c := &cli{stdout: tty, getenv: func(k string) string { return env[k] }}
	assert.True(t, isTerminal(tty))
	assert.Equal(t, 100, c.tableWidth(), "the terminal's width")

	setSize(t, ptm, 0)
	assert.Equal(t, defaultWidth, c.tableWidth(), "a terminal that does not know its width")

	env["COLUMNS"] = "42"
	assert.Equal(t, 42, c.tableWidth(), "$COLUMNS wins")
}
