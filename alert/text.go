package alert

import (
	"html"
	"regexp"
	"strings"
	"sync"
)

// A TextStyle is how a channel other than Telegram reads an alert: as
// plain text, or as markdown with pane text in fenced code blocks.
type TextStyle int

const (
	Plain TextStyle = iota
	Markdown
)

// Text is an alert rendered for Telegram's HTML mode (what the outbox
// holds) as text for a channel that does not speak it: the same words,
// pane text set apart (fenced in markdown), entities decoded, redacted
// again, and with every mention word (@everyone, @here, @channel, @room,
// @all) broken so that pane text pages no one on a chat. Tags other than
// those the renderer uses (b, i, code, pre) are dropped as text would be.
func Text(msg string, style TextStyle) string {
	var b strings.Builder
	inPre := false
	for msg != "" {
		i := strings.IndexByte(msg, '<')
		if i < 0 {
			b.WriteString(piece(msg, style, inPre))
			break
		}
		b.WriteString(piece(msg[:i], style, inPre))
		msg = msg[i:]
		j := strings.IndexByte(msg, '>')
		if j < 0 {
			b.WriteString(piece(msg, style, inPre))
			break
		}
		switch tag := msg[1:j]; tag {
		case "pre":
			inPre = true
			b.WriteString(fenceOpen(style))
		case "/pre":
			inPre = false
			b.WriteString(fenceClose(style))
		case "b", "/b", "i", "/i", "code", "/code":
		default:
			// Not a tag of ours: the renderer escapes every < of text, so
			// this is a planted one; it is dropped with its content kept.
		}
		msg = msg[j+1:]
	}
	return strings.TrimSpace(Redact(unmention(b.String())))
}

func fenceOpen(style TextStyle) string {
	if style == Markdown {
		return "\n```\n"
	}
	return "\n"
}

func fenceClose(style TextStyle) string {
	if style == Markdown {
		return "\n```\n"
	}
	return "\n"
}

// piece is text between tags, decoded; in markdown a run of backticks in
// pane text is broken so that it cannot close the fence it is in, and
// outside a fence markdown's own marks are escaped.
func piece(s string, style TextStyle, inPre bool) string {
	// A chat's own link and mention syntax (Slack's <!channel>, Discord's
	// <@id>) is broken wherever it is, in a fence or out, and in plain
	// text too: a generic webhook may hand it on to such a chat.
	s = chatSyntax.Replace(html.UnescapeString(s))
	if style != Markdown {
		return s
	}
	if inPre {
		return strings.ReplaceAll(s, "`", "`\u200b")
	}
	return mdEscape.Replace(s)
}

var (
	chatSyntax = strings.NewReplacer("<!", "<\u200b!", "<@", "<\u200b@", "<#", "<\u200b#")
	mdEscape   = strings.NewReplacer("\\", "\\\\", "`", "\\`", "*", "\\*", "_", "\\_", "~", "\\~", "[", "\\[", "]", "\\]")
)

// mention matches the words by which chats page a whole room.
var mention = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)@(everyone|here|channel|room|all)\b`)
})

// unmention puts a zero-width space after the @ of a mention word: it reads
// the same and pages no one.
func unmention(s string) string {
	return mention().ReplaceAllString(s, "@\u200b$1")
}
