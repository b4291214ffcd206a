// Package auditrun runs the deep audit that package audit plans and checks.
// It reads a project's rules, makes the sandbox the auditors read in, runs
// one auditor per dimension through the agent's headless mode under its own
// clock, proves that the tree stayed the same, writes the report and the
// audit's record, and delivers the report through the alert funnel. It also
// starts and ends the detached session that repeats an audit.
//
// It parses no flags and reads no environment of its own: the command line
// passes its settings in a [Settings] and its environment as a list, so that
// what an auditor, the funnel or a scheduled session gets is what the caller
// decided to hand on.
package auditrun

// An Error is why an audit, its schedule or its end could not be done. Op
// says what failed, in the words a person reads ("cannot read the copy"),
// or is empty when Err says it all.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "auditrun: " + e.Message() }

// Message is the error without the package's name, for a command that
// prints its own.
func (e *Error) Message() string {
	if e.Op == "" {
		return e.Err.Error()
	}
	return e.Op + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }
