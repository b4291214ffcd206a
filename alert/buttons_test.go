package alert

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMarkup(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 80)
	for _, c := range []struct {
		name    string
		buttons []Button
		want    string
	}{
		{"none", nil, `{"inline_keyboard":[]}`},
		{"one a row, in order", []Button{{"1. Yes", "n1"}, {"2. No", "n2"}},
			`{"inline_keyboard":[[{"text":"1. Yes","callback_data":"n1"}],[{"text":"2. No","callback_data":"n2"}]]}`},
		// A label is text, whatever it holds: JSON escapes it, and the
		// chat shows it as written.
		{"markup is text", []Button{{`<b>"x"</b> & y`, "n"}},
			`{"inline_keyboard":[[{"text":"\u003cb\u003e\"x\"\u003c/b\u003e \u0026 y","callback_data":"n"}]]}`},
		{"cut", []Button{{long, "n"}}, `{"inline_keyboard":[[{"text":"` + strings.Repeat("é", 59) + `…","callback_data":"n"}]]}`},
	} {
		got, err := Markup(c.buttons)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}
