package poll

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/digest"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/proc"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

// One page per cause. A watcher is a process of its own with a directory of
// its own; the panes one account's usage limit stopped, or the watchers of
// one host gone, share a group directory in the state home instead
// (statedir.Groups), with no daemon:
//
//	.groups/NAME/group.json            the cause, as its first member gave it
//	.groups/NAME/members/W.EVENT.json  one pane's event, written by its watcher
//	.groups/NAME/pages/NNN/            one page: page.json (who it names) and
//	                                   an outbox, as a watcher's
//
// Each member's poll, under the group's lock, makes the pages due
// (tick.DuePages): a page is made whole in a directory of its own and
// renamed into place, so that it exists complete or not at all, and the
// watchers it names are known from it alone. Every member's deliverer then
// tries every page waiting, one at a time under the page's outbox lock (as
// a watcher's outbox), so that a member stopped after making a page does
// not lose it: another member, or its own next start, delivers it, once.

// Bounds of what a group directory may make a poll read.
const (
	maxGroups       = 256
	maxGroupMembers = 1000
	maxGroupPages   = 200
	maxGroupFile    = 64 << 10
)

// groupKeep is how long a group whose pages are all delivered is kept after
// its last event: a limit said again within it joins its pages.
const groupKeep = 7 * 24 * time.Hour

// groupName says whether name is a group's directory name: its cause's
// kind and a digest of its key, so that no pane's words reach a path;
// causeKind whether kind is a cause's kind; plainName whether a watcher's
// name may be carried as it is by a member file. Checked by hand, not by
// regular expressions: the tick checks a member's name every poll, and a
// counted repetition ({1,100}) compiles to as many copies of its class;
// the three expressions cost every start 0.7 ms and 129 KB
// (GODEBUG=inittrace=1).
func groupName(name string) bool {
	kind, sum, ok := cutLast(name, "-")
	return ok && causeKind(kind) && len(sum) == 24 && only(sum, "0123456789abcdef")
}

func causeKind(kind string) bool {
	return len(kind) >= 1 && len(kind) <= 16 && only(kind, "abcdefghijklmnopqrstuvwxyz-")
}

