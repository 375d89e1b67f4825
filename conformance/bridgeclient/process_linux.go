package main

import "syscall"

// dieWithParent has the kernel SIGKILL the bridge when this program dies, so a client the suite kills at
// its timeout leaves no bridge behind. (Pdeathsig follows the OS thread that started the child; Go keeps
// that thread alive while the program runs, as nothing here locks and ends threads.)
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
