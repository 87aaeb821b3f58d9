//go:build !windows && !linux

package builtin

import "os"

func listFile() (*os.File, error) { return tempListFile() }
