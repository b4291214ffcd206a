// Package pkgerr is the error of a package of ours: a message that begins
// with the package's name, as every error of ours does, kept apart from
// that name, so that a caller that words the error for a person (a line, a
// refusal in the chat) takes the reason as a value instead of cutting a
// prefix off a string.
//
// It is not an error library: one type, one function.
package pkgerr

import "errors"

// An Error is Pkg's error Err: its message is "Pkg: " and Err's.
type Error struct {
	Pkg string
	Err error
}

func (e *Error) Error() string { return e.Pkg + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Why is err's reason: the message of the error a package of ours said,
// without that package's name, when err is one; else err's message. Only
// err's own name goes, not those of the errors it wraps.
func Why(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Err.Error()
	}
	return err.Error()
}

// New is the error of package pkg with the message msg.
func New(pkg, msg string) error { return &Error{Pkg: pkg, Err: errors.New(msg)} }
