// Package relay is the answer receiver's side that the omega-monitor
// binary links: its configuration (the funnel's telegram.conf with the
// keys answers=, free_text= and allow_users=), the files it keeps in the state home
// (its lock, its update offset, relay.json, the answers in flight, its
// log), and starting, stopping and reporting it as a detached multiplexer
// session, and printing its log.
// The receiver itself, with its Telegram client, is relay/receiver, in the
// binary omega-monitor-relay: nothing here links the client, so that no
// poll pays for it.
package relay

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

// DefaultAPI is the Bot API's address when $OMEGA_TELEGRAM_API is not set.
const DefaultAPI = "https://api.telegram.org"

// A Config is what the receiver takes from the funnel's config and the
// environment. The bot token is kept unexported and out of every String:
// it must never reach a log or a command line.
type Config struct {
	// Path is the config file it was read from.
	Path string
	// ChatID is the chat the alerts go to; negative for a group.
	ChatID int64
	// Answers says answers=on: the receiver may run.
	Answers bool
	// FreeText says free_text=on: a reply to a question's message is
	// taken as the words of its free-text option. Off unless set.
	FreeText bool
	// AllowUsers are the Telegram user ids allowed to answer in a group.
	AllowUsers []int64
	// API is the Bot API's address, without a trailing slash.
	API string

	token string
}

// Token is the bot token, for the client alone.
func (c Config) Token() string { return c.token }

// Private says whether the chat is the operator's private chat with the bot.
func (c Config) Private() bool { return c.ChatID > 0 }

// Allowed says whether the Telegram user id may answer: in a private chat
// the chat's own user (whose id is the chat's), in a group one listed in
// allow_users.
func (c Config) Allowed(user int64) bool {
	if c.Private() {
		return user == c.ChatID
	}
	return slices.Contains(c.AllowUsers, user)
}

// String says the answer settings, never the token.
func (c Config) String() string {
	answers := "off"
	if c.Answers {
		answers = "on"
	}
	who := "the chat's own user"
	if !c.Private() {
		ids := make([]string, len(c.AllowUsers))
		for i, id := range c.AllowUsers {
			ids[i] = strconv.FormatInt(id, 10)
		}
		who = "users " + strings.Join(ids, ",")
		if len(ids) == 0 {
			who = "nobody (no allow_users)"
		}
	}
	kind := "private chat"
	if !c.Private() {
		kind = "group"
	}
	text := "off"
	if c.FreeText {
		text = "on"
	}
	return fmt.Sprintf("answers=%s, free_text=%s, %s %d, answered by %s (config %s)", answers, text, kind, c.ChatID, who, c.Path)
}

// GoString keeps the token out of %#v too.
func (c Config) GoString() string { return "relay.Config{" + c.String() + "}" }

// maxConf is the largest config read: a few lines.
const maxConf = 64 << 10

// LoadConfig reads the funnel's config (alert.ConfPath) and
// $OMEGA_TELEGRAM_API. It refuses a config that is not the user's own
// file with mode 0600 (as the funnel does: it holds the bot token), a
// token or chat id the funnel would refuse, a chat named @channel (a
// channel has no one to tap), and an address that would carry the token in
// clear. It does not say whether answers are on: Check does.
func LoadConfig(getenv func(string) string, home string) (Config, error) {
	path := alert.ConfPath(getenv, home)
	c := Config{Path: path, API: DefaultAPI}
	if v := getenv("OMEGA_TELEGRAM_API"); v != "" {
		api, err := watcher.CheckAPI(v)
		if err != nil {
			return c, errorf("OMEGA_TELEGRAM_API: %w", err)
		}
		c.API = strings.TrimRight(api, "/")
	}
	if err := checkOwn(path); err != nil {
		return c, err
	}
	data, err := fsutil.ReadCapped(path, maxConf)
	if err != nil {
		return c, errorf("%w", err)
	}
	var chat, answers, freeText, allow string
	var haveAllow bool
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key = strings.Join(strings.Fields(key), "")
		value = unquote(strings.TrimSpace(value))
		switch key {
		case "bot_token":
			c.token = value
		case "chat_id":
			chat = value
		case "answers":
			answers = value
		case "free_text":
			freeText = value
		case "allow_users":
			allow, haveAllow = value, true
		}
	}
	if !isToken(c.token) {
		return c, errorf("%s: bot_token is missing or not a bot token (123456789:AA...)", path)
	}
	c.ChatID, err = strconv.ParseInt(chat, 10, 64)
	if err != nil || c.ChatID == 0 {
		return c, errorf("%s: chat_id is missing or not a chat's number (answers need the chat's id, not an @name)", path)
	}
	switch answers {
	case "on":
		c.Answers = true
	case "", "off":
	default:
		return c, errorf("%s: answers=%q: want on or off", path, answers)
	}
	switch freeText {
	case "on":
		c.FreeText = true
	case "", "off":
	default:
		return c, errorf("%s: free_text=%q: want on or off", path, freeText)
	}
	if haveAllow {
		for _, f := range strings.Split(allow, ",") {
			id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil || id <= 0 {
				return c, errorf("%s: allow_users: %q is not a Telegram user id (a positive number)", path, strings.TrimSpace(f))
			}
			if !slices.Contains(c.AllowUsers, id) {
				c.AllowUsers = append(c.AllowUsers, id)
			}
		}
	}
	return c, nil
}

// Check says why the receiver must not run with c, or nil.
func (c Config) Check() error {
	if !c.Answers {
		return errorf("answers are off: add the line answers=on to %s to answer questions from the chat", c.Path)
	}
	if !c.Private() && len(c.AllowUsers) == 0 {
		return errorf("the chat %d is a group, and no one may answer in it: add allow_users=ID[,ID...] (the Telegram user ids allowed to answer) to %s", c.ChatID, c.Path)
	}
	return nil
}

// Load is LoadConfig, then Check.
func Load(getenv func(string) string, home string) (Config, error) {
	c, err := LoadConfig(getenv, home)
	if err == nil {
		err = c.Check()
	}
	return c, err
}

// checkOwn refuses a config that others could read or change: it must
// resolve to a regular file owned by the effective user, with no
// permission for group or others, as the funnel requires.
func checkOwn(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return errorf("no Telegram config at %s (bot_token= and chat_id= lines, mode 0600)", path)
	}
	if err != nil {
		return errorf("%w", err)
	}
	if !fi.Mode().IsRegular() {
		return errorf("%s is not a regular file", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return errorf("%s is not owned by you (uid %d): it holds the bot token", path, os.Geteuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return errorf("%s is mode %o, open to other users, and it holds the bot token; fix it with: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	return nil
}

// unquote strips one pair of matching quotes, as the funnel reads values.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// isToken says whether s has a bot token's shape: digits, a colon, then
// letters, digits, _ and -, as the funnel checks it.
func isToken(s string) bool {
	id, secret, ok := strings.Cut(s, ":")
	if !ok || id == "" || secret == "" || strings.Trim(id, "0123456789") != "" {
		return false
	}
	for _, r := range secret {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
