package classify

import (
	"regexp"
	"sync"
)

// A pattern is a regular expression compiled when a rule first uses it: a
// process that reads one screen, as each poll does, compiles only the rules
// it reaches instead of paying for every agent's table at start.
type pattern struct {
	expr string
	re   func() *regexp.Regexp
}

func compile(expr string) *pattern {
	return &pattern{expr: expr, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

func (p *pattern) MatchString(s string) bool { return p.re().MatchString(s) }

func (p *pattern) FindStringSubmatch(s string) []string { return p.re().FindStringSubmatch(s) }
