package setup

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/printable"
)

// The scanner of config.toml knows only enough TOML to edit the file; the
// reader that counts is Codex's. When Codex is on PATH, install asks it,
// after the write, what it reads of our server (codex mcp get NAME --json,
// with the same CODEX_HOME): a file Codex cannot read, or a server it does
// not see as written, puts the file back as it was and fails with Codex's
// reason. Codex's output is hostile text like any other: bounded, and
// sanitized before it is shown.

// codexCheckTimeout bounds codex mcp get, which reads a file and answers.
const codexCheckTimeout = 10 * time.Second

// maxCodexOutput bounds what install keeps of codex mcp get's output.
const maxCodexOutput = 64 << 10

// maxCodexReason bounds Codex's reason in install's error.
const maxCodexReason = 300

// A codexCheck runs Codex to read config.toml as install wrote it.
type codexCheck struct {
	codex   string   // the codex binary
	environ []string // the environment it runs in, CODEX_HOME aside
	timeout time.Duration
}

// codexCheckFor is the check for env: nil when no codex is on its PATH.
func codexCheckFor(env Env) *codexCheck {
	codex := lookPath(env.getenv("PATH"), "codex")
	if codex == "" {
		return nil
	}
	environ := os.Environ()
	if env.Environ != nil {
		environ = env.Environ()
	}
	return &codexCheck{codex: codex, environ: environ, timeout: codexCheckTimeout}
}

// lookPath is the program name in an absolute directory of path, or "": a
// relative directory would name a program of wherever install runs.
func lookPath(path, name string) string {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// codexSees is what codex mcp get --json says of a server, in the part
// install checks.
type codexSees struct {
	Name           string
	Enabled        bool
	DisabledReason string `json:"disabled_reason"`
	Transport      struct {
		Type    string
		Command string
		Args    []string
		Env     map[string]string
	}
}

// reads says why Codex, with CODEX_HOME set to home, does not read our
// server as want, or nil when it does.
func (c *codexCheck) reads(home string, want codexServer) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.codex, "mcp", "get", MCPServerName, "--json")
	cmd.Env = append(slices.DeleteFunc(slices.Clone(c.environ), func(kv string) bool { return strings.HasPrefix(kv, "CODEX_HOME=") }),
		"CODEX_HOME="+home, "NO_COLOR=1", "RUST_BACKTRACE=0")
	cmd.Dir = "/" // no project of the user's around it
	cmd.WaitDelay = time.Second
	stdout, stderr := &firstBytes{max: maxCodexOutput}, &firstBytes{max: maxCodexOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("codex mcp get %s did not answer within %s", MCPServerName, c.timeout)
	case err != nil:
		return fmt.Errorf("codex mcp get %s: %s", MCPServerName, codexReason(string(stderr.b), err))
	}
	var got codexSees
	if err := json.Unmarshal(stdout.b, &got); err != nil {
		return fmt.Errorf("codex mcp get %s printed no server Codex reads: %s", MCPServerName, codexReason(string(stdout.b), err))
	}
	t := got.Transport
	switch {
	case t.Type != "stdio" || t.Command != want.Command || !slices.Equal(t.Args, want.Args) || !maps.Equal(t.Env, want.Env):
		return fmt.Errorf("codex mcp get %s: Codex reads it as %s, not as install wrote it", MCPServerName,
			printable.Cut(printable.String(fmt.Sprintf("%s %q %q env %q", t.Type, t.Command, t.Args, t.Env)), maxCodexReason))
	case !got.Enabled:
		return fmt.Errorf("codex mcp get %s: Codex has it disabled: %s", MCPServerName, printable.Cut(printable.String(got.DisabledReason), maxCodexReason))
	}
	return nil
}

// codexReason is Codex's one-line reason in its output: its error, and the
// first cause under it, sanitized and cut; else its last line, or err.
func codexReason(out string, err error) string {
	var why []string
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if msg, ok := strings.CutPrefix(line, "Error: "); ok {
			why = append(why, msg)
			for _, next := range lines[i+1:] {
				next = strings.TrimSpace(next)
				if next == "" || next == "Caused by:" {
					continue
				}
				if cause, ok := strings.CutPrefix(next, "0: "); ok {
					why = append(why, cause)
				}
				break
			}
			break
		}
	}
	if why == nil {
		for _, line := range slices.Backward(lines) {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "WARNING:") {
				why = []string{line}
				break
			}
		}
	}
	if why == nil {
		why = []string{err.Error()}
	}
	reason := strings.Join(strings.Fields(printable.String(strings.Join(why, ": "))), " ")
	return printable.Cut(reason, maxCodexReason)
}

// firstBytes keeps the first max bytes written to it.
type firstBytes struct {
	b   []byte
	max int
}

func (w *firstBytes) Write(p []byte) (int, error) {
	if room := w.max - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
