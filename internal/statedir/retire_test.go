package statedir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func retireAt(n int, at time.Time) RetireRecord {
	return RetireRecord{Nonce: fmt.Sprintf("%032x", n), ChatID: 42, MessageID: 1000 + n, Reason: RetireGone, At: at}
}

func TestRetireRoundTrip(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	want := []RetireRecord{retireAt(1, at), {Nonce: fmt.Sprintf("%032x", 2), ChatID: -100500, MessageID: 7, Reason: RetireAnswered, At: at.Add(time.Second)}}
	for _, r := range want {
		if err := d.WriteRetire(r); err != nil {
			t.Fatal(err)
		}
	}
	got, refused := d.Retires(at.Add(time.Minute))
	if diff := cmp.Diff(want, got); diff != "" || len(refused) != 0 {
		t.Errorf("records (-want +got):\n%s\nrefused: %v", diff, refused)
	}
	fi, err := os.Stat(d.Path(filepath.Join(Answers, want[0].Nonce+RetireSuffix)))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a record's mode: %v, %v; want 0600", fi.Mode(), err)
	}
	d.DropRetire(want[0].Nonce + RetireSuffix)
	if got, _ := d.Retires(at.Add(time.Minute)); len(got) != 1 {
		t.Errorf("after a drop: %v", got)
	}
}

// TestWriteRetireRefusesBadRecords: a record the receiver would refuse is
// not written.
func TestWriteRetireRefusesBadRecords(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	at := time.Now()
	for _, r := range []RetireRecord{
		{Nonce: "../x", ChatID: 42, MessageID: 1, Reason: RetireGone, At: at},
		{Nonce: strings.Repeat("a", 32), MessageID: 1, Reason: RetireGone, At: at},
		{Nonce: strings.Repeat("a", 32), ChatID: 42, Reason: RetireGone, At: at},
		{Nonce: strings.Repeat("a", 32), ChatID: 42, MessageID: 1, Reason: "pwned", At: at},
		{Nonce: strings.Repeat("a", 32), ChatID: 42, MessageID: 1, Reason: RetireGone},
	} {
		if err := d.WriteRetire(r); err == nil {
			t.Errorf("WriteRetire(%+v) wrote it", r)
		}
	}
	if got, refused := d.Retires(at); len(got)+len(refused) != 0 {
		t.Errorf("records: %v, refused %v", got, refused)
	}
}

