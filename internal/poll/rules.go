package poll

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// maxRulesFile caps a rules file: a few hundred rules fit in far less.
const maxRulesFile = 1 << 20

// ReadRules reads and parses an operator's rules file; nil and no error
// when there is none.
func ReadRules(path string) (*classify.Local, error) {
	l, _, err := ReadRulesData(path)
	return l, err
}

// ReadRulesData is ReadRules, with the file's bytes (for a golden case
// that keeps the rules it needs beside it).
func ReadRulesData(path string) (*classify.Local, []byte, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	// The rules decide which screens may be typed into: only a file of
	// the user's own, that nobody else can write, counts.
	if err := statedir.CheckOwnFile(path); err != nil {
		return nil, nil, errors.New(pkgerr.Why(err))
	}
	data, err := fsutil.ReadCapped(path, maxRulesFile)
	if err != nil {
		return nil, nil, err
	}
	l, err := classify.ParseLocal(data, path)
	if err != nil {
		return nil, nil, errors.New(pkgerr.Why(err))
	}
	return l, data, nil
}

// RulesPath is the watchers' rules file in the state home of the
// environment getenv reads.
func RulesPath(getenv func(string) string) (string, error) {
	home, err := statedir.Home(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, statedir.Rules), nil
}

// WatcherRules returns the watchers' rules file, parsed, for a poll or a
// classifying command. A bad file is an error to report; the built-in
// rules apply.
func WatcherRules(getenv func(string) string) (*classify.Local, error) {
	path, err := RulesPath(getenv)
	if err != nil {
		return nil, nil
	}
	return ReadRules(path)
}
