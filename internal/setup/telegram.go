package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
)

// Telegram is install --telegram: the guided set-up, which relay, the
// answer receiver's binary, runs (it asks for the token on in, proves it,
// takes the chat from a message to the bot and writes the config), then
// Install with its test alert, which says which chat it reached.
func Telegram(ctx context.Context, env Env, relay string, in io.Reader, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, relay, "setup")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, stdout, stderr
	if env.Environ != nil {
		cmd.Env = env.Environ()
	}
	var exit *exec.ExitError
	if err := cmd.Run(); errors.As(err, &exit) {
		return &StepError{"telegram", errors.New("the set-up did not finish (above: why); nothing was sent")}
	} else if err != nil {
		return &StepError{"telegram", fmt.Errorf("cannot run %s: %w", relay, err)}
	}
	return Install(ctx, env, Options{TestAlert: true}, stdout)
}
