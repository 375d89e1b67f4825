//go:build !linux

package main

import "syscall"

// dieWithParent: only Linux can tie the bridge's life to this program's; elsewhere stop is the only end.
func dieWithParent() *syscall.SysProcAttr { return nil }
