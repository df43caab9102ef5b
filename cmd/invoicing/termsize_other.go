//go:build !(linux || darwin)

package main

import "os"

// terminalWidth returns 0, the width being unknown on this system: tables
// on a terminal use $COLUMNS or defaultWidth.
func terminalWidth(*os.File) int { return 0 }
