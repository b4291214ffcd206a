// Package hosts puts the boards of other machines on this one: it reads
// each host's census over ssh (the host's own omega-monitor status
// --json, one bounded round trip a host a refresh, through a ControlMaster
// of the board's), checks and cleans what came back, and merges it with
// this machine's census (board.Merge). It is the one part of the read side
// that runs anything: ssh, read-only on the host. A host that hangs or
// lies costs the board that host's row, never the board.
//
// Beyond the census, it reads one watcher's history, verdict or log for
// the MCP server (Board.Watcher): this machine's from its state home,
// another host's through one bounded ssh call to that host's own
// omega-monitor read-watcher (ServeWatcher), whose answer is checked and
// cleaned as a board's is.
package hosts

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/printable"
)

// File is the hosts file of the state home: one ssh alias a line; blank
// lines and lines starting with '#' are skipped, and so is what follows a
// '#' on a line.
const File = "hosts"

// MaxHosts is the most hosts one board reads; maxFile bounds the hosts
// file.
const (
	MaxHosts = 64
	maxFile  = 64 << 10
)

// ParseList reads the hosts of a flag: aliases separated by commas. A
// name that is not a safe ssh alias (one starting with '-' would be read
// by ssh as an option) is an error (a *pkgerr.Error).
func ParseList(s string) ([]string, error) {
	var out []string
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if err := checkAlias(name); err != nil {
			return nil, &pkgerr.Error{Pkg: "hosts", Err: fmt.Errorf("--hosts: %w", err)}
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) > MaxHosts {
		return nil, pkgerr.New("hosts", fmt.Sprintf("--hosts: %d hosts, more than %d", len(out), MaxHosts))
	}
	return out, nil
}

// checkAlias says why name is not a safe ssh alias, in an operator's
// words (coord.CheckHost), or nil.
func checkAlias(name string) error {
	var unsafe *coord.UnsafeError
	if err := coord.CheckHost(name); errors.As(err, &unsafe) {
		return errors.New(unsafe.Why())
	} else if err != nil {
		return err
	}
	return nil
}

// ReadFile reads the hosts file at path. A missing file is no host. A line
// that is not a safe alias is left out and named in the errors, as the
// census names what it cannot read, and the other lines still count.
func ReadFile(path string) ([]string, []board.Error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []board.Error{{Path: path, Error: err.Error()}}
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, []board.Error{{Path: path, Error: "not a regular file"}}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, []board.Error{{Path: path, Error: err.Error()}}
	}
	var errs []board.Error
	if len(data) > maxFile {
		data = data[:bytes.LastIndexByte(data[:maxFile], '\n')+1]
		errs = append(errs, board.Error{Path: path, Error: fmt.Sprintf("longer than %d bytes: the rest is not read", maxFile)})
	}
	return parseFile(path, data, errs)
}

func parseFile(path string, data []byte, errs []board.Error) ([]string, []board.Error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxFile+1)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		name := strings.TrimSpace(line)
		switch err := checkAlias(name); {
		case name == "" || slices.Contains(out, name):
		case err != nil:
			errs = append(errs, board.Error{Path: fmt.Sprintf("%s:%d", path, n), Error: printable.String(err.Error())})
		case len(out) == MaxHosts:
			errs = append(errs, board.Error{Path: fmt.Sprintf("%s:%d", path, n), Error: fmt.Sprintf("more than %d hosts: %s is not read", MaxHosts, name)})
		default:
			out = append(out, name)
		}
	}
	return out, errs
}
