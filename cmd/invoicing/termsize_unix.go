//go:build linux || darwin

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalWidth returns the width of the terminal f, or 0 when it cannot be
// read. It asks the terminal with the TIOCGWINSZ ioctl, because a shell
// does not export COLUMNS to the programs it runs.
func terminalWidth(f *os.File) int {
	var ws struct{ rows, cols, xpixel, ypixel uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.cols)
}
