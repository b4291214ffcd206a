package poll

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/tick"
)

// A OnceRequest is watch --once: one poll's judgement of a capture, as a
// watcher's would be past its first look, in a state of its own held in
// memory: nothing is written, typed or paged.
type OnceRequest struct {
	Settings Settings
	Readings Readings
	Local    *classify.Local
	Capture  capture.Options
	Now      time.Time
}

// Once judges the capture frame and writes to w what a watcher would make
// of it: the verdict and its explanation, the probes' readings, the
// MONITOR line, and what it would type and page. It writes nothing else
// anywhere.
func Once(r OnceRequest, frame io.Reader, w io.Writer) error {
	c, err := capture.Read(frame, r.Capture)
	captureErr := ""
	if err != nil {
		captureErr = err.Error()
	}
	witness := func(agent string) (*tick.Witness, string) {
		if captureErr != "" {
			return nil, "none"
		}
		return witnessFor(c, r.Local, agent, r.Now)
	}
	look := looking{cfg: config(r.Settings, r.Readings), readings: r.Readings, local: r.Local, account: localAccount(c, r.Local, r.Settings.Target)}
	// A state past the watcher's first look (a poll already made), so
	// that the verdict is the one the next poll would act on.
	prev := tick.State{Polls: 1, Version: tick.StateVersion}
	prev.Budget.Limit = r.Settings.NudgeBudget
	_, out, in, said := look.judge(prev, r.Now, c.Screen, captureErr, nil, witness, c.Humans, false, c.Title)
	if captureErr != "" {
		fmt.Fprintf(w, "no screen: %s\n", captureErr)
	} else {
		io.WriteString(w, in.Screen.Explain())
	}
	fmt.Fprintf(w, "  witness:  %s\n", said)
	fmt.Fprintf(w, "  probes:   work %s, progress %s\n", reading(r.Readings.Work), reading(r.Readings.Progress))
	line := out.Line
	if held, ok := out.Held(); ok {
		// Nothing is typed: the line says what would be.
		line = held.Say("would be " + held.Nudge)
	}
	fmt.Fprintf(w, "\n%s\n", line)
	acted := false
	for _, a := range out.Actions {
		switch a.Kind {
		case tick.Nudge:
			fmt.Fprintf(w, "would type: %q, then Enter, once a fresh capture still shows this screen\n", a.Text)
		case tick.Enter:
			fmt.Fprintf(w, "would press Enter: %q is in the input box already\n", a.Text)
		case tick.Alert:
			fmt.Fprintf(w, "would page: %s\n", a.Alert.FirstLine())
		case tick.Wait:
			fmt.Fprintf(w, "would look again in %v, and act on what is there then (a question still up is paged)\n", a.Wait)
		default:
			continue
		}
		acted = true
	}
	if !acted {
		fmt.Fprintln(w, "would type nothing and page nothing")
	}
	fmt.Fprintln(w, "(a dry run: nothing was typed, paged or written; omega-monitor TARGET starts the watcher)")
	return nil
}

// reading is a probe's reading as the line says it, or why there is none.
func reading(p ProbeReading) string {
	switch {
	case p.Error != "":
		return "failed (" + p.Error + ")"
	case !p.Given:
		return "none"
	}
	return strings.TrimSpace(p.Output)
}
