package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckFile refuses to record into a file that is not an echo ledger:
// a non-empty file whose first line is not the ledger's sentinel (a README
// pointed at by mistake lost its blank lines to the rewrite), or a file in a
// directory that does not exist (created silently, it hides a typo).
func CheckFile(path string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("no directory %s for the ledger %s (create it first)", dir, path)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (a directory or a device), not an echo ledger", path)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(Sentinel)+1)
	n, err := io.ReadFull(f, head)
	if n == 0 && (err == io.EOF || err == nil) {
		return nil // an empty file: a ledger not yet written
	}
	if !bytes.Equal(head[:n], []byte(Sentinel+"\n")) {
		return fmt.Errorf("%s is not an echo ledger (its first line is not the ledger's sentinel); refusing to rewrite it", path)
	}
	return nil
}
