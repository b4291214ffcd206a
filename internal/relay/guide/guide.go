// Package guide is the guided Telegram set-up (omega-monitor install
// --telegram): it asks for the bot's token, proves it with the Bot API,
// takes the chat's id from a message the operator sends the bot, and
// writes the funnel's config. It talks to the Bot API through the
// receiver's Telegram client, so only the relay binary links it; it is not
// the receiver and sends no alert.
package guide

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/printable"
)

// Wait bounds how long the set-up waits for the operator's message.
const Wait = 5 * time.Minute

var tokenShape = regexp.MustCompile(`^[0-9]{5,15}:[A-Za-z0-9_-]{30,64}$`)

// Run asks on out and reads from in the bot's token, checks it with
// getMe at api (the Bot API's base address), waits up to wait for a
// message to the bot and takes its chat, and writes conf (mode 0600, in a
// directory of mode 0700). A config already at conf is kept, and refused.
func Run(ctx context.Context, api, conf string, in io.Reader, out io.Writer, wait time.Duration) error {
	if _, err := os.Lstat(conf); !errors.Is(err, fs.ErrNotExist) {
		return errorf("a config is at %s already: it is kept (move it away to set up again, or edit it)", conf)
	}
	fmt.Fprint(out, "Your bot's token (from @BotFather: /newbot, then the token it gives): ")
	line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
	if err != nil && line == "" {
		return errorf("no token given")
	}
	token := strings.TrimSpace(line)
	if !tokenShape.MatchString(token) {
		return errorf("that is not a bot token (digits, a colon, then 30 or more letters, digits, - or _)")
	}
	// The Bot API through the client the receiver uses: getMe proves the
	// token, a long poll takes the first message sent to the bot.
	chats := make(chan models.Chat, 1)
	b, err := bot.New(token, bot.WithServerURL(strings.TrimSuffix(api, "/")), bot.WithCheckInitTimeout(20*time.Second),
		bot.WithAllowedUpdates(bot.AllowedUpdates{"message"}), bot.WithErrorsHandler(func(error) {}),
		bot.WithDefaultHandler(func(_ context.Context, _ *bot.Bot, u *models.Update) {
			if u.Message != nil && u.Message.Chat.ID != 0 {
				select {
				case chats <- u.Message.Chat:
				default:
				}
			}
		}))
	var me *models.User
	if err == nil {
		me, err = b.GetMe(ctx)
	}
	switch {
	case errors.Is(err, bot.ErrorUnauthorized) || errors.Is(err, bot.ErrorNotFound):
		return errorf("the token does not work: Telegram does not know this token (or %s is not the Bot API)", api)
	case err != nil:
		// The client's error names the address, and the address holds
		// the token: not said.
		return errorf("the token could not be checked: no answer from the Bot API at %s", api)
	}
	fmt.Fprintf(out, "bot @%s: the token works.\n", printable.String(me.Username))
	fmt.Fprintf(out, "Now send @%s a message from the chat that should get the alerts (in a group: add the bot, then send one). Waiting up to %v…\n", printable.String(me.Username), wait)
	polling, stop := context.WithTimeout(ctx, wait)
	defer stop()
	go b.Start(polling)
	var chat models.Chat
	select {
	case chat = <-chats:
		stop()
	case <-polling.Done():
		return errorf("no message to the bot within %v: send one, then run this again (the answer receiver takes the updates while it runs: omega-monitor relay stop)", wait)
	}
	name := chat.Title
	switch {
	case name == "" && chat.Username != "":
		name = "@" + chat.Username
	case name == "":
		name = chat.FirstName
	}
	name = printable.String(name)
	fmt.Fprintf(out, "chat %s (id %d)\n", name, chat.ID)
	if err := os.MkdirAll(filepath.Dir(conf), 0o700); err != nil {
		return errorf("%w", err)
	}
	text := fmt.Sprintf("# Written by omega-monitor install --telegram.\nbot_token=%s\nchat_id=%d\n", token, chat.ID)
	if err := atomicfile.Write(conf, []byte(text), 0o600); err != nil {
		return errorf("%w", err)
	}
	fmt.Fprintf(out, "wrote %s (mode 0600)\n", conf)
	return nil
}

// errorf is an error of this package (pkgerr): the operator's line says
// its reason alone.
func errorf(format string, a ...any) error {
	return &pkgerr.Error{Pkg: "guide", Err: fmt.Errorf(format, a...)}
}
