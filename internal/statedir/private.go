package statedir

import (
	"fmt"
	"os"
	"syscall"
)

// ErrNotPrivate is what CheckPrivate's refusals are (errors.Is tells them
// from a directory that only cannot be read): a directory another user
// owns or can write, or a link in its place. Nothing is written into one.
var ErrNotPrivate = errorf("not a private directory")

// notPrivate is a refusal of CheckPrivate's: its message, and
// ErrNotPrivate.
type notPrivate string

func (e notPrivate) Error() string        { return string(e) }
func (e notPrivate) Is(target error) bool { return target == ErrNotPrivate }

// CheckPrivate says what is wrong with dir as a directory of this user's:
// it must be a directory, not a symbolic link to one, owned by the
// effective user, and writable by nobody else (no group or world write). A
// directory another local user created or can write into could hold a
// planted action, a link that turns an append into a write elsewhere, or a
// socket posing as this user's ssh master.
func CheckPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return errorf("%w", err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return notPrivate(fmt.Sprintf("statedir: %s is a symbolic link; refusing it (make it a directory of your own)", dir))
	case !fi.IsDir():
		return errorf("%s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return notPrivate(fmt.Sprintf("statedir: %s belongs to uid %d, not to you (uid %d); refusing it", dir, st.Uid, os.Geteuid()))
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return notPrivate(fmt.Sprintf("statedir: %s is writable by others (mode %v); refusing it (chmod go-w %s)", dir, fi.Mode().Perm(), dir))
	}
	return nil
}

// openAppend opens a file of d's for appending, creating it 0600: never
// through a symbolic link, and never waiting on a FIFO with no reader.
func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
}

// CheckOwnFile says what is wrong with path as a file of this user's that
// decides what the watcher does (the rules file): a regular file, not a
// link, owned by the effective user, and writable by nobody else. A rules
// file another user could write would decide which screens are typed into.
func CheckOwnFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return errorf("%w", err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return errorf("%s is a symbolic link; refusing it (make it a file of your own)", path)
	case !fi.Mode().IsRegular():
		return errorf("%s is not a regular file", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return errorf("%s belongs to uid %d, not to you (uid %d); refusing it", path, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return errorf("%s is writable by others (mode %v); refusing it (chmod go-w %s)", path, fi.Mode().Perm(), path)
	}
	return nil
}
