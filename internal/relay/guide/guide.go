// Package guide is the guided Telegram set-up (omega-monitor install
// --telegram): it asks for the bot's token, proves it with the Bot API,
// takes the chat's id from a message the operator sends the bot, and
// writes the funnel's config. It talks HTTP, so only the relay binary
// links it; it is not the receiver and sends no alert.
package guide

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

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
	c := client{api: strings.TrimSuffix(api, "/"), token: token, http: &http.Client{Timeout: 40 * time.Second}}
	var me struct {
		Username string `json:"username"`
	}
	if err := c.call(ctx, "getMe", nil, &me); err != nil {
		return errorf("the token does not work: %w", err)
	}
	fmt.Fprintf(out, "bot @%s: the token works.\n", printable.String(me.Username))
	fmt.Fprintf(out, "Now send @%s a message from the chat that should get the alerts (in a group: add the bot, then send one). Waiting up to %v…\n", printable.String(me.Username), wait)
	chat, name, err := c.firstChat(ctx, wait)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "chat %s (id %d)\n", name, chat)
	if err := os.MkdirAll(filepath.Dir(conf), 0o700); err != nil {
		return errorf("%w", err)
	}
	text := fmt.Sprintf("# Written by omega-monitor install --telegram.\nbot_token=%s\nchat_id=%d\n", token, chat)
	if err := atomicfile.Write(conf, []byte(text), 0o600); err != nil {
		return errorf("%w", err)
	}
	fmt.Fprintf(out, "wrote %s (mode 0600)\n", conf)
	return nil
}

type client struct {
	api, token string
	http       *http.Client
}

// call calls method with form and decodes its result into v; the token
// is in the address alone, never said.
func (c client) call(ctx context.Context, method string, form url.Values, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.api+"/bot"+c.token+"/"+method, strings.NewReader(form.Encode()))
	if err != nil {
		return errors.New("the Bot API's address is not one")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	if err != nil {
		// The error names the address, and the address holds the token.
		return fmt.Errorf("no answer from the Bot API at %s", c.api)
	}
	defer resp.Body.Close()
	var body struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		Description string          `json:"description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil || !body.OK {
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusNotFound {
			return fmt.Errorf("HTTP %d: Telegram does not know this token (or %s is not the Bot API)", resp.StatusCode, c.api)
		}
		return fmt.Errorf("HTTP %d %s", resp.StatusCode, printable.String(body.Description))
	}
	return json.Unmarshal(body.Result, v)
}

type update struct {
	ID      int64 `json:"update_id"`
	Message *struct {
		Chat struct {
			ID        int64  `json:"id"`
			Title     string `json:"title"`
			Username  string `json:"username"`
			FirstName string `json:"first_name"`
		} `json:"chat"`
	} `json:"message"`
}

// firstChat long-polls the updates until one is a message, and returns
// its chat; the updates read are acknowledged, so that the receiver does
// not take them for answers.
func (c client) firstChat(ctx context.Context, wait time.Duration) (int64, string, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var offset int64
	for {
		var ups []update
		form := url.Values{"timeout": {"20"}, "allowed_updates": {`["message"]`}}
		if offset > 0 {
			form.Set("offset", strconv.FormatInt(offset, 10))
		}
		if err := c.call(ctx, "getUpdates", form, &ups); err != nil {
			if ctx.Err() != nil {
				return 0, "", errorf("no message to the bot within %v: send one, then run this again", wait)
			}
			return 0, "", errorf("reading the bot's updates: %w (is the answer receiver running? omega-monitor relay stop)", err)
		}
		for _, u := range ups {
			offset = max(offset, u.ID+1)
			if m := u.Message; m != nil && m.Chat.ID != 0 {
				c.call(context.Background(), "getUpdates", url.Values{"offset": {strconv.FormatInt(offset, 10)}, "timeout": {"0"}}, &ups)
				name := m.Chat.Title
				switch {
				case name == "" && m.Chat.Username != "":
					name = "@" + m.Chat.Username
				case name == "":
					name = m.Chat.FirstName
				}
				return m.Chat.ID, printable.String(name), nil
			}
		}
	}
}

// errorf is an error of this package (pkgerr): the operator's line says
// its reason alone.
func errorf(format string, a ...any) error {
	return &pkgerr.Error{Pkg: "guide", Err: fmt.Errorf(format, a...)}
}
