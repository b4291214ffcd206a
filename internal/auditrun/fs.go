package auditrun

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// A ProjectFS reads a project's files for checking what an auditor cites:
// regular files only (a device never ends, a FIFO never answers), at most
// MaxFile bytes each, and only beneath its directory: a path that leaves
// it, through .. or a symbolic link, is refused, and so is a link as the
// last step. Nothing outside the project is ever opened. A report that
// cites thousands of large files is bounded too: past MaxRead bytes in all,
// or CheckDeadline after it was opened, every further file is refused.
type ProjectFS struct {
	root     *os.Root
	read     int64     // bytes read so far
	budget   int64     // MaxRead
	deadline time.Time // OpenProject's time and CheckDeadline
}

// Bounds of one check's reading.
const (
	MaxRead       = 256 << 20
	CheckDeadline = 2 * time.Minute
)

// OpenProject returns the ProjectFS of dir; Close it when done.
func OpenProject(dir string) (*ProjectFS, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("auditrun: %w", err)
	}
	return &ProjectFS{root: root, budget: MaxRead, deadline: time.Now().Add(CheckDeadline)}, nil
}

// Close releases the directory.
func (p *ProjectFS) Close() error { return p.root.Close() }

// Open opens the regular file name.
func (p *ProjectFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	switch {
	case p.read >= p.budget:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("the check has read its %d MiB", p.budget>>20)}
	case time.Now().After(p.deadline):
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("the check's %v are over", CheckDeadline)}
	}
	f, err := p.root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, err
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("not a regular file (%v)", fi.Mode().Type())}
	}
	return f, nil
}

// ReadFile reads the regular file name, refusing one over MaxFile.
func (p *ProjectFS) ReadFile(name string) ([]byte, error) {
	f, err := p.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	p.read += int64(len(b))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFile {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("over %d MiB", MaxFile>>20)}
	}
	return b, nil
}
