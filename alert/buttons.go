package alert

import (
	"encoding/json"
	"unicode/utf8"
)

// A Button is one button under a relayed question: the text it shows and
// the data a tap on it sends back (a nonce, which names nothing else).
type Button struct {
	Text string
	Data string
}

// maxButtonText is how much of an option's label a button shows: Telegram
// cuts a button's text itself, and the message above it relays the label
// whole.
const maxButtonText = 60

// Markup is the reply markup of a question's alert: one button a row, in
// the options' order, as the Bot API's sendMessage takes it. A label is
// sent as text, never as markup, and cut to maxButtonText characters.
func Markup(buttons []Button) ([]byte, error) {
	type key struct {
		Text         string `json:"text"`
		CallbackData string `json:"callback_data"`
	}
	rows := make([][]key, 0, len(buttons))
	for _, b := range buttons {
		text := b.Text
		if utf8.RuneCountInString(text) > maxButtonText {
			text = string([]rune(text)[:maxButtonText-1]) + "…"
		}
		rows = append(rows, []key{{Text: text, CallbackData: b.Data}})
	}
	return json.Marshal(struct {
		InlineKeyboard [][]key `json:"inline_keyboard"`
	}{rows})
}
