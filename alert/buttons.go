package alert

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/internal/printable"
)

// A Button is one inline button under an alert: its label, shown as
// given, and the callback data a tap sends back.
type Button struct {
	Label string
	Data  string
}

// Telegram's limits on an inline keyboard.
const (
	// MaxButtonLabel is how many characters of a label a button shows:
	// Telegram draws a longer one cut anyway, and the question's text,
	// relayed whole above the buttons, is where an option is read.
	MaxButtonLabel = 64
	// MaxCallbackData is the Bot API's limit on callback data, in bytes.
	MaxCallbackData = 64
	// MaxButtons is the Bot API's limit on the buttons of one keyboard.
	MaxButtons = 100
)

// ButtonLabel is label as a button shows it: one line of printable text
// (escape sequences, control and invisible characters removed, runs of
// white space one space), cut to MaxButtonLabel characters with an
// ellipsis. It is plain text, never HTML: Telegram does not parse a
// button's text, so nothing is escaped.
func ButtonLabel(label string) string {
	s := strings.Join(strings.Fields(printable.String(label)), " ")
	if utf8.RuneCountInString(s) <= MaxButtonLabel {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:MaxButtonLabel-1])) + "…"
}

// ReplyMarkup returns the inline keyboard of buttons as the JSON object
// sendMessage takes as reply_markup: one button per row, in the order
// given, each label as ButtonLabel shows it. A button without a label, or
// whose data is empty or longer than Telegram takes, is an error: a button
// that cannot be tapped must not be sent as though it could.
func ReplyMarkup(buttons []Button) ([]byte, error) {
	if len(buttons) == 0 {
		return nil, errors.New("alert: reply markup: no buttons")
	}
	if len(buttons) > MaxButtons {
		return nil, fmt.Errorf("alert: reply markup: %d buttons, more than Telegram's %d", len(buttons), MaxButtons)
	}
	type button struct {
		Text         string `json:"text"`
		CallbackData string `json:"callback_data"`
	}
	rows := make([][]button, len(buttons))
	for i, b := range buttons {
		label := ButtonLabel(b.Label)
		if label == "" {
			return nil, fmt.Errorf("alert: reply markup: button %d has no label", i+1)
		}
		if b.Data == "" || len(b.Data) > MaxCallbackData || !utf8.ValidString(b.Data) {
			return nil, fmt.Errorf("alert: reply markup: button %d: callback data must be 1 to %d bytes of UTF-8, got %d", i+1, MaxCallbackData, len(b.Data))
		}
		rows[i] = []button{{Text: label, CallbackData: b.Data}}
	}
	data, err := json.Marshal(struct {
		InlineKeyboard [][]button `json:"inline_keyboard"`
	}{rows})
	if err != nil {
		return nil, fmt.Errorf("alert: reply markup: %w", err)
	}
	return data, nil
}

// ButtonData returns the callback data of the buttons in markup, a reply
// markup as ReplyMarkup writes it, in order: what a tap on each sends back.
func ButtonData(markup []byte) ([]string, error) {
	var m struct {
		InlineKeyboard [][]struct {
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal(markup, &m); err != nil {
		return nil, fmt.Errorf("alert: reply markup: %w", err)
	}
	var data []string
	for _, row := range m.InlineKeyboard {
		for _, b := range row {
			data = append(data, b.CallbackData)
		}
	}
	return data, nil
}
