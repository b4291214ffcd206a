package auditrun

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// A ProjectFS reads a project's files for checking what an auditor cites:
// regular files only (a device never ends, a FIFO never answers), at most
// MaxFile bytes each, and only beneath its directory: a path that leaves
// it, through .. or a symbolic link, is refused, and so is a link as the
// last step. Nothing outside the project is ever opened.
type ProjectFS struct{ root *os.Root }

// OpenProject returns the ProjectFS of dir; Close it when done.
func OpenProject(dir string) (*ProjectFS, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("auditrun: %w", err)
	}
	return &ProjectFS{root: root}, nil
}

// Close releases the directory.
func (p *ProjectFS) Close() error { return p.root.Close() }

// Open opens the regular file name.
func (p *ProjectFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
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
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFile {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("over %d MiB", MaxFile>>20)}
	}
	return b, nil
}
