package expect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// AddCase writes a new case of the corpus: base.pane, base.want holding w,
// and base.rules.json when rules is not nil. It never overwrites: a name
// already taken is an error, and a case is written whole or not at all.
func AddCase(base string, pane []byte, w Want, rules []byte) error {
	files := []struct {
		path string
		data []byte
	}{{base + ".pane", pane}, {base + ".want", []byte(w.Format())}}
	if rules != nil {
		files = append(files, struct {
			path string
			data []byte
		}{base + ".rules.json", rules})
	}
	for i, f := range files {
		if err := createNew(f.path, f.data); err != nil {
			for _, done := range files[:i] {
				os.Remove(done.path)
			}
			return err
		}
	}
	return nil
}

// createNew writes a file that must not exist yet.
func createNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("expect: %s exists already; choose another name", path)
	}
	if err != nil {
		return fmt.Errorf("expect: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("expect: %w", err)
	}
	return f.Close()
}