// TestRetiresAreBounded: past MaxRetires the oldest are dropped, and those
// older than RetireLife go at the next write.
func TestRetiresAreBounded(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	at := time.Now()
	for i := range MaxRetires + 5 {
		r := retireAt(i, at.Add(time.Duration(i)*time.Second))
		if err := d.WriteRetire(r); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := d.Retires(at.Add(time.Hour))
	if len(got) != MaxRetires || got[0].Nonce != retireAt(5, at).Nonce {
		t.Errorf("%d records from %v, want %d from the sixth", len(got), got[0].Nonce, MaxRetires)
	}
	// A day later, one more write sweeps the stale ones.
	for _, r := range got {
		path := d.Path(filepath.Join(Answers, r.Nonce+RetireSuffix))
		old := at.Add(-RetireLife - time.Hour)
		os.Chtimes(path, old, old)
	}
	if err := d.WriteRetire(retireAt(99, at)); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Retires(at); len(got) != 1 {
		t.Errorf("%d records after the sweep, want the new one", len(got))
	}
}

// TestRetiresRefusesPlantedRecords: every file named as a record that is
// not one of ours, whole, is refused, and says why.
func TestRetiresRefusesPlantedRecords(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	good := retireAt(1, now)
	json := func(r RetireRecord) string {
		return fmt.Sprintf(`{"nonce":%q,"chat_id":%d,"message_id":%d,"reason":%q,"at":%q}`, r.Nonce, r.ChatID, r.MessageID, r.Reason, r.At.Format(time.RFC3339Nano))
	}
	for _, tt := range []struct {
		name string
		// plant writes what is planted in the answers directory dir,
		// and returns its name.
		plant func(t *testing.T, dir string) string
		why   string
	}{
		{"open to others", func(t *testing.T, dir string) string {
			return write(t, dir, good.Nonce+RetireSuffix, json(good), 0o644)
		}, "open to others"},
		{"a symbolic link to a good record", func(t *testing.T, dir string) string {
			elsewhere := t.TempDir()
			write(t, elsewhere, "x", json(good), 0o600)
			name := good.Nonce + RetireSuffix
			if err := os.Symlink(filepath.Join(elsewhere, "x"), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			return name
		}, "symbolic link"},
		{"a FIFO", func(t *testing.T, dir string) string {
			name := good.Nonce + RetireSuffix
			if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
				t.Skip(err)
			}
			return name
		}, "not a regular file"},
		{"junk", func(t *testing.T, dir string) string {
			return write(t, dir, good.Nonce+RetireSuffix, "{\"nonce\":", 0o600)
		}, "not a retire record's JSON"},
		{"a field more (text to send)", func(t *testing.T, dir string) string {
			return write(t, dir, good.Nonce+RetireSuffix, strings.TrimSuffix(json(good), "}")+`,"text":"pwned"}`, 0o600)
		}, "not a retire record's JSON"},
		{"two records", func(t *testing.T, dir string) string {
			return write(t, dir, good.Nonce+RetireSuffix, json(good)+json(good), 0o600)
		}, "more than one record"},
		{"large", func(t *testing.T, dir string) string {
			return write(t, dir, good.Nonce+RetireSuffix, json(good)+strings.Repeat(" ", 5000), 0o600)
		}, "larger than"},
		{"a name that is no nonce", func(t *testing.T, dir string) string {
			return write(t, dir, "x"+RetireSuffix, json(good), 0o600)
		}, "not a nonce's"},
		{"another record's name", func(t *testing.T, dir string) string {
			return write(t, dir, retireAt(2, now).Nonce+RetireSuffix, json(good), 0o600)
		}, "its name is not its nonce"},
		{"no message id", func(t *testing.T, dir string) string {
			r := good
			r.MessageID = -3
			return write(t, dir, good.Nonce+RetireSuffix, json(r), 0o600)
		}, "no message id"},
		{"no chat", func(t *testing.T, dir string) string {
			r := good
			r.ChatID = 0
			return write(t, dir, good.Nonce+RetireSuffix, json(r), 0o600)
		}, "no chat id"},
		{"a reason of its own", func(t *testing.T, dir string) string {
			r := good
			r.Reason = "<b>click here</b>"
			return write(t, dir, good.Nonce+RetireSuffix, json(r), 0o600)
		}, "an unknown reason"},
		{"expired", func(t *testing.T, dir string) string {
			r := good
			r.At = now.Add(-RetireLife - time.Minute)
			return write(t, dir, good.Nonce+RetireSuffix, json(r), 0o600)
		}, "expired"},
		{"from the future", func(t *testing.T, dir string) string {
			r := good
			r.At = now.Add(time.Hour)
			return write(t, dir, good.Nonce+RetireSuffix, json(r), 0o600)
		}, "from the future"},
		{"another user's", func(t *testing.T, dir string) string {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a file to another user")
			}
			name := write(t, dir, good.Nonce+RetireSuffix, json(good), 0o600)
			if err := os.Lchown(filepath.Join(dir, name), 4242, 4242); err != nil {
				t.Fatal(err)
			}
			return name
		}, "owned by uid 4242"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := Dir(t.TempDir())
			dir, err := d.answersDir()
			if err != nil {
				t.Fatal(err)
			}
			name := tt.plant(t, dir)
			got, refused := d.Retires(now)
			if len(got) != 0 || len(refused) != 1 || refused[0].Name != name || !strings.Contains(refused[0].Why, tt.why) {
				t.Fatalf("records %v, refused %v; want %s refused: %s", got, refused, name, tt.why)
			}
			d.DropRetire(refused[0].Name)
			if _, err := os.Lstat(filepath.Join(dir, name)); !os.IsNotExist(err) {
				t.Errorf("the refused file is still there: %v", err)
			}
		})
	}
	t.Run("a good one among them is taken", func(t *testing.T) {
		d := Dir(t.TempDir())
		dir, _ := d.answersDir()
		write(t, dir, good.Nonce+RetireSuffix, json(good), 0o600)
		write(t, dir, "x"+RetireSuffix, "junk", 0o600)
		write(t, dir, "offers.json", "{}", 0o600)
		got, refused := d.Retires(now)
		if diff := cmp.Diff([]RetireRecord{good}, got); diff != "" || len(refused) != 1 {
			t.Errorf("records (-want +got):\n%s\nrefused %v", diff, refused)
		}
	})
}

// DropRetire removes only a record's name in the answers directory.
func TestDropRetireRemovesOnlyRecords(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	dir, _ := d.answersDir()
	write(t, dir, Offers, "{}", 0o600)
	outside := write(t, string(d), "keep"+RetireSuffix, "x", 0o600)
	for _, name := range []string{Offers, "../" + outside, "..", ""} {
		d.DropRetire(name)
	}
	for _, p := range []string{filepath.Join(dir, Offers), d.Path(outside)} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

func write(t *testing.T, dir, name, data string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return name
}
