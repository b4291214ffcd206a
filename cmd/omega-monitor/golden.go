package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/goldenadd"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/poll"
)

func runGolden(e *Env, args []string) int {
	if len(args) == 0 || args[0] != "add" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			io.WriteString(e.Stdout, goldenadd.Usage)
			return 0
		}
		return e.usageError("golden", "golden add NAME --want STATE < pane")
	}
	fs := newFlagSet("golden add")
	want := fs.String("want", "", "expected state")
	var work cmdline.Optional
	fs.Var(&work, "work", "work probe output")
	hold := fs.String("hold", "", "why nothing may be typed")
	why := fs.String("why", "", "what the case proves")
	dir := fs.String("dir", filepath.Join("golden", "panes"), "corpus directory")
	rulesPath := fs.String("rules", "", "an operator's rules file the case is read with; kept beside it as NAME.rules.json")
	// The name may come before or after the flags.
	rest := args[1:]
	var name string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	}
	positional, code, ok := e.parse(fs, rest, goldenadd.Usage)
	if !ok {
		return code
	}
	if name == "" && len(positional) > 0 {
		name = positional[0]
	} else if len(positional) > 0 {
		return e.exitf(2, "omega-monitor golden add: unexpected argument %q", positional[0])
	}
	req := goldenadd.Request{Name: name, Want: *want, Hold: *hold, Why: *why, Dir: *dir, Work: work.Value, HasWork: work.Given}
	if _, err := req.Check(); err != nil {
		why := err.Error()
		if u := (*goldenadd.UsageError)(nil); errors.As(err, &u) {
			why = u.Why
		}
		return e.exitf(2, "omega-monitor golden add: %s", why)
	}
	if *rulesPath != "" {
		// The rules are checked as a watcher's are: the user's own file.
		var err error
		if req.Rules, req.RulesData, err = poll.ReadRulesData(*rulesPath); err == nil && req.Rules == nil {
			err = fmt.Errorf("%s: no such file", *rulesPath)
		}
		if err != nil {
			return e.exitf(1, "omega-monitor golden add: --rules: %v", err)
		}
	}
	said, warning, err := goldenadd.Add(req, e.Stdin, poll.ClassifyOptions(work.Value, work.Given, nil))
	if warning != "" {
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: %s\n", warning)
	}
	if err != nil {
		return e.exitf(1, "omega-monitor golden add: %s", pkgerr.Why(err))
	}
	io.WriteString(e.Stdout, said)
	return 0
}
