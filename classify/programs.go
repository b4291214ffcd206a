package classify

import (
	"fmt"
	"slices"
	"strings"
)

// maxPrograms bounds the program names one agent's description gives.
const maxPrograms = 8

// plainName says s is a name of at most 64 bytes, of ASCII letters (lower
// case only, unless upper), digits and the bytes of extra, starting with a
// letter or digit: no path, no space. It is checked by hand, so that the
// package compiles no expression when it loads.
func plainName(s, extra string, upper bool) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', upper && 'A' <= c && c <= 'Z':
		case i > 0 && strings.IndexByte(extra, c) >= 0:
		default:
			return false
		}
	}
	return true
}

// notAgentPrograms are programs that run many things besides an agent: a
// shell, an interpreter, a terminal, a pager. A pane that runs one of them
// in its foreground may draw anything, a dialog included, so that no
// description may name one as its agent's program.
var notAgentPrograms = []string{"sh", "bash", "zsh", "fish", "dash", "ksh", "tcsh", "csh", "nu", "pwsh",
	"node", "nodejs", "deno", "bun", "python", "python3", "ruby", "perl", "env", "sudo", "su", "exec",
	"tmux", "rmux", "screen", "ssh", "mosh", "cat", "less", "more", "tail", "head", "watch", "vi", "vim", "nvim", "emacs", "nano"}

// checkPrograms checks a description's program names: one to maxPrograms
// when given, each a plain name no other program may share.
func (l *Local) checkPrograms(names []string) error {
	if names == nil || l.trusted {
		return nil
	}
	if len(names) == 0 || len(names) > maxPrograms {
		return fmt.Errorf("programs: from 1 to %d names, not %d", maxPrograms, len(names))
	}
	for _, n := range names {
		switch {
		case !plainName(n, "._+-", false):
			return fmt.Errorf("programs: %q is not a plain program name (lower case letters, digits and . _ + -, no path, at most 64)", n)
		case strings.HasSuffix(n, ".js") || strings.HasSuffix(n, ".mjs") || strings.HasSuffix(n, ".cjs") || strings.HasSuffix(n, ".exe"):
			return fmt.Errorf("programs: %q: a program is named without its .js or .exe, which the process's name is read without", n)
		case slices.Contains(notAgentPrograms, n):
			return fmt.Errorf("programs: %q runs other programs than an agent (a shell, an interpreter, a terminal, a pager): keys of ours would reach whatever it runs", n)
		}
	}
	return nil
}

// Programs are the names the process of the agent named agent runs as, as
// its description gives them, built in or in local (nil for none); for ""
// those of every agent known. An agent described without programs has
// none: its process is never found, and keys of ours never reach it.
func Programs(local *Local, agent string) []string {
	var out []string
	for _, a := range local.agents() {
		if agent == "" || a.name == agent {
			out = append(out, a.programs...)
		}
	}
	return out
}
