package classify

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"
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
	// byHand, for an expression that a few lines of Go match as well
	// (described, in hand.go), matches it: the expression
	// is compiled only for a line byHand matched and a caller wants its
	// groups, unless groups answers for them too. A test holds both to the
	// expression's answers on every line of the golden corpus, and a fuzz
	// test on any line.
	byHand func(string) bool
	groups func(string) []string
	// need, for an expression not matched by hand, is a cheap test that
	// every line the expression matches passes (a literal it must hold):
	// a line that fails it is no match, and compiles nothing. Tests hold
	// the project's to the expression as they hold byHand; an operator's
	// ("needs" in a rules file) narrows what the expression matches.
	need func(string) bool
}

// compiledExprs holds every expression compiled in this process, by its text:
// tables that share an expression (the rule line of two agents' boxes, the
// top and bottom of one) pay for it once. In a process that reads one
// screen, compiling is most of what matching costs.
var compiledExprs = struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}{m: map[string]*regexp.Regexp{}}

// re compiles an anchored pattern, when it is first used: building the
// tables at start costs one small allocation a pattern.
func re(expr string) *pattern {
	return &pattern{expr: expr}
}

func (p *pattern) re() *regexp.Regexp {
	p.once.Do(func() {
		compiledExprs.Lock()
		defer compiledExprs.Unlock()
		if p.compiled = compiledExprs.m[p.expr]; p.compiled == nil {
			p.compiled = regexp.MustCompile(p.expr)
			compiledExprs.m[p.expr] = p.compiled
		}
	})
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

func (p *pattern) MatchString(s string) bool {
	if p.byHand != nil {
		return p.byHand(s)
	}
	if p.need != nil && !p.need(s) {
		return false
	}
	return p.re().MatchString(s)
}

// isRuleLine is ruleLine: three or more horizontals, and optionally a
// label of at most 40 other characters followed by horizontals to the end.
func isRuleLine(s string) bool {
	const h = "─"
	n := 0
	for strings.HasPrefix(s, h) {
		s = s[len(h):]
		n++
	}
	if n < 3 {
		return false
	}
	if s == "" {
		return true
	}
	for label := 0; !strings.HasPrefix(s, h); label++ {
		if s == "" || label == 40 {
			return false
		}
		_, size := utf8.DecodeRuneInString(s)
		s = s[size:]
	}
	for strings.HasPrefix(s, h) {
		s = s[len(h):]
	}
	return s == ""
}

// FindStringSubmatch is MatchString with the groups.
func (p *pattern) FindStringSubmatch(s string) []string {
	if p.groups != nil {
		return p.groups(s)
	}
	if p.byHand != nil && !p.byHand(s) || p.need != nil && !p.need(s) {
		return nil
	}
	return p.re().FindStringSubmatch(s)
}

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
