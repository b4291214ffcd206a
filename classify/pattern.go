package classify

import (
	"regexp"
	"regexp/syntax"
	"sync"
)

// A pattern is a regular expression compiled when a rule first uses it: a
// process that reads one screen, as each poll does, compiles only the rules
// it reaches instead of paying for every agent's table at start.
//
// Every pattern is anchored where the agent draws its structure (a ^ that
// binds every branch of the expression), or says why it may match anywhere
// in a line: free holds that reason. A test walks the tables and fails on a
// pattern that is neither.
type pattern struct {
	expr     string
	free     string
	once     sync.Once
	compiled *regexp.Regexp
}

// re compiles an anchored pattern, when it is first used: building the
// tables at start costs one small allocation a pattern.
func re(expr string) *pattern {
	return &pattern{expr: expr}
}

func (p *pattern) re() *regexp.Regexp {
	p.once.Do(func() { p.compiled = regexp.MustCompile(p.expr) })
	return p.compiled
}

// free compiles a pattern that may match anywhere in a line, for the reason
// given: the structure that anchors it is where the rule reads (the last
// line of a screen whose input box is gone, the status lines under the
// box), not where in the line the text sits.
func free(expr, why string) *pattern {
	p := re(expr)
	p.free = why
	return p
}

func (p *pattern) MatchString(s string) bool { return p.re().MatchString(s) }

func (p *pattern) FindStringSubmatch(s string) []string { return p.re().FindStringSubmatch(s) }

// anchored reports whether every branch of the expression starts at the
// start of the line: `^a|b` is not anchored, `^(?:a|b)` is.
func anchored(expr string) bool {
	t, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return false
	}
	return startsAnchored(t.Simplify())
}

func startsAnchored(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpBeginLine, syntax.OpBeginText:
		return true
	case syntax.OpConcat:
		return len(t.Sub) > 0 && startsAnchored(t.Sub[0])
	case syntax.OpCapture:
		return startsAnchored(t.Sub[0])
	case syntax.OpAlternate:
		for _, s := range t.Sub {
			if !startsAnchored(s) {
				return false
			}
		}
		return len(t.Sub) > 0
	}
	return false
}
