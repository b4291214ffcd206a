package board

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// writeGroup writes a group under home as package poll does (its
// TestBoardShowsGroups holds the board to poll's own files): its cause,
// one member a watcher named, and pages, each naming watchers, pending
// when it still has an alert in its outbox.
func writeGroup(t *testing.T, home, name, cause string, members []string, pages map[string]bool) string {
	t.Helper()
	dir := filepath.Join(home, statedir.Groups, name)
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, statedir.GroupMembers), 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, statedir.GroupFile), []byte(cause), 0o600))
	for i, m := range members {
		rec := fmt.Sprintf(`{"watcher":%q,"target":"t","event":"stopped","at":%q,"window":60000000000}`, m, now.Add(time.Duration(i-30)*time.Second).Format(time.RFC3339))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, statedir.GroupMembers, m+".stopped.json"), []byte(rec), 0o600))
	}
	n := 0
	for names, pending := range pages {
		n++
		page := filepath.Join(dir, statedir.GroupPages, fmt.Sprintf("%03d", n))
		assert.NilError(t, os.MkdirAll(filepath.Join(page, statedir.Outbox), 0o700))
		plan := fmt.Sprintf(`{"event":"stopped","watchers":["%s"]}`, strings.ReplaceAll(names, ",", `","`))
		assert.NilError(t, os.WriteFile(filepath.Join(page, statedir.GroupPage), []byte(plan), 0o600))
		if pending {
			assert.NilError(t, os.WriteFile(filepath.Join(page, statedir.Outbox, "1.alert"), []byte("x"), 0o600))
		}
	}
	return dir
}

const limitCause = `{"key":"k","cause":{"kind":"usage-limit","agent":"Claude Code","reset":"9:02am (UTC)"}}`

// TestGroupsOnTheBoard: a group is on the board while it gathers or has
// a page pending, with its panes counted and its page's due time; one
// whose pages all went is not.
func TestGroupsOnTheBoard(t *testing.T) {
	home := t.TempDir()
	const a, b, c = "usage-limit-aaaaaaaaaaaaaaaaaaaaaaaa", "usage-limit-bbbbbbbbbbbbbbbbbbbbbbbb", "host-cccccccccccccccccccccccc"
	writeGroup(t, home, a, limitCause, []string{"monitor-a", "monitor-b", "monitor-c"}, map[string]bool{"monitor-a,monitor-b": true})
	writeGroup(t, home, b, limitCause, []string{"monitor-d"}, map[string]bool{"monitor-d": false})
	writeGroup(t, home, c, `{"key":"k","cause":{"kind":"host","host":"gpu"}}`, []string{"monitor-e", "monitor-f"}, nil)
	got := readGroups(home, now)
	due := now.Add(30 * time.Second) // the first gathering pane joined 30 s ago, 60 s window
	dueC := now.Add(30 * time.Second)
	want := []Group{
		{Name: c, Kind: "host", CauseHost: "gpu", Panes: 2, Gathering: 2, DueAt: &dueC},
		{Name: a, Kind: "usage-limit", Agent: "Claude Code", Reset: "9:02am (UTC)", Panes: 3, Gathering: 1,
			DueAt: ptr(due.Add(2 * time.Second)), PagesPending: 1, PagesMade: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readGroups (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

// TestGroupsHostile: whatever is planted under .groups costs the board
// nothing but its own line: files, links, pipes, names not a group's,
// oversized or torn records and escapes in a cause are read around, and
// the census of the watchers stands.
func TestGroupsHostile(t *testing.T) {
	home := t.TempDir()
	writeDir(t, home, "monitor-web", map[string]string{"state.json": stateJSON("WORKING", now.Add(-time.Minute), now.Add(-time.Minute), "")})
	root := filepath.Join(home, statedir.Groups)
	good := writeGroup(t, home, "usage-limit-000000000000000000000000",
		"{\"key\":\"k\",\"cause\":{\"kind\":\"usage-limit\",\"agent\":\"Claude\\u001b]0;pwned\\u0007\\u202e Code\",\"reset\":\""+strings.Repeat("9", 500)+"\"}}",
		[]string{"monitor-a"}, nil)
	// A member that is a pipe, one that is a link to a huge file, one torn,
	// one whose name is not its own.
	assert.NilError(t, syscall.Mkfifo(filepath.Join(good, statedir.GroupMembers, "monitor-p.stopped.json"), 0o600))
	huge := filepath.Join(t.TempDir(), "huge")
	assert.NilError(t, os.WriteFile(huge, []byte(strings.Repeat("{", 1<<20)), 0o600))
	assert.NilError(t, os.Symlink(huge, filepath.Join(good, statedir.GroupMembers, "monitor-l.stopped.json")))
	assert.NilError(t, os.WriteFile(filepath.Join(good, statedir.GroupMembers, "monitor-t.stopped.json"), []byte(`{"watcher":"monitor-t"`), 0o600))
	assert.NilError(t, os.WriteFile(filepath.Join(good, statedir.GroupMembers, "monitor-x.stopped.json"), []byte(`{"watcher":"monitor-y","event":"stopped"}`), 0o600))
	// A page whose record is a pipe.
	assert.NilError(t, os.MkdirAll(filepath.Join(good, statedir.GroupPages, "001"), 0o700))
	assert.NilError(t, syscall.Mkfifo(filepath.Join(good, statedir.GroupPages, "001", statedir.GroupPage), 0o600))
	// Things that are no group: a file, a link to a group elsewhere, a
	// name of another shape.
	assert.NilError(t, os.WriteFile(filepath.Join(root, "host-111111111111111111111111"), []byte("x"), 0o600))
	elsewhere := writeGroup(t, t.TempDir(), "host-222222222222222222222222", limitCause, []string{"monitor-z"}, nil)
	assert.NilError(t, os.Symlink(elsewhere, filepath.Join(root, "host-222222222222222222222222")))
	writeGroup(t, home, "host-notadigest", limitCause, []string{"monitor-z"}, nil)
	writeGroup(t, home, "Host-333333333333333333333333", limitCause, []string{"monitor-z"}, nil)
	// A group whose cause is a pipe: its own line says so.
	torn := filepath.Join(root, "host-444444444444444444444444")
	assert.NilError(t, os.MkdirAll(torn, 0o700))
	assert.NilError(t, syscall.Mkfifo(filepath.Join(torn, statedir.GroupFile), 0o600))

	done := make(chan Fleet)
	go func() {
		f, err := Census(home, now, Options{Brief: true})
		assert.Check(t, err)
		done <- f
	}()
	var f Fleet
	select {
	case f = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the census hung on a planted group")
	}
	assert.Equal(t, len(f.Watchers), 1)
	assert.Equal(t, len(f.Groups), 2, "%+v", f.Groups)
	g := f.Groups[1]
	assert.Equal(t, g.Name, "usage-limit-000000000000000000000000")
	assert.Equal(t, g.Panes, 1)
	assert.Equal(t, g.Gathering, 1)
	assert.Equal(t, g.Agent, "Claude Code")
	assert.Assert(t, len(g.Reset) <= 64, "%q", g.Reset)
	assert.Equal(t, f.Groups[0].Error, "its cause (group.json) cannot be read")
}