func plainName(name string) bool {
	return len(name) >= 1 && len(name) <= 100 &&
		only(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
}

// only says whether every byte of s is one of set's.
func only(s, set string) bool {
	for i := range len(s) {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// cutLast is strings.Cut at sep's last occurrence.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

func groupDirName(key string) string {
	kind, _, _ := strings.Cut(key, "\x00")
	if !causeKind(kind) {
		kind = "cause"
	}
	sum := digest.Sum256([]byte(key))
	return kind + "-" + hex.EncodeToString(sum[:12])
}

// memberName is a watcher's name as a member file starts: its directory's
// name where that is plain, else a digest of it.
func memberName(watcher string) string {
	if plainName(watcher) {
		return watcher
	}
	sum := digest.Sum256([]byte(watcher))
	return "w" + hex.EncodeToString(sum[:12])
}

// A groupRecord is group.json: the cause as its first member gave it.
type groupRecord struct {
	Key   string      `json:"key"`
	Cause alert.Cause `json:"cause"`
}

// A memberRecord is one pane's event in its group.
type memberRecord struct {
	Watcher string           `json:"watcher"`
	Target  string           `json:"target"`
	Event   alert.GroupEvent `json:"event"`
	At      time.Time        `json:"at"`
	Window  time.Duration    `json:"window"`
	Detail  string           `json:"detail,omitempty"`
	// Alone is the pane's own alert, as the outbox takes it: a page that
	// names this pane only is this.
	Alone []string `json:"alone,omitempty"`
}

// joinGroup records the watcher's event in the group of its cause: the
// first event of a pane stands (a second one adds nothing to its page).
func joinGroup(home, watcher, target string, g tick.Grouping, alone []string, now time.Time) error {
	if g.Key == "" {
		return errors.New("poll: a group without a key")
	}
	dir := filepath.Join(home, statedir.Groups, groupDirName(g.Key))
	if err := os.MkdirAll(filepath.Join(dir, statedir.GroupMembers), 0o700); err != nil {
		return fmt.Errorf("poll: group: %w", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, statedir.GroupFile)); errors.Is(err, os.ErrNotExist) {
		b, err := json.Marshal(groupRecord{Key: g.Key, Cause: g.Cause})
		if err != nil {
			return fmt.Errorf("poll: group: %w", err)
		}
		if err := atomicfile.Write(filepath.Join(dir, statedir.GroupFile), b, 0o600); err != nil {
			return fmt.Errorf("poll: group: %w", err)
		}
	}
	name := memberName(watcher)
	path := filepath.Join(dir, statedir.GroupMembers, name+"."+string(g.Event)+".json")
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	if n := len(strings.Join(alone, "")); n > maxGroupFile/2 {
		alone = nil // the group's own words, rather than a file past its bound
	}
	b, err := json.Marshal(memberRecord{Watcher: name, Target: target, Event: g.Event, At: now, Window: g.Window, Detail: g.Detail, Alone: alone})
	if err != nil {
		return fmt.Errorf("poll: group: %w", err)
	}
	if err := atomicfile.Write(path, b, 0o600); err != nil {
		return fmt.Errorf("poll: group: %w", err)
	}
	return nil
}

// joinGroups joins each alert of the outcome that shares its cause with
// other panes to its group; what could not join is returned, to go alone.
func (d stateDirectory) joinGroups(actions []tick.Action, now time.Time, problems *[]string) (alone []tick.Action) {
	home, watcher := filepath.Dir(string(d)), filepath.Base(string(d))
	for _, a := range actions {
		if a.Kind != tick.Alert || a.Group == nil || a.OnTyped {
			alone = append(alone, a)
			continue
		}
		if err := joinGroup(home, watcher, a.Alert.Target, *a.Group, a.Alert.HTML(), now); err != nil {
			*problems = append(*problems, err.Error()+": paged alone")
			a.Group = nil
			alone = append(alone, a)
		}
	}
	return alone
}

// LeaveGroups is what a watcher's stop does to the groups it is a member
// of (Stopped, as its loop ends): a group for which no other member runs
// makes its pages at once, its window over or not, so that the page of a
// lone member stopped while its group gathered is made and sent, not left
// for a poll that never comes; a group with another member running is
// left to that member's next poll, and gathers on. It writes the
// watcher's GroupsWaiting as a poll does: the loop's last act is a
// deliverer for them.
func LeaveGroups(dir string, now time.Time) error {
	var problems []string
	stateDirectory(dir).groupPages(now, true, &problems)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// groupStep makes the pages due in each group the watcher is a member of,
// and writes the groups holding a page not yet delivered in the watcher's
// GroupsWaiting (or removes it): the loop starts a deliverer for them.
func (d stateDirectory) groupStep(now time.Time, problems *[]string) {
	d.groupPages(now, false, problems)
}

// groupPages is groupStep; leaving makes at once the pages of each group
// no other member runs for (LeaveGroups).
func (d stateDirectory) groupPages(now time.Time, leaving bool, problems *[]string) {
	home, watcher := filepath.Dir(string(d)), memberName(filepath.Base(string(d)))
	root := filepath.Join(home, statedir.Groups)
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		*problems = append(*problems, "groups: "+err.Error())
	}
	if len(entries) > maxGroups {
		entries = entries[:maxGroups]
	}
	var waiting []string
	for _, e := range entries {
		if !e.IsDir() || !groupName(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if mine, _ := filepath.Glob(filepath.Join(dir, statedir.GroupMembers, watcher+".*.json")); len(mine) == 0 {
			continue
		}
		pending, err := makePages(dir, now, leaving && !othersRun(home, dir, watcher))
		if err != nil {
			*problems = append(*problems, err.Error())
		}
		if pending {
			waiting = append(waiting, e.Name())
		}
	}
	path := d.path(statedir.GroupsWaiting)
	if len(waiting) == 0 {
		os.Remove(path)
		return
	}
	if err := atomicfile.Write(path, []byte(strings.Join(waiting, "\n")+"\n"), 0o600); err != nil {
		*problems = append(*problems, "groups: "+err.Error())
	}
}

// othersRun says whether a member of the group at dir other than me (a
// member name) has a loop that runs and is not being stopped (a stop
// marks its watcher ended before it ends the loop: two watchers stopped
// at once each count the other as gone).
func othersRun(home, dir, me string) bool {
	members, _ := readMembers(dir)
	var names map[string]string // member name → watcher directory, for digests
	for _, m := range members {
		if m.Watcher == me {
			continue
		}
		path := filepath.Join(home, m.Watcher)
		if !plainName(m.Watcher) || !isDir(path) {
			if names == nil {
				names = map[string]string{}
				entries, _ := os.ReadDir(home)
				for _, e := range entries {
					names[memberName(e.Name())] = filepath.Join(home, e.Name())
				}
			}
			path = names[m.Watcher]
		}
		if path != "" && runs(path) {
			return true
		}
	}
	return false
}

func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

// runs says whether the loop of the watcher at dir runs (its pid, with
// its start token) and no stop has marked it ended since it started.
func runs(dir string) bool {
	d := statedir.Dir(dir)
	var loop statedir.LoopRecord
	if d.ReadRecord(statedir.Loop, &loop) != nil || !proc.Alive(loop.Pid, loop.StartToken) {
		return false
	}
	var ended statedir.EndedRecord
	return d.ReadRecord(statedir.Ended, &ended) != nil || ended.At.Before(loop.StartedAt.Truncate(time.Second))
}

// makePages makes the pages a group owes at now, under its lock, and says
// whether one waits to be delivered; force makes every page the group
// gathers for, due or not. A group whose pages are all delivered and whose
// last event is older than groupKeep goes.
func makePages(dir string, now time.Time, force bool) (pending bool, err error) {
	lock, err := fsutil.Lock(filepath.Join(dir, statedir.GroupLock))
	if err != nil {
		return false, fmt.Errorf("poll: group lock: %w", err)
	}
	defer lock.Close()
	var rec groupRecord
	if b, err := fsutil.ReadCapped(filepath.Join(dir, statedir.GroupFile), maxGroupFile); err != nil || json.Unmarshal(b, &rec) != nil {
		return false, fmt.Errorf("poll: group %s: no cause readable", filepath.Base(dir))
	}
	members, last := readMembers(dir)
	made, pages := readPages(dir)
	for _, p := range pages {
		if names, _ := statedir.Dir(p).PendingAlerts(); len(names) > 0 {
			pending = true
		}
	}
	var entries []tick.GroupEntry
	for _, m := range members {
		entries = append(entries, tick.GroupEntry{Watcher: m.Watcher, Event: m.Event, At: m.At, Window: m.Window})
	}
	due := now
	if force {
		due = now.AddDate(100, 0, 0) // every window over
	}
	for _, plan := range tick.DuePages(entries, made, due) {
		if len(made) >= maxGroupPages {
			return pending, fmt.Errorf("poll: group %s: %d pages made, no more", filepath.Base(dir), len(made))
		}
		if err := makePage(dir, len(made)+1, rec.Cause, plan, members, now); err != nil {
			return pending, err
		}
		made = append(made, plan)
		pending = true
	}
	if !pending && !last.IsZero() && now.Sub(last) > groupKeep {
		os.RemoveAll(dir)
	}
	return pending, nil
}

// readMembers reads a group's member files (the unreadable are skipped),
// and the time of its last event.
func readMembers(dir string) (members []memberRecord, last time.Time) {
	entries, _ := os.ReadDir(filepath.Join(dir, statedir.GroupMembers))
	if len(entries) > maxGroupMembers {
		entries = entries[:maxGroupMembers]
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		var m memberRecord
		b, err := fsutil.ReadCapped(filepath.Join(dir, statedir.GroupMembers, e.Name()), maxGroupFile)
		if err != nil || json.Unmarshal(b, &m) != nil || m.Watcher != memberName(m.Watcher) ||
			e.Name() != m.Watcher+"."+string(m.Event)+".json" {
			continue
		}
		members = append(members, m)
		if m.At.After(last) {
			last = m.At
		}
	}
	return members, last
}

// readPages reads the pages a group has made, in order, with their
// directories.
func readPages(dir string) (made []tick.GroupPlan, paths []string) {
	entries, _ := os.ReadDir(filepath.Join(dir, statedir.GroupPages))
	for _, e := range entries {
		path := filepath.Join(dir, statedir.GroupPages, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			// A page a member stopped making: never renamed, never sent.
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
				os.RemoveAll(path)
			}
			continue
		}
		var p tick.GroupPlan
		if b, err := fsutil.ReadCapped(filepath.Join(path, statedir.GroupPage), maxGroupFile); err != nil || json.Unmarshal(b, &p) != nil {
			continue
		}
		made = append(made, p)
		paths = append(paths, path)
	}
	return made, paths
}

// makePage makes page n of a group whole in a directory of its own, then
// renames it into place: a member stopped on the way leaves no page, and
// the next member's poll makes it.
func makePage(dir string, n int, cause alert.Cause, plan tick.GroupPlan, members []memberRecord, now time.Time) error {
	page := alert.GroupPage{Cause: cause, Event: plan.Event, Follow: plan.Follow, Time: now}
	var alone []string
	for _, w := range plan.Watchers {
		i := slices.IndexFunc(members, func(m memberRecord) bool { return m.Watcher == w && m.Event == plan.Event })
		if i >= 0 {
			page.Members = append(page.Members, alert.GroupMember{Target: members[i].Target, Detail: members[i].Detail})
			alone = members[i].Alone
		}
	}
	msgs := page.HTML()
	if len(page.Members) == 1 && !plan.Follow && len(alone) > 0 {
		// A cause that stopped one pane only: its own alert says it best.
		msgs = alone
	}
	var nonce [6]byte
	rand.Read(nonce[:])
	tmp := filepath.Join(dir, statedir.GroupPages, ".new-"+hex.EncodeToString(nonce[:]))
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("poll: group page: %w", err)
	}
	b, err := json.Marshal(plan)
	if err == nil {
		err = atomicfile.Write(filepath.Join(tmp, statedir.GroupPage), b, 0o600)
	}
	if err == nil {
		err = statedir.Dir(tmp).QueueAlerts(now, msgs)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, statedir.GroupPages, fmt.Sprintf("%03d", n)))
	}
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("poll: group page: %w", err)
	}
	return nil
}

// deliverGroups delivers the pages waiting in the groups the watcher's
// GroupsWaiting names, each page as a watcher's outbox (Deliver): one
// deliverer at a time has a page, and a page reaches each channel once.
func deliverGroups(ctx context.Context, dir, funnel, stateHome string, environ []string, o DeliverOptions) (lines []string, ok bool) {
	ok = true
	b, err := fsutil.ReadCapped(filepath.Join(dir, statedir.GroupsWaiting), maxGroupFile)
	if err != nil {
		return nil, true
	}
	root := filepath.Join(filepath.Dir(dir), statedir.Groups)
	for _, name := range strings.Fields(string(b)) {
		if !groupName(name) || ctx.Err() != nil {
			continue
		}
		_, pages := readPages(filepath.Join(root, name))
		for _, p := range pages {
			if names, _ := statedir.Dir(p).PendingAlerts(); len(names) == 0 {
				continue
			}
			l, good := Deliver(ctx, p, "group "+name, funnel, stateHome, environ, o)
			lines = append(lines, l...)
			ok = ok && good
		}
	}
	return lines, ok
}
