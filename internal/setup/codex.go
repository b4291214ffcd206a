package setup

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/mirror"
)

// codexSkillTemplate is the $monitor skill: Codex has no custom commands,
// but reads a skill's SKILL.md from $CODEX_HOME/skills/NAME and sends it to
// the model when the user types $NAME. @OMEGA_MONITOR@ stands for the
// binary's path; @PROMPT@ and the notices are mirror's, the same text the
// MCP tool codex_monitor_agent hands out, so that there is one prompt.
//
//go:embed codex-monitor.md
var codexSkillTemplate string

// codexSkillMarker is a line only the skill this binary writes holds, so
// that --uninstall never removes a skill of the user's own.
const codexSkillMarker = "<!-- Installed by `omega-monitor install --codex`"

// CodexSkill is the text of the $monitor skill for the binary at bin.
func CodexSkill(bin string) string {
	prompt, _ := mirror.MonitorAgentPrompt(mirror.ModeFleet, "")
	return strings.NewReplacer("@OMEGA_MONITOR@", bin, "@PROMPT@", prompt,
		"@NOTICE_SPAWNED@", mirror.NoticeSpawned, "@NOTICE_NOSPAWN@", mirror.NoticeNoSpawn).Replace(codexSkillTemplate)
}

// codexHome is Codex's user directory: $CODEX_HOME when it is an absolute
// path (as Codex takes it), else ~/.codex.
func (e Env) codexHome() string {
	if h := e.getenv("CODEX_HOME"); filepath.IsAbs(h) {
		return h
	}
	return filepath.Join(e.Home, ".codex")
}

// codexFiles are the two places Codex reads for a user: the skill, and the
// user config.toml whose [mcp_servers.NAME] tables are its MCP servers.
type codexFiles struct {
	home, skill, config string
	check               *codexCheck // Codex reads config.toml after install wrote it; nil: no Codex on PATH
}

func codexFilesIn(codexHome string) codexFiles {
	return codexFiles{
		home:   codexHome,
		skill:  filepath.Join(codexHome, "skills", "monitor", "SKILL.md"),
		config: filepath.Join(codexHome, "config.toml"),
	}
}

// installCodex is install --codex's step: the skill and the server's
// registration, for the binary that runs.
func installCodex(env Env) (string, error) {
	bin, err := env.binary()
	if err != nil {
		return "", err
	}
	server := codexServer{Command: bin, Args: []string{"mcp"}}
	// The server runs in Codex's environment, which need not hold the
	// state home this install was made for.
	if env.getenv("OMEGA_MONITOR_HOME") != "" {
		server.Env = map[string]string{"OMEGA_MONITOR_HOME": env.State}
	}
	f := codexFilesIn(env.codexHome())
	f.check = codexCheckFor(env)
	created := readCreated(env.State)
	changes, err := f.install(bin, &server, &created)
	if serr := created.save(env.State); serr != nil && err == nil {
		changes = append(changes, "the record of the files install made not kept: "+serr.Error())
	}
	return strings.Join(changes, "; "), err
}

// uninstallCodex is install --codex --uninstall's step.
func uninstallCodex(env Env) (string, error) {
	bin, err := env.binary()
	if err != nil {
		return "", err
	}
	created := readCreated(env.State)
	changes, err := codexFilesIn(env.codexHome()).uninstall(bin, &created)
	if serr := created.save(env.State); serr != nil && err == nil {
		changes = append(changes, "the record of the files install made not kept: "+serr.Error())
	}
	return strings.Join(changes, "; "), err
}

// install writes the skill and the server's table, each only when it
// differs, and says what it changed. What it makes that was not there (the
// Codex home, the skill's directories, config.toml) is recorded in
// created, for uninstall.
func (f codexFiles) install(bin string, server *codexServer, created *createdRecord) ([]string, error) {
	var changes []string
	text := CodexSkill(bin)
	old, err := os.ReadFile(f.skill)
	switch {
	case err == nil && string(old) == text:
	case err == nil && !bytes.Contains(old, []byte(codexSkillMarker)):
		return nil, fmt.Errorf("%s is not ours (no install marker); move it away first", f.skill)
	case err == nil || errors.Is(err, fs.ErrNotExist):
		if err := mkdirRecorded(filepath.Dir(f.skill), created); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(f.skill, []byte(text), 0o600); err != nil {
			return nil, err
		}
		created.made(f.skill)
		changes = append(changes, "wrote "+f.skill+" (the skill $monitor)")
	default:
		return nil, err
	}
	backup, changed, err := f.editConfig(bin, server, created)
	if err != nil {
		return changes, err
	}
	if changed {
		did := fmt.Sprintf("registered the MCP server %s (%s mcp) in %s", MCPServerName, bin, f.config)
		if backup != "" {
			did += " (the file before is kept as " + backup + ")"
		}
		changes = append(changes, did, "Codex sessions started from now on have $monitor")
	}
	return changes, nil
}

