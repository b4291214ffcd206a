package alert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestText(t *testing.T) {
	for _, tc := range []struct {
		name, html string
		style      TextStyle
		want       string
	}{
		{"tags dropped, entities decoded", "<b>QUESTION</b> · <code>box:agent</code>\n<pre>a &lt; b &amp;&amp; c &gt; d</pre>", Plain,
			"QUESTION · box:agent\n\na < b && c > d"},
		{"a fence in markdown", "<b>BLOCKED</b> · x\n<pre>test result: ok</pre>", Markdown,
			"BLOCKED · x\n\n```\ntest result: ok\n```"},
		{"pane text cannot close its fence", "<pre>```\n@everyone *hi*</pre>", Markdown,
			"```\n`\u200b`\u200b`\u200b\n@\u200beveryone *hi*\n```"},
		{"markdown marks outside a fence are text", "<b>x_y*z</b> [a](b)", Markdown,
			"x\\_y\\*z \\[a\\](b)"},
		{"mention words broken everywhere", "@here @Channel @room @all @alliance me@example.com", Plain,
			"@\u200bhere @\u200bChannel @\u200broom @\u200ball @alliance me@example.com"},
		{"chat syntax broken, plain too", "<pre>&lt;!channel&gt; &lt;@U123&gt; &lt;#C1|x&gt;</pre>", Plain,
			"<\u200b!channel> <\u200b@U123> <\u200b#C1|x>"},
		{"a planted tag is dropped, its text kept", "<a href=\"http://evil\">click</a>", Plain, "click"},
		{"an open bracket without end", "text < more", Plain, "text < more"},
		{"redacted again", "<pre>key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA</pre>", Plain, "key sk-ant-…" + Masked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Text(tc.html, tc.style)); diff != "" {
				t.Errorf("Text (-want +got):\n%s", diff)
			}
		})
	}
}
