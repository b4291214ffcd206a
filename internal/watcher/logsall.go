package watcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// LogsAll writes the last n lines of every watcher's log under the state
// home (0: all of them), each line after its target in brackets; with
// follow, it then writes each watcher's new lines as they come, whole
// lines only, looking every poll, until ctx ends. It follows the watchers
// there when it starts. Unless raw, no escape sequence a pane printed
// reaches w.
func LogsAll(ctx context.Context, getenv func(string) string, n int, follow, raw bool, w io.Writer, poll time.Duration) error {
	home, err := statedir.Home(getenv)
	if err != nil {
		return err
	}
	if !raw {
		pw := printable.NewWriter(w)
		defer pw.Flush()
		w = pw
	}
	watchers, err := logsAll(ctx, home, n, follow, w, poll)
	if err == nil && watchers == 0 {
		return fmt.Errorf("no watcher has a log under %s (omega-monitor status shows the watchers)", home)
	}
	return err
}

func logsAll(ctx context.Context, home string, n int, follow bool, w io.Writer, poll time.Duration) (watchers int, err error) {
	entries, err := os.ReadDir(home)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var mu sync.Mutex // one line at a time reaches w
	var wg sync.WaitGroup
	errs := make(chan error, len(entries))
	for _, e := range entries {
		t, ok := ReadTarget(home, e.Name())
		d := statedir.Dir(home).Path(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		lw := &linePrefixer{prefix: []byte("[" + t.String() + "] "), w: w, mu: &mu}
		offset, err := statedir.Dir(d).TailLog(n, lw)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return watchers, err
		}
		watchers++
		if follow {
			wg.Go(func() {
				if err := statedir.Dir(d).FollowLog(ctx, offset, lw, poll, nil, nil); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	return watchers, <-errs
}

// A linePrefixer writes whole lines to w, each after prefix; a part of a
// line waits for its end.
type linePrefixer struct {
	prefix []byte
	w      io.Writer
	mu     *sync.Mutex
	part   []byte
}

func (p *linePrefixer) Write(b []byte) (int, error) {
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.mu.Lock()
		_, err := p.w.Write(append(append([]byte(nil), p.prefix...), p.part[:i+1]...))
		p.mu.Unlock()
		p.part = p.part[i+1:]
		if err != nil {
			return len(b), err
		}
	}
}
