package classify

import "unicode/utf8"

// titleMarks are the patterns of an agent's terminal title that say its
// state (LocalTitle).
type titleMarks struct {
	waiting, busy, idle []*pattern
}

// maxTitle bounds the bytes of a title read: a program sets its title to
// what it likes, and the marks are at its start.
const maxTitle = 256

// TitleSays reads what the terminal title (tmux's #{pane_title}) of the
// agent named agent says of its state, by the title marks of its
// description, built in or in local (nil for the built-in ones only):
// "waiting", "busy" or "idle", or "" when it says nothing. A title is the
// program's own word, so it is a witness, as the agent's status is: the
// caller decides what it may change.
func TitleSays(local *Local, agent, title string) string {
	if agent == "" || title == "" {
		return ""
	}
	if len(title) > maxTitle {
		cut := maxTitle
		for cut > 0 && !utf8.RuneStart(title[cut]) {
			cut-- // not in the middle of a rune
		}
		title = title[:cut]
	}
	for _, a := range local.agents() {
		if a.name != agent {
			continue
		}
		for _, m := range []struct {
			says  string
			marks []*pattern
		}{{"waiting", a.title.waiting}, {"busy", a.title.busy}, {"idle", a.title.idle}} {
			for _, p := range m.marks {
				if p.MatchString(title) {
					return m.says
				}
			}
		}
		return ""
	}
	return ""
}
