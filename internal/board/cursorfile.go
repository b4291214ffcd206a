package board

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// LoadCursors reads the cursors the last census of root kept; a missing
// or corrupt file is a fresh start, where only the +new figures are lost.
func LoadCursors(root string) *Cursors {
	c := &Cursors{}
	if data, err := os.ReadFile(filepath.Join(root, statedir.BoardCursors)); err == nil {
		json.Unmarshal(data, c) // a corrupt file is a fresh start: only +new is lost
	}
	return c
}

// SaveCursors keeps the cursors for the next run; a root the board cannot
// write to costs only the +new figures.
func SaveCursors(root string, c *Cursors) {
	data, err := json.Marshal(c)
	if err != nil {
		return
	}
	if _, err := os.Stat(root); err != nil {
		return
	}
	atomicfile.Write(filepath.Join(root, statedir.BoardCursors), data, 0o600)
}
