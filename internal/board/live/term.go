//go:build linux || darwin

package live

import (
	"os"
	"syscall"
	"unsafe"
)

// The terminal, for the live board: whether a file is one, its size, and
// raw mode (keys arrive one at a time, unechoed) with the way back.

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	var t syscall.Termios
	return ioctl(f.Fd(), ioctlGetTermios, unsafe.Pointer(&t)) == nil
}

// Width is the columns of the terminal f is, or 0 when f is nil or not a
// terminal (a pipe, a file), whose lines have no width limit.
func Width(f *os.File) int {
	if f == nil || !IsTerminal(f) {
		return 0
	}
	cols, _, _ := terminalSize(f)
	return cols
}

// terminalSize is the terminal's columns and rows.
func terminalSize(f *os.File) (cols, rows int, ok bool) {
	var ws struct{ Row, Col, X, Y uint16 }
	if ioctl(f.Fd(), syscall.TIOCGWINSZ, unsafe.Pointer(&ws)) != nil || ws.Col == 0 || ws.Row == 0 {
		return 0, 0, false
	}
	return int(ws.Col), int(ws.Row), true
}

// makeRaw puts the terminal in raw mode and returns the function that
// restores it exactly as it was.
func makeRaw(f *os.File) (restore func(), err error) {
	var old syscall.Termios
	if err := ioctl(f.Fd(), ioctlGetTermios, unsafe.Pointer(&old)); err != nil {
		return nil, err
	}
	raw := old
	raw.Iflag &^= syscall.IGNBRK | syscall.BRKINT | syscall.PARMRK | syscall.ISTRIP | syscall.INLCR | syscall.IGNCR | syscall.ICRNL | syscall.IXON
	raw.Lflag &^= syscall.ECHO | syscall.ECHONL | syscall.ICANON | syscall.ISIG | syscall.IEXTEN
	raw.Cflag &^= syscall.CSIZE | syscall.PARENB
	raw.Cflag |= syscall.CS8
	raw.Cc[syscall.VMIN] = 1
	raw.Cc[syscall.VTIME] = 0
	if err := ioctl(f.Fd(), ioctlSetTermios, unsafe.Pointer(&raw)); err != nil {
		return nil, err
	}
	return func() { ioctl(f.Fd(), ioctlSetTermios, unsafe.Pointer(&old)) }, nil
}

func ioctl(fd, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}
