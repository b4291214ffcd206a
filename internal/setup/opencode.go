package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
)

// OpenCode has no hooks file: it loads every .js or .ts file of the plugin/
// (or plugins/) directory of its user config directory as a plugin, and
// hands each plugin every event of its bus. Ours is one small file there,
// written whole by install and removed whole by uninstall: the events that
// mean the screen changed in a way the watcher must see run
// `omega-monitor wake`, without a shell, in the background.

// openCodeEvents are the events of OpenCode's bus that wake the watcher,
// as its description gives them (classify/agents/opencode.json: a
// permission dialog drawn, its question tool's dialog, a turn's end, a
// turn failed).
func openCodeEvents() []string { return classify.HookEvents("OpenCode") }

// openCodeMark starts the first line of our plugin: a file that starts
// otherwise is not ours, and install and uninstall leave it as it is.
const openCodeMark = "// omega-monitor wake plugin"

// openCodePluginFile is our plugin's name in OpenCode's plugin directory.
const openCodePluginFile = "omega-monitor-wake.js"

// maxPluginRead bounds what is read of a file in our plugin's place: ours
// is under 2 KiB, and a larger one is not ours.
const maxPluginRead = 64 << 10

// openCodeDir is OpenCode's user config directory: $XDG_CONFIG_HOME/opencode,
// else ~/.config/opencode (OpenCode's own rule).
func openCodeDir(home string, getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "opencode")
	}
	return filepath.Join(home, ".config", "opencode")
}

// openCodePlugin is the path of our plugin.
func openCodePlugin(home string, getenv func(string) string) string {
	return filepath.Join(openCodeDir(home, getenv), "plugin", openCodePluginFile)
}

// openCodePluginText is our plugin for OpenCode, running argv. It passes
// nothing of an event to the program (the event's type only chooses
// whether to run it), starts it without a shell, with no input or output,
// and never waits for it: the event handler returns at once. At most two
// run at a time (a burst of events is one or two wakes; the loop takes the
// wakes of 250 ms into one poll), and each is killed after 10 s.
func openCodePluginText(argv []string) []byte {
	args, _ := json.Marshal(argv)
	events, _ := json.Marshal(openCodeEvents())
	return fmt.Appendf(nil, `%s: written by omega-monitor install --hooks --opencode,
// removed by omega-monitor install --hooks --uninstall. Rewritten whole: do not edit.
// At the events below OpenCode's screen changed in a way its watcher must see
// (a dialog, a turn's end): it runs omega-monitor wake, which wakes the watcher
// of this pane ($TMUX_PANE) to look at the screen at once.
import { spawn } from "node:child_process";

const argv = %s;
const events = new Set(%s);
let running = 0;

export const OmegaMonitorWake = async () => ({
  event: async ({ event }) => {
    if (!event || !events.has(event.type) || running >= 2) return;
    try {
      const child = spawn(argv[0], argv.slice(1), { stdio: "ignore", shell: false });
      running++;
      const timer = setTimeout(() => child.kill("SIGKILL"), 10000);
      timer.unref?.();
      let done = false;
      const end = () => { if (!done) { done = true; running--; clearTimeout(timer); } };
      child.on("exit", end);
      child.on("error", end);
      child.unref();
    } catch {}
  },
});
`, openCodeMark, args, events)
}

// readPlugin reads the file at path, a regular file only, up to
// maxPluginRead bytes; exists says something is there at all.
func readPlugin(path string) (b []byte, exists bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if !fi.Mode().IsRegular() {
		return nil, true, fmt.Errorf("%s is not a regular file: left as it is", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, true, err
	}
	defer f.Close()
	b, err = io.ReadAll(io.LimitReader(f, maxPluginRead+1))
	return b, true, err
}

// isOurPlugin says a plugin file's text is ours: its first line starts
// with our mark, and it is no larger than ours can be.
func isOurPlugin(b []byte) bool {
	return len(b) <= maxPluginRead && bytes.HasPrefix(b, []byte(openCodeMark))
}

// installOpenCodePlugin writes our plugin into OpenCode's plugin directory,
// or with uninstall removes it, and says what it did. A file of that name
// that is not ours, a link, or a directory is left as it is, and said so.
func installOpenCodePlugin(env Env, uninstall bool) (string, error) {
	path := openCodePlugin(env.Home, env.getenv)
	dir := filepath.Dir(path)
	old, exists, err := readPlugin(path)
	if err != nil {
		return "", err
	}
	if exists && !isOurPlugin(old) {
		return fmt.Sprintf("%s is not ours (it does not start %q): left as it is", path, openCodeMark), nil
	}
	created := readCreated(env.State)
	if uninstall {
		if !exists {
			return "", nil
		}
		if err := os.Remove(path); err != nil {
			return "", err
		}
		said := "removed our plugin " + path
		created.Paths = slices.DeleteFunc(created.Paths, func(p string) bool { return p == path })
		if slices.Contains(created.Paths, dir) && os.Remove(dir) == nil { // only an empty one goes
			created.Paths = slices.DeleteFunc(created.Paths, func(p string) bool { return p == dir })
			said += " and " + dir + ", which install had made"
		}
		if err := created.save(env.State); err != nil {
			said += "; the record of the files install made not kept: " + err.Error()
		}
		return said, nil
	}
	bin, err := env.binary()
	if err != nil {
		return "", err
	}
	want := openCodePluginText(wakeArgv(env, bin))
	if bytes.Equal(old, want) {
		return "", nil
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
		created.made(dir)
	}
	if err := atomicfile.Write(path, want, 0o600); err != nil {
		return "", err
	}
	created.made(path)
	said := []string{fmt.Sprintf("wrote our plugin for %s into %s", strings.Join(openCodeEvents(), ", "), path)}
	if err := created.save(env.State); err != nil {
		said = append(said, "the record of the files install made not kept: "+err.Error())
	}
	said = append(said, "sessions started from now on wake their watcher")
	out := strings.Join(said, "; ")
	for _, l := range lineDiff(old, want) {
		out += "\n    " + openCodePluginFile + ": " + l
	}
	return out, nil
}

// openCodeInstalled says our plugin is in OpenCode's plugin directory.
func openCodeInstalled(home string, getenv func(string) string) bool {
	b, exists, err := readPlugin(openCodePlugin(home, getenv))
	return exists && err == nil && isOurPlugin(b)
}
