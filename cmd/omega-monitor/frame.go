package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/tick"
)

// maxStatus bounds the agent's status files a frame may carry, together;
// maxStatusFile bounds one of them (Claude Code's is a few hundred bytes).
const (
	maxStatus     = 1 << 20
	maxStatusFile = 64 << 10
)

// A capture is one poll's screen, with where it was drawn and the agent's
// own status files for that pane.
type capture struct {
	screen   *classify.Screen
	pane     string // session:@window.%pane
	dir      string // the pane's working directory
	statuses [][]byte
	// statusErr says why the one status file given could not be read.
	statusErr error
}

// readCapture reads standard input: a capture frame (coord.CaptureArgs,
// coord.RemoteCapture) when framed, else a bare pane with the pane named by
// paneFlag. The agent's status comes from the frame (read over ssh), from
// the files in statusDir (read here), or from one statusFile.
func readCapture(r io.Reader, framed bool, paneFlag, statusFile, statusDir string) (capture, error) {
	c := capture{pane: paneFlag}
	if !framed {
		s, err := classify.ReadScreen(r)
		if err != nil {
			return c, fmt.Errorf("reading the pane: %v", err)
		}
		c.screen = s
		if statusFile != "" {
			data, err := fsutil.ReadCapped(statusFile, maxStatusFile)
			if err != nil {
				c.statusErr = err // no witness; the screen decides alone
				return c, nil
			}
			c.statuses = [][]byte{data}
		}
		return c, nil
	}
	br := bufio.NewReaderSize(r, 64<<10)
	header, err := br.ReadString('\n')
	if err != nil {
		return c, errors.New("capture frame: no header line (is the session there?)")
	}
	c.pane, c.dir, _ = strings.Cut(strings.TrimRight(header, "\r\n"), "\t")
	var cur bytes.Buffer
	size := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return c, errors.New("capture frame: no pane after the header")
		}
		switch strings.TrimRight(line, "\r\n") {
		case coord.PaneMark:
			s, err := classify.ReadScreen(br)
			if err != nil {
				return c, fmt.Errorf("reading the pane: %v", err)
			}
			c.screen = s
			if statusDir != "" {
				c.statuses = statusFiles(statusDir, c.pane)
				c.statuses = append(c.statuses, codexLogs(c.dir, time.Now())...)
			}
			return c, nil
		case coord.StatusEnd:
			c.statuses = append(c.statuses, bytes.Clone(cur.Bytes()))
			cur.Reset()
			continue
		}
		if size += len(line); size <= maxStatus {
			cur.WriteString(line)
		}
	}
}

// statusFiles reads the agent's status files in dir that name pane.
func statusFiles(dir, pane string) [][]byte {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	mark := []byte(`"tmux":"` + pane + `"`)
	var files [][]byte
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || !e.Type().IsRegular() {
			continue
		}
		data, err := fsutil.ReadCapped(filepath.Join(dir, e.Name()), maxStatusFile)
		if err == nil && bytes.Contains(data, mark) {
			files = append(files, data)
		}
	}
	return files
}

// witness is the agent's freshest own status for the pane, and what to say
// about it; nil when none counts.
func (c capture) witness(now time.Time) (*tick.Witness, string) {
	if c.statusErr != nil {
		return nil, "unreadable (" + c.statusErr.Error() + "): the screen decides alone"
	}
	if len(c.statuses) == 0 {
		return nil, "none"
	}
	w, err := tick.FreshestWitness(c.statuses, c.pane, now)
	if err != nil {
		return nil, err.Error() + ": the screen decides alone"
	}
	return &w, fmt.Sprintf("says %s (written %s)", w.Status, w.Updated.UTC().Format(time.RFC3339))
}