// uninstall removes what install put in place, and nothing of the user's.
func (f codexFiles) uninstall(bin string, created *createdRecord) ([]string, error) {
	var changes []string
	removed, err := removeMarked(f.skill, codexSkillMarker)
	if err != nil {
		return nil, err
	}
	if removed {
		changes = append(changes, "removed "+f.skill)
		created.forget(f.skill)
		// The skill's directory always goes with it (nothing else of
		// Codex's lives there); skills/ and the Codex home only when
		// install made them and they are empty.
		if os.Remove(filepath.Dir(f.skill)) == nil {
			created.forget(filepath.Dir(f.skill))
		}
		changes = append(changes, created.removeDirMade(filepath.Dir(filepath.Dir(f.skill)))...)
	}
	_, changed, err := f.editConfig(bin, nil, created)
	if err != nil {
		return changes, err
	}
	if changed {
		changes = append(changes, fmt.Sprintf("removed the MCP server %s from %s", MCPServerName, f.config))
		if target, err := configTarget(f.config); err == nil {
			changes = append(changes, created.removeFileMade(target+codexBackupSuffix)...)
		}
		if gone := created.removeMade(f.config, emptyText); len(gone) > 0 {
			changes = append(changes, "removed "+strings.Join(gone, " and ")+", which install had made")
		}
	}
	changes = append(changes, created.removeDirMade(f.home)...)
	return changes, nil
}

// editConfig sets our table in config.toml to server, or takes it out when
// server is nil. A link is followed and stays a link. Codex may rewrite
// the file as it runs (codex mcp add, a trust given), so it is read again
// just before the write, and the edit starts over when it changed
// meanwhile. A user's file that install changes is kept beside it first;
// it returns where.
func (f codexFiles) editConfig(bin string, server *codexServer, created *createdRecord) (string, bool, error) {
	target, err := configTarget(f.config)
	if err != nil {
		return "", false, err
	}
	for range 5 {
		before, err := readConfig(target)
		if err != nil {
			return "", false, err
		}
		out, changed, err := editCodexConfig(f.config, before, server, bin)
		if err != nil || !changed {
			return "", false, err
		}
		if now, err := readConfig(target); err != nil || !bytes.Equal(now, before) {
			continue
		}
		backup, hadBackup := "", false
		if server != nil && before != nil {
			backup = target + codexBackupSuffix
			_, err := os.Lstat(backup)
			hadBackup = err == nil
			if err := atomicfile.Write(backup, before, 0o600); err != nil {
				return "", false, fmt.Errorf("no backup of %s: %w", target, err)
			}
		}
		if before == nil {
			if err := mkdirRecorded(filepath.Dir(target), created); err != nil {
				return "", false, err
			}
			created.made(target)
		}
		if err := atomicfile.Write(target, out, 0o600); err != nil {
			return "", false, err
		}
		if server != nil && f.check != nil {
			if err := f.check.reads(f.home, *server); err != nil {
				return "", false, f.putBack(target, before, backup, hadBackup, created, err)
			}
		}
		if backup != "" {
			created.made(backup)
		}
		return backup, true, nil
	}
	return "", false, fmt.Errorf("%s kept changing while it was edited (is Codex writing it?): left as it is; try again", f.config)
}

// putBack puts config.toml back as it was before install wrote it (none,
// when install made it), after Codex did not read it: why.
func (f codexFiles) putBack(target string, before []byte, backup string, hadBackup bool, created *createdRecord, why error) error {
	var err error
	if before == nil {
		err = os.Remove(target)
		created.forget(target)
	} else {
		err = atomicfile.Write(target, before, 0o600)
	}
	switch {
	case err != nil && before == nil:
		return fmt.Errorf("%s as install wrote it is not what Codex reads (%v), and it could not be removed: %w", f.config, why, err)
	case err != nil:
		return fmt.Errorf("%s as install wrote it is not what Codex reads (%v), and it could not be put back (the file before is %s): %w", f.config, why, backup, err)
	}
	if backup != "" && !hadBackup {
		os.Remove(backup)
	}
	return fmt.Errorf("%s as install wrote it is not what Codex reads (%v): put back as it was", f.config, why)
}

// codexBackupSuffix names the copy of the user's config.toml as it was
// before install --codex changed it: apart from install --hooks' own, so
// that neither overwrites the other's.
const codexBackupSuffix = ".omega-monitor-mcp.bak"

// mkdirRecorded makes dir and its parents, mode 0700, recording each one it
// made.
func mkdirRecorded(dir string, created *createdRecord) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	created.made(missing...)
	return nil
}

// forget drops path from the record.
func (r *createdRecord) forget(path string) {
	for i, p := range r.Paths {
		if p == path {
			r.Paths = append(r.Paths[:i], r.Paths[i+1:]...)
			return
		}
	}
}

// removeFileMade removes path when install made it, and says so.
func (r *createdRecord) removeFileMade(path string) []string {
	for _, p := range r.Paths {
		if p == path && os.Remove(path) == nil {
			r.forget(path)
			return []string{"removed " + path + ", which install had made"}
		}
	}
	return nil
}

// removeDirMade removes dir when install made it and it is empty now, and
// says so.
func (r *createdRecord) removeDirMade(dir string) []string {
	for _, p := range r.Paths {
		if p == dir && os.Remove(dir) == nil {
			r.forget(dir)
			return []string{"removed " + dir + ", which install had made"}
		}
	}
	return nil
}
