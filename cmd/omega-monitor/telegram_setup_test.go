package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestInstallTelegram: the guided set-up asks for the token on standard
// input (never a command line), proves it with getMe, takes the chat from
// the message the operator sends the bot, writes the config 0600, and the
// test alert says which chat it reached; a token Telegram does not know,
// or a config already there, stops it with the reason, nothing written.
func TestInstallTelegram(t *testing.T) {
	testenv.Need(t, "bash", "curl")
	tg := fakeapi.NewTelegram(t, relayToken)
	home := t.TempDir()
	install := func(token string) *icmd.Result {
		cmd := icmd.Command(omegaMonitor(t), "install", "--telegram")
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + filepath.Join(home, "state"),
			"OMEGA_TELEGRAM_API=" + tg.URL}
		cmd.Stdin = strings.NewReader(token + "\n")
		res := icmd.RunCmd(cmd)
		if strings.Contains(res.Combined(), "AAHdq") {
			t.Errorf("the token is shown: %s", res.Combined())
		}
		return res
	}
	conf := filepath.Join(home, ".omega", "telegram.conf")

	res := install("123456789:AAwrongwrongwrongwrongwrongwrongwrong")
	res.Assert(t, icmd.Expected{ExitCode: 1, Err: "Telegram does not know this token"})
	if _, err := os.Stat(conf); err == nil {
		t.Fatal("a config was written for a token that does not work")
	}

	tg.Push(map[string]any{"message": map[string]any{"message_id": 1, "date": 1, "text": "/start",
		"chat": map[string]any{"id": 5551234, "type": "private", "first_name": "Ada", "username": "ada_l"}}})
	res = install(relayToken)
	res.Assert(t, icmd.Success)
	for _, want := range []string{"bot @omega_bot: the token works.", "chat @ada_l (id 5551234)", "wrote " + conf + " (mode 0600)",
		"test alert delivered through", "delivered to the chat"} {
		assert.Assert(t, strings.Contains(res.Combined(), want), "lacks %q:\n%s", want, res.Combined())
	}
	fi, err := os.Stat(conf)
	assert.NilError(t, err)
	assert.Equal(t, fi.Mode().Perm(), os.FileMode(0o600))
	b, _ := os.ReadFile(conf)
	assert.Assert(t, strings.Contains(string(b), "bot_token="+relayToken+"\nchat_id=5551234\n"), string(b))
	sent := tg.Calls("sendMessage")
	assert.Assert(t, len(sent) == 1 && sent[0].Form.Get("chat_id") == "5551234", "%+v", sent)

	install(relayToken).Assert(t, icmd.Expected{ExitCode: 1, Err: "a config is at " + conf + " already: it is kept"})
}
