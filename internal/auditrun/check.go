package auditrun

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/companion"
)

// MinEvery is the shortest schedule: an audit is the expensive layer, run
// rarely; a faster one spends the budget on watching.
const MinEvery = 10 * time.Minute

// Check says what is wrong with s's choices, as the operator gave them,
// before anything runs: the agent, the counts and the clock, the isolation,
// the variables and Codex settings handed over. Its message names the flag.
func (s Settings) Check() error {
	switch {
	case !slices.Contains(Agents, s.Agent):
		return fmt.Errorf("--agent must be claude, codex or gemini; got %q", s.Agent)
	case s.Parallel < 1 || s.Max < 1 || s.Timeout <= 0:
		return fmt.Errorf("--parallel and --max must be 1 or more, --timeout positive")
	case !slices.Contains(Isolations, s.Isolation):
		return fmt.Errorf("--isolation must be %s; got %q", strings.Join(Isolations, ", "), s.Isolation)
	case slices.ContainsFunc(s.KeepEnv, func(n string) bool { return !IsEnvName(n) }):
		return fmt.Errorf("--keep-env takes variable names (letters, digits, _); got %q", strings.Join(s.KeepEnv, ","))
	}
	return CheckCodexConfig(s.CodexConfig)
}

// CheckSchedule says what is wrong with a schedule: every starts a session
// that runs the audit again after each repeat.
func CheckSchedule(every, repeat time.Duration) error {
	switch {
	case every != 0 && every < MinEvery:
		return fmt.Errorf("--every must be %v or more; got %v", MinEvery, every)
	case every != 0 && repeat != 0, repeat < 0:
		return fmt.Errorf("--every starts a session that repeats; --repeat is what it runs, not both")
	}
	return nil
}

// Executables finds, once and before anything runs, the agent's binary
// (bin, else the agent's name, looked up with lookPath) and, unless
// isolation is none, the sandbox's helper where it really is (it is bound
// into the sandbox): a missing one is one clear line, and a scheduled
// session runs the same binaries whatever its PATH.
func Executables(agent, bin, isolation string, lookPath func(string) (string, error)) (agentBin, helper string, err error) {
	if bin == "" {
		bin = agent
	}
	if agentBin, err = lookPath(bin); err == nil {
		agentBin, err = filepath.Abs(agentBin)
	}
	if err != nil {
		return "", "", fmt.Errorf("no %s to run (install it, or pass --bin PATH): %v", agent, err)
	}
	// The helper is the sandbox's way to the API, and a Codex auditor's
	// file tools with or without it.
	if isolation != IsolateNone || agent == "codex" {
		if helper, err = companion.Find(HelperName); err == nil {
			helper, err = filepath.EvalSymlinks(helper)
		}
		if err != nil {
			return "", "", err
		}
	}
	return agentBin, helper, nil
}
